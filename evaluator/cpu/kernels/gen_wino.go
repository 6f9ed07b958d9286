//go:build ignore

package main

// gen_wino writes the Winograd transform kernels (conv_winograd.go) for
// AVX-512 and AVX2: wino_amd64.s, with the argument-block offsets
// wgargs_amd64.h. Each kernel is the twin of a Go function (wgInGo, wgOutGo,
// wgStoreGo) with the same expression trees (separate mul/add/sub, the left
// operand of each as the first source), so the results are the same bits;
// the AVX2 kernels' arithmetic is the AVX-512 ones' at 8 lanes.

import (
	"fmt"
	"os"
	"strings"
)

// Field offsets of wgArgs and wgRun (slices are 24 bytes); TestWgArgsLayout
// checks them against the Go structs.
var wgFields = []struct {
	name string
	off  int
}{
	{"WG_DST", 0}, {"WG_SRC", 24}, {"WG_BIAS", 48}, {"WG_RUNS", 72}, {"WG_NRUN", 80},
	{"WG_DOFF", 96}, {"WG_SOFF", 104}, {"WG_CNT", 112}, {"WG_ROWS", 120}, {"WG_DROW", 128},
	{"WG_SROW", 136}, {"WG_DXI", 144}, {"WG_SXI", 152}, {"WG_PLANE", 160}, {"WG_WQ", 168},
	{"WG_BOFF", 176}, {"WG_ACT", 184},
	{"RUN_SRC", 0}, {"RUN_DST", 4}, {"RUN_LANE", 8}, {"RUN_CNT", 12}, {"RUN_ROWS", 16}, {"RUN_N", 20},
}

type wg struct {
	sb   strings.Builder
	four string // the operand 4 of the products: a register, or memory (AVX2)
}

func (g *wg) p(format string, args ...any) { fmt.Fprintf(&g.sb, format+"\n", args...) }

func z(i int) string { return fmt.Sprintf("Z%d", i) }

// Registers holding constants in the transforms.
const (
	rFour = 12
	rTmp  = 13
)

// sub, add: dst = a − b, a + b (a the first source, whose NaN the result
// is when both are NaN). Go does not say which operand's NaN a sum keeps;
// the additions below take the operands in the order go1.26 compiles the
// Go twins' (t2 + t1 for t1 + t2, say), so that NaN payloads match too.
func (g *wg) sub(a, b, dst string) { g.p("\tVSUBPS %s, %s, %s", b, a, dst) }
func (g *wg) add(a, b, dst string) { g.p("\tVADDPS %s, %s, %s", b, a, dst) }

// in1D emits the 1-D input transform (wgIn4, wgIn6) of x into out, only for
// the outputs i with want[i]; temporaries t (at least 4), out distinct from
// x and t.
func (g *wg) in1D(n int, x, out []string, want []bool, t []string) {
	if n == 4 {
		if want[0] {
			g.sub(x[0], x[2], out[0])
		}
		if want[1] {
			g.add(x[1], x[2], out[1])
		}
		if want[2] {
			g.sub(x[2], x[1], out[2])
		}
		if want[3] {
			g.sub(x[3], x[1], out[3])
		}
		return
	}
	four := g.four
	t1, t2, t3, t4 := t[0], t[1], t[2], t[3]
	if want[1] || want[2] {
		g.p("\tVMULPS %s, %s, %s", four, x[2], t1)
		g.sub(x[4], t1, t1) // t1 = x4 − 4·x2
		g.p("\tVMULPS %s, %s, %s", four, x[1], t2)
		g.sub(x[3], t2, t2) // t2 = x3 − 4·x1
		if want[1] {
			g.add(t2, t1, out[1])
		}
		if want[2] {
			g.sub(t1, t2, out[2])
		}
	}
	if want[0] || want[3] || want[4] {
		g.sub(x[4], x[2], t3) // t3
		if want[3] || want[4] {
			g.sub(x[3], x[1], t4)
			g.add(t4, t4, t4) // t4 = 2·(x3 − x1)
			if want[3] {
				g.add(t4, t3, out[3])
			}
			if want[4] {
				g.sub(t3, t4, out[4])
			}
		}
		if want[0] {
			g.sub(x[0], x[2], t1)
			g.p("\tVMULPS %s, %s, %s", four, t1, t1)
			g.add(t1, t3, out[0]) // 4·(x0 − x2) + t3
		}
	}
	if want[5] {
		g.sub(x[1], x[3], t1)
		g.p("\tVMULPS %s, %s, %s", four, t1, t1)
		g.sub(x[5], x[3], t2)
		g.add(t2, t1, out[5]) // 4·(x1 − x3) + (x5 − x3)
	}
}

// out1D emits the 1-D output transform (wgOut4, wgOut6): y0, y1 from m;
// temporaries t (at least 4), y0 and y1 distinct from m and t.
func (g *wg) out1D(n int, m []string, y0, y1 string, t []string) {
	if n == 4 {
		g.add(m[0], m[1], t[0])
		g.add(t[0], m[2], y0)
		g.sub(m[1], m[2], t[1])
		g.add(t[1], m[3], y1)
		return
	}
	s12, d12, s34, d34 := t[0], t[1], t[2], t[3]
	g.add(m[1], m[2], s12)
	g.sub(m[1], m[2], d12)
	g.add(m[4], m[3], s34)
	g.sub(m[3], m[4], d34)
	g.add(s12, m[0], s12)
	g.add(s12, s34, y0) // (m0 + s12) + s34
	g.add(d34, d34, d34)
	g.add(d12, d34, d12)
	g.add(d12, m[5], y1) // (d12 + 2·d34) + m5
}

// genIn emits wgIn<n>_512(t *wgArgs): for each channel, vectors of 16
// lanes while lanes remain. The 2-D transform runs over groups of output
// rows i of the first pass (all of them for n = 4; {0, 3, 4} and {1, 2, 5}
// for n = 6, which share no intermediate, so that the held values fit in
// the registers): the first pass (along i, per column j) keeps the group's
// rows in Z14..Z31, the second (along j) stores each row.
func (g *wg) genIn(n int) {
	name := fmt.Sprintf("wgIn%d_512", n)
	L := func(s string) string { return fmt.Sprintf("wgin%d_%s", n, s) }
	g.p("// func %s(t *wgArgs)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	g.prologue(L("done"), inStrides)
	g.p("\tVBROADCASTSS ·wgFour(SB), %s", z(rFour))
	g.p("%s:", L("chan"))
	g.vecStart(L("vec"))
	groups := [][]int{{0, 1, 2, 3}}
	if n == 6 {
		groups = [][]int{{0, 3, 4}, {1, 2, 5}}
	}
	for _, grp := range groups {
		want := make([]bool, n)
		slot := make([]int, n) // held row of output i
		for k, i := range grp {
			want[i] = true
			slot[i] = k
		}
		// Inputs of the first pass this group reads.
		need := make([]bool, n)
		if n == 4 {
			for i := range need {
				need[i] = true
			}
		} else if grp[0] == 0 {
			need[0], need[1], need[2], need[3], need[4] = true, true, true, true, true
		} else {
			need[1], need[2], need[3], need[4], need[5] = true, true, true, true, true
		}
		held := func(k, j int) string { return z(14 + k*n + j) }
		for j := range n {
			x := make([]string, n)
			for i := range n {
				x[i] = z(i)
			}
			g.loadCol(j, x, need)
			out := make([]string, n)
			for i := range n {
				if want[i] {
					out[i] = held(slot[i], j)
				}
			}
			g.in1D(n, x, out, want, []string{z(6), z(7), z(8), z(9)})
		}
		for _, i := range grp {
			x := make([]string, n)
			out := make([]string, n)
			all := make([]bool, n)
			for j := range n {
				x[j] = held(slot[i], j)
				out[j] = z(j)
				all[j] = true
			}
			g.in1D(n, x, out, all, []string{z(6), z(7), z(8), z(9)})
			g.storeRow(i, out)
		}
	}
	g.loopEnd(L, 64, 16, "CX", "chan")
}

// genOut emits wgOut<n>_512(t *wgArgs): for each row, vectors of 16 lanes
// while lanes remain: the first pass (along ξi, per column ξj) keeps z[a][j]
// in Z18..Z29, the second gives the four outputs, then bias and the
// activation (as the micro-kernels': max(0, x) and max(0.01·x, x) with x as
// the second source, which keeps −0 and NaN as the Go twin's v < 0 does).
// The bias pointer and the rows left live in the frame.
func (g *wg) genOut(n int) {
	name := fmt.Sprintf("wgOut%d_512", n)
	L := func(s string) string { return fmt.Sprintf("wgout%d_%s", n, s) }
	g.p("// func %s(t *wgArgs)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $16-8", name)
	g.outPrologue(n, L("done"))
	g.p("\tVPXORD Z15, Z15, Z15")
	g.p("\tVBROADCASTSS ·leakySlope(SB), Z16")
	g.p("%s:", L("row"))
	g.p("\tMOVQ bp-8(SP), CX")
	g.p("\tVBROADCASTSS (CX), Z14")
	g.p("\tADDQ $4, CX")
	g.p("\tMOVQ CX, bp-8(SP)")
	g.vecStart(L("vec"))
	zr := func(a, j int) string { return z(18 + a*6 + j) }
	g.p("\tMOVQ BX, CX")
	for j := range n {
		if j > 0 {
			g.p("\tADDQ R11, CX")
		}
		m := make([]string, n)
		for i := range n {
			m[i] = z(i)
			// ξ = i·n + j: CX = column j.
			g.p("\tVMOVUPS (CX)%s, %s", outCol(i), m[i])
		}
		g.out1D(n, m, zr(0, j), zr(1, j), []string{z(6), z(7), z(8), z(9)})
	}
	// y[a][b] in Z0..Z3.
	for a := range 2 {
		m := make([]string, n)
		for j := range n {
			m[j] = zr(a, j)
		}
		g.out1D(n, m, z(2*a), z(2*a+1), []string{z(6), z(7), z(8), z(9)})
	}
	for k := range 4 {
		g.add(z(k), "Z14", z(k))
	}
	g.p("\tMOVQ t+0(FP), CX")
	g.p("\tMOVQ WG_ACT(CX), CX")
	g.p("\tCMPQ CX, $1")
	g.p("\tJEQ %s", L("relu"))
	g.p("\tCMPQ CX, $2")
	g.p("\tJNE %s", L("store"))
	for k := range 4 {
		g.p("\tVMULPS Z16, %s, %s", z(k), z(6+k))
		g.p("\tVMAXPS %s, %s, %s", z(k), z(6+k), z(k))
	}
	g.p("\tJMP %s", L("store"))
	g.p("%s:", L("relu"))
	for k := range 4 {
		g.p("\tVMAXPS %s, Z15, %s", z(k), z(k))
	}
	g.p("%s:", L("store"))
	g.storeOut([]string{z(0), z(1), z(2), z(3)})
	g.loopEnd(L, 64, 16, "rows-16(SP)", "row")
}

// genStore emits wgStore512(t *wgArgs) (avx2 false) or wgStore256: for
// each output channel, run and output row, the two source rows interleaved
// 32 outputs at a time (VPERMI2PS with wgLoIdx and wgHiIdx; on AVX2 16 at a
// time, VUNPCKLPS and VUNPCKHPS then VPERM2F128), the last chunk's loads
// and stores masked to the run's n outputs (on AVX2 the loads by
// VMASKMOVPS with masks from wgMask, the stores in pieces).
func (g *wg) genStore(avx2 bool) {
	name, L := "wgStore512", func(s string) string { return "wgst_" + s }
	if avx2 {
		name, L = "wgStore256", func(s string) string { return "wgst256_" + s }
	}
	g.p("// func %s(t *wgArgs)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	g.p("\tMOVQ t+0(FP), DI")
	g.p("\tMOVQ WG_ROWS(DI), R12")
	g.p("\tTESTQ R12, R12")
	g.p("\tJLE %s", L("done"))
	g.p("\tMOVQ WG_NRUN(DI), AX")
	g.p("\tTESTQ AX, AX")
	g.p("\tJLE %s", L("done"))
	g.p("\tMOVQ WG_DST(DI), R8")
	g.p("\tMOVQ WG_SRC(DI), R9")
	g.p("\tMOVQ WG_DROW(DI), R13")
	g.p("\tSHLQ $2, R13")
	g.p("\tMOVQ WG_SROW(DI), R14")
	g.p("\tSHLQ $2, R14")
	if avx2 {
		g.p("\tLEAQ ·wgMask(SB), BX")
	} else {
		g.p("\tVMOVDQU32 ·wgLoIdx(SB), Z30")
		g.p("\tVMOVDQU32 ·wgHiIdx(SB), Z31")
	}
	g.p("%s:", L("chan"))
	g.p("\tMOVQ t+0(FP), AX")
	g.p("\tMOVQ WG_RUNS(AX), R10")
	g.p("\tMOVQ WG_NRUN(AX), R11")
	g.p("%s:", L("run"))
	for a := range 2 {
		if a == 1 {
			g.p("\tCMPL RUN_ROWS(R10), $2")
			g.p("\tJLT %s", L("next"))
		}
		// SI: source row 2a, DI: 2a+1, DX: output row a, CX: outputs.
		g.p("\tMOVLQSX RUN_LANE(R10), AX")
		g.p("\tLEAQ (R9)(AX*4), SI")
		g.p("\tMOVQ t+0(FP), AX")
		g.p("\tMOVQ WG_SXI(AX), AX")
		if a == 1 {
			g.p("\tLEAQ (SI)(AX*8), SI")
		}
		g.p("\tLEAQ (SI)(AX*4), DI")
		g.p("\tMOVLQSX RUN_DST(R10), AX")
		g.p("\tLEAQ (R8)(AX*4), DX")
		if a == 1 {
			g.p("\tMOVQ t+0(FP), AX")
			g.p("\tMOVQ WG_WQ(AX), AX")
			g.p("\tLEAQ (DX)(AX*4), DX")
		}
		g.p("\tMOVLQSX RUN_N(R10), CX")
		g.p("%s%d:", L("vec"), a)
		if avx2 {
			g.p("\tCMPQ CX, $16")
			g.p("\tJLT %s%d", L("tail"), a)
			g.p("\tVMOVUPS (SI), Y0")
			g.p("\tVMOVUPS (DI), Y1")
			g.interleave256()
			g.p("\tVMOVUPS Y0, (DX)")
			g.p("\tVMOVUPS Y1, 32(DX)")
			g.p("\tADDQ $32, SI")
			g.p("\tADDQ $32, DI")
			g.p("\tADDQ $64, DX")
			g.p("\tSUBQ $16, CX")
			g.p("\tJMP %s%d", L("vec"), a)
			g.p("%s%d:", L("tail"), a)
			g.p("\tTESTQ CX, CX")
			g.p("\tJLE %s%d", L("row"), a)
			// wgMask[16−k : 24−k] is the mask of the first k lanes of 8
			// (k ≤ 16): Y4 that of the ⌈rem/2⌉ inputs of a row. Masked
			// stores are slow: the rem < 16 outputs are stored in pieces
			// of 8, 4, 2 and 1 (VMOVQ and VMOVSS move the bits as they
			// are).
			g.p("\tLEAQ 1(CX), AX")
			g.p("\tSHRQ $1, AX")
			g.p("\tNEGQ AX")
			g.p("\tVMOVDQU 64(BX)(AX*4), Y4")
			g.p("\tVMASKMOVPS (SI), Y4, Y0")
			g.p("\tVMASKMOVPS (DI), Y4, Y1")
			g.interleave256()
			g.p("\tCMPQ CX, $8")
			g.p("\tJLT %s%d", L("lt8"), a)
			g.p("\tVMOVUPS Y0, (DX)")
			g.p("\tSUBQ $8, CX")
			g.p("\tJEQ %s%d", L("row"), a)
			g.p("\tVMOVAPS Y1, Y0")
			g.p("\tADDQ $32, DX")
			g.p("%s%d:", L("lt8"), a)
			g.p("\tCMPQ CX, $4")
			g.p("\tJLT %s%d", L("lt4"), a)
			g.p("\tVMOVUPS X0, (DX)")
			g.p("\tVEXTRACTF128 $1, Y0, X0")
			g.p("\tADDQ $16, DX")
			g.p("\tSUBQ $4, CX")
			g.p("\tJEQ %s%d", L("row"), a)
			g.p("%s%d:", L("lt4"), a)
			g.p("\tCMPQ CX, $2")
			g.p("\tJLT %s%d", L("lt2"), a)
			g.p("\tVMOVQ X0, (DX)")
			g.p("\tVMOVHLPS X0, X0, X0")
			g.p("\tADDQ $8, DX")
			g.p("\tSUBQ $2, CX")
			g.p("\tJEQ %s%d", L("row"), a)
			g.p("%s%d:", L("lt2"), a)
			g.p("\tVMOVSS X0, (DX)")
			g.p("%s%d:", L("row"), a)
			continue
		}
		g.p("\tCMPQ CX, $32")
		g.p("\tJLT %s%d", L("tail"), a)
		g.p("\tVMOVUPS (SI), Z0")
		g.p("\tVMOVUPS (DI), Z1")
		g.p("\tVMOVAPS Z30, Z2")
		g.p("\tVPERMI2PS Z1, Z0, Z2")
		g.p("\tVMOVAPS Z31, Z3")
		g.p("\tVPERMI2PS Z1, Z0, Z3")
		g.p("\tVMOVUPS Z2, (DX)")
		g.p("\tVMOVUPS Z3, 64(DX)")
		g.p("\tADDQ $64, SI")
		g.p("\tADDQ $64, DI")
		g.p("\tADDQ $128, DX")
		g.p("\tSUBQ $32, CX")
		g.p("\tJMP %s%d", L("vec"), a)
		g.p("%s%d:", L("tail"), a)
		g.p("\tTESTQ CX, CX")
		g.p("\tJLE %s%d", L("row"), a)
		// K1, K2: the rem < 32 outputs; K3: the ⌈rem/2⌉ inputs of a row.
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K1")
		g.p("\tSHRQ $16, AX")
		g.p("\tKMOVW AX, K2")
		g.p("\tINCQ CX")
		g.p("\tSHRQ $1, CX")
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K3")
		g.p("\tVMOVUPS.Z (SI), K3, Z0")
		g.p("\tVMOVUPS.Z (DI), K3, Z1")
		g.p("\tVMOVAPS Z30, Z2")
		g.p("\tVPERMI2PS Z1, Z0, Z2")
		g.p("\tVMOVAPS Z31, Z3")
		g.p("\tVPERMI2PS Z1, Z0, Z3")
		g.p("\tVMOVUPS Z2, K1, (DX)")
		g.p("\tVMOVUPS Z3, K2, 64(DX)")
		g.p("%s%d:", L("row"), a)
	}
	g.p("%s:", L("next"))
	g.p("\tADDQ $32, R10")
	g.p("\tDECQ R11")
	g.p("\tJNE %s", L("run"))
	g.p("\tADDQ R13, R8")
	g.p("\tADDQ R14, R9")
	g.p("\tDECQ R12")
	g.p("\tJNE %s", L("chan"))
	g.p("%s:", L("done"))
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// interleave256 interleaves Y0 = a0..a7 and Y1 = b0..b7 into Y0 = a0 b0 …
// a3 b3 and Y1 = a4 b4 … a7 b7 (moves only: the bits as they are).
func (g *wg) interleave256() {
	g.p("\tVUNPCKLPS Y1, Y0, Y2") // a0 b0 a1 b1 | a4 b4 a5 b5
	g.p("\tVUNPCKHPS Y1, Y0, Y3") // a2 b2 a3 b3 | a6 b6 a7 b7
	g.p("\tVPERM2F128 $0x20, Y3, Y2, Y0")
	g.p("\tVPERM2F128 $0x31, Y3, Y2, Y1")
}

func y(i int) string { return fmt.Sprintf("Y%d", i) }

// inStrides are the byte strides the input transforms keep in registers.
var inStrides = [][2]string{{"PLANE", "R10"}, {"WQ", "R11"}, {"SROW", "R12"}, {"DROW", "R13"}, {"DXI", "R14"}}

// prologue loads the pointers and strides of the transforms: R8 src +
// sOff, R9 dst + dOff, and the byte strides of strides (field, register);
// it jumps to done where there are no rows or lanes.
func (g *wg) prologue(done string, strides [][2]string) {
	g.p("\tMOVQ t+0(FP), DI")
	g.p("\tMOVQ WG_ROWS(DI), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJLE %s", done)
	g.p("\tMOVQ WG_CNT(DI), AX")
	g.p("\tTESTQ AX, AX")
	g.p("\tJLE %s", done)
	g.p("\tMOVQ WG_SRC(DI), R8")
	g.p("\tMOVQ WG_SOFF(DI), AX")
	g.p("\tLEAQ (R8)(AX*4), R8")
	g.p("\tMOVQ WG_DST(DI), R9")
	g.p("\tMOVQ WG_DOFF(DI), AX")
	g.p("\tLEAQ (R9)(AX*4), R9")
	for _, f := range strides {
		g.p("\tMOVQ WG_%s(DI), %s", f[0], f[1])
		g.p("\tSHLQ $2, %s", f[1])
	}
}

// outPrologue is the output transforms' prologue: the rows and the bias
// pointer in the frame (rows-16, bp-8), the strides, and SI = n·sXi (a
// row of ξ), DI three rows, R10 five.
func (g *wg) outPrologue(n int, done string) {
	g.p("\tMOVQ t+0(FP), DI")
	g.p("\tMOVQ WG_ROWS(DI), CX")
	g.p("\tMOVQ CX, rows-16(SP)")
	g.prologue(done, [][2]string{{"SXI", "R11"}, {"SROW", "R12"}, {"DROW", "R13"}, {"DXI", "R14"}})
	g.p("\tMOVQ WG_BIAS(DI), CX")
	g.p("\tMOVQ WG_BOFF(DI), AX")
	g.p("\tLEAQ (CX)(AX*4), CX")
	g.p("\tMOVQ CX, bp-8(SP)")
	g.p("\tMOVQ $%d, SI", n)
	g.p("\tIMULQ R11, SI")
	g.p("\tLEAQ (SI)(SI*2), DI")
	g.p("\tLEAQ (SI)(SI*4), R10")
}

// vecStart starts a pass over the lanes: BX and DX at the row's source and
// destination, AX the lanes left.
func (g *wg) vecStart(vec string) {
	g.p("\tMOVQ R8, BX")
	g.p("\tMOVQ R9, DX")
	g.p("\tMOVQ t+0(FP), AX")
	g.p("\tMOVQ WG_CNT(AX), AX")
	g.p("%s:", vec)
}

// loopEnd closes the lane loop (vectors of vb bytes, lanes lanes) and the
// outer loop over rows (counter cnt, label outer), then returns.
func (g *wg) loopEnd(L func(string) string, vb, lanes int, cnt, outer string) {
	g.p("\tADDQ $%d, BX", vb)
	g.p("\tADDQ $%d, DX", vb)
	g.p("\tSUBQ $%d, AX", lanes)
	g.p("\tJGT %s", L("vec"))
	g.p("\tADDQ R12, R8")
	g.p("\tADDQ R13, R9")
	g.p("\tDECQ %s", cnt)
	g.p("\tJNE %s", L(outer))
	g.p("%s:", L("done"))
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// loadCol loads column j of an input patch from the phase planes (BX the
// tile's first, R10 the plane, R11 the row stride) into x[i] where need[i].
func (g *wg) loadCol(j int, x []string, need []bool) {
	if j&1 == 0 {
		g.p("\tMOVQ BX, SI")
	} else {
		g.p("\tLEAQ (BX)(R10*1), SI")
	}
	g.p("\tLEAQ (SI)(R10*2), DI")
	for i := range x {
		if !need[i] {
			continue
		}
		ptr := "SI"
		if i&1 == 1 {
			ptr = "DI"
		}
		idx := [...]string{"", "(R11*1)", "(R11*2)"}[i>>1]
		g.p("\tVMOVUPS %d(%s)%s, %s", (j>>1)*4, ptr, idx, x[i])
	}
}

// storeRow stores out[j] at (i·n + j)·dXi from DX: SI walks by dXi (R14),
// three at a time.
func (g *wg) storeRow(i int, out []string) {
	n := len(out)
	g.p("\tMOVQ $%d, SI", i*n)
	g.p("\tIMULQ R14, SI")
	g.p("\tADDQ DX, SI")
	for j := range n {
		if j == 3 {
			g.p("\tLEAQ (SI)(R14*2), SI")
			g.p("\tADDQ R14, SI")
		}
		idx := [...]string{"", "(R14*1)", "(R14*2)"}[j%3]
		g.p("\tVMOVUPS %s, (SI)%s", out[j], idx)
	}
}

// storeOut stores the four outputs y[a][b] of a tile's lanes at DX + (2a +
// b)·dXi.
func (g *wg) storeOut(ys []string) {
	g.p("\tVMOVUPS %s, (DX)", ys[0])
	g.p("\tVMOVUPS %s, (DX)(R14*1)", ys[1])
	g.p("\tVMOVUPS %s, (DX)(R14*2)", ys[2])
	g.p("\tLEAQ (DX)(R14*2), CX")
	g.p("\tVMOVUPS %s, (CX)(R14*1)", ys[3])
}

// outCol is the address suffix of ξ = i·n + j from CX (column j).
func outCol(i int) string {
	return [...]string{"", "(SI*1)", "(SI*2)", "(DI*1)", "(SI*4)", "(R10*1)"}[i]
}

// genIn256 emits wgIn<n>_256(t *wgArgs), the AVX2 twin of genIn's kernel:
// for each channel, vectors of 8 lanes while lanes remain (⌈cnt/8⌉ of
// them: wgLanes(AVX2, cnt)). The first pass runs along i per column j (x
// in Y0..Y5), the second along j per row. With 16 registers, n = 4 takes
// the rows in two groups, {0, 1} (from x0..x2) and {2, 3} (from x1..x3),
// held in Y4..Y11, with the outputs in Y12..Y15; n = 6 (temporaries
// Y6..Y9, outputs Y10..Y15) stores the first pass's rows to the frame,
// (i·n + j)·32(SP), and reloads each row for the second. The operand 4
// comes from memory (wgFour8).
func (g *wg) genIn256(n int) {
	name := fmt.Sprintf("wgIn%d_256", n)
	L := func(s string) string { return fmt.Sprintf("wgin%d_256_%s", n, s) }
	frame := n == 6
	g.p("// func %s(t *wgArgs)", name)
	if frame {
		g.p("TEXT ·%s(SB), 0, $%d-8", name, n*n*32)
	} else {
		g.p("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	}
	g.prologue(L("done"), inStrides)
	g.p("%s:", L("chan"))
	g.vecStart(L("vec"))
	all := make([]bool, n)
	x := make([]string, n)
	out := make([]string, n)
	o0 := 10
	if !frame {
		o0 = 12
	}
	for i := range n {
		all[i] = true
		x[i] = y(i)
		out[i] = y(o0 + i)
	}
	tmp := []string{y(6), y(7), y(8), y(9)}
	groups := [][]int{{0, 1, 2, 3, 4, 5}}
	if !frame {
		groups = [][]int{{0, 1}, {2, 3}}
	}
	for _, grp := range groups {
		want := make([]bool, n)
		need := make([]bool, n)
		held := make([][]string, n) // held[i][j]: row i of the first pass
		for k, i := range grp {
			want[i] = true
			held[i] = make([]string, n)
			for j := range n {
				held[i][j] = y(4 + k*n + j)
			}
		}
		for i := range need {
			need[i] = frame || (grp[0] == 0 && i < 3) || (grp[0] == 2 && i > 0)
		}
		for j := range n {
			g.loadCol(j, x, need)
			if frame {
				g.in1D(n, x, out, want, tmp)
				for _, i := range grp {
					g.p("\tVMOVUPS %s, %d(SP)", out[i], (i*n+j)*32)
				}
				continue
			}
			col := make([]string, n)
			for _, i := range grp {
				col[i] = held[i][j]
			}
			g.in1D(n, x, col, want, tmp)
		}
		for _, i := range grp {
			row := held[i]
			if frame {
				row = x
				for j := range n {
					g.p("\tVMOVUPS %d(SP), %s", (i*n+j)*32, x[j])
				}
			}
			g.in1D(n, row, out, all, tmp)
			g.storeRow(i, out)
		}
	}
	g.loopEnd(L, 32, 8, "CX", "chan")
}

// genOut256 emits wgOut<n>_256(t *wgArgs), the AVX2 twin of genOut's
// kernel: for each row, vectors of 8 lanes (⌈cnt/8⌉ of them): the first
// pass (m in Y0..Y5, temporaries Y6..Y9) gives z[a][j], the second y[a][b]
// from z[a]; the bias in Y14, zero in Y15, and the activation as genOut's.
// n = 6 stores z to the frame, (a·n + j)·32(SP), and reloads z[a] for the
// second pass (y in Y10..Y13); n = 4 holds z in Y4, Y5, Y8..Y13, and the
// second pass leaves y[a][0] in z[a][0]'s register and y[a][1] in
// z[a][3]'s (out1D reads them before). The bias pointer and the rows left
// live at the top of the frame.
func (g *wg) genOut256(n int) {
	name := fmt.Sprintf("wgOut%d_256", n)
	L := func(s string) string { return fmt.Sprintf("wgout%d_256_%s", n, s) }
	g.p("// func %s(t *wgArgs)", name)
	frame := n == 6
	if frame {
		g.p("TEXT ·%s(SB), 0, $%d-8", name, 2*n*32+16)
	} else {
		g.p("TEXT ·%s(SB), NOSPLIT, $16-8", name)
	}
	g.outPrologue(n, L("done"))
	g.p("\tVPXOR Y15, Y15, Y15")
	g.p("%s:", L("row"))
	g.p("\tMOVQ bp-8(SP), CX")
	g.p("\tVBROADCASTSS (CX), Y14")
	g.p("\tADDQ $4, CX")
	g.p("\tMOVQ CX, bp-8(SP)")
	g.vecStart(L("vec"))
	tmp := []string{y(6), y(7), y(8), y(9)}
	m := make([]string, n)
	for i := range n {
		m[i] = y(i)
	}
	zr := [2][]string{{y(4), y(5), y(8), y(9)}, {y(10), y(11), y(12), y(13)}}
	g.p("\tMOVQ BX, CX")
	for j := range n {
		if j > 0 {
			g.p("\tADDQ R11, CX")
		}
		for i := range n {
			// ξ = i·n + j: CX = column j.
			g.p("\tVMOVUPS (CX)%s, %s", outCol(i), m[i])
		}
		if !frame {
			g.out1D(n, m, zr[0][j], zr[1][j], tmp)
			continue
		}
		g.out1D(n, m, y(10), y(11), tmp)
		g.p("\tVMOVUPS Y10, %d(SP)", j*32)
		g.p("\tVMOVUPS Y11, %d(SP)", (n+j)*32)
	}
	// y[a][b] in ys[2a+b].
	ys := []string{y(10), y(11), y(12), y(13)}
	if !frame {
		ys = []string{zr[0][0], zr[0][3], zr[1][0], zr[1][3]}
	}
	for a := range 2 {
		if !frame {
			g.out1D(n, zr[a], ys[2*a], ys[2*a+1], tmp)
			continue
		}
		for j := range n {
			g.p("\tVMOVUPS %d(SP), %s", (a*n+j)*32, m[j])
		}
		g.out1D(n, m, ys[2*a], ys[2*a+1], tmp)
	}
	for _, r := range ys {
		g.add(r, "Y14", r)
	}
	g.p("\tMOVQ t+0(FP), CX")
	g.p("\tMOVQ WG_ACT(CX), CX")
	g.p("\tCMPQ CX, $1")
	g.p("\tJEQ %s", L("relu"))
	g.p("\tCMPQ CX, $2")
	g.p("\tJNE %s", L("store"))
	g.p("\tVBROADCASTSS ·leakySlope(SB), Y6")
	for _, r := range ys {
		g.p("\tVMULPS Y6, %s, Y7", r)
		g.p("\tVMAXPS %s, Y7, %s", r, r)
	}
	g.p("\tJMP %s", L("store"))
	g.p("%s:", L("relu"))
	for _, r := range ys {
		g.p("\tVMAXPS %s, Y15, %s", r, r)
	}
	g.p("%s:", L("store"))
	g.storeOut(ys)
	g.loopEnd(L, 32, 8, "rows-16(SP)", "row")
}

func genWino() {
	var h strings.Builder
	h.WriteString("// Code generated by gen_wino.go; DO NOT EDIT.\n\n")
	for _, f := range wgFields {
		fmt.Fprintf(&h, "#define %s %d\n", f.name, f.off)
	}
	if err := os.WriteFile("wgargs_amd64.h", []byte(h.String()), 0o644); err != nil {
		panic(err)
	}
	g := &wg{four: z(rFour)}
	g.p("// Code generated by gen_wino.go; DO NOT EDIT.\n")
	g.p("//go:build !noasm\n")
	g.p("#include \"textflag.h\"")
	g.p("#include \"wgargs_amd64.h\"\n")
	g.p("DATA ·wgFour+0(SB)/4, $0x40800000 // 4")
	g.p("GLOBL ·wgFour(SB), RODATA|NOPTR, $4")
	for i := range 16 {
		g.p("DATA ·wgLoIdx+%d(SB)/4, $%d", 4*i, i/2+(i&1)*16)
		g.p("DATA ·wgHiIdx+%d(SB)/4, $%d", 4*i, 8+i/2+(i&1)*16)
	}
	g.p("GLOBL ·wgLoIdx(SB), RODATA|NOPTR, $64")
	g.p("GLOBL ·wgHiIdx(SB), RODATA|NOPTR, $64\n")
	g.genIn(4)
	g.genIn(6)
	g.genOut(4)
	g.genOut(6)
	g.genStore(false)
	for i := range 32 {
		v := "0xffffffff"
		if i >= 16 {
			v = "0"
		}
		g.p("DATA ·wgMask+%d(SB)/4, $%s", 4*i, v)
	}
	g.p("GLOBL ·wgMask(SB), RODATA|NOPTR, $128\n")
	g.p("DATA ·wgFour8+0(SB)/8, $0x4080000040800000 // 4 × 8")
	g.p("DATA ·wgFour8+8(SB)/8, $0x4080000040800000")
	g.p("DATA ·wgFour8+16(SB)/8, $0x4080000040800000")
	g.p("DATA ·wgFour8+24(SB)/8, $0x4080000040800000")
	g.p("GLOBL ·wgFour8(SB), RODATA|NOPTR, $32\n")
	g.four = "·wgFour8(SB)"
	g.genIn256(4)
	g.genIn256(6)
	g.genOut256(4)
	g.genOut256(6)
	g.genStore(true)
	if err := os.WriteFile("wino_amd64.s", []byte(g.sb.String()), 0o644); err != nil {
		panic(err)
	}
}
