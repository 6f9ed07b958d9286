//go:build ignore

// The pooling, deinterleaving and im2col packing kernels of vec_amd64.s (see
// gen_vec.go for the emitter).

package main

import "fmt"

// genPool: the 2×2 stride-2 pool over whole planes (pool2x2Go per row),
// each row finished with masked vectors (opmasks for AVX-512, lane masks
// from the caller for AVX2).
func (g *vg) genPool() {
	s := g.is.suffix
	L := g.is.lanes
	R := g.R
	if g.zmm() {
		g.p("// func pool2x2_%s(isMax int, out, in []float32, planes, oh, ow, w int)", s)
		g.p("TEXT ·pool2x2_%s(SB), NOSPLIT, $0-88", s)
	} else {
		g.p("// func pool2x2_%s(isMax int, out, in []float32, planes, oh, ow, w int, masks *[24]int32)", s)
		g.p("TEXT ·pool2x2_%s(SB), NOSPLIT, $0-96", s)
		g.p("\tMOVQ masks+88(FP), AX")
		g.p("\tVMOVDQU (AX), Y9")
		g.p("\tVMOVDQU 32(AX), Y10")
		g.p("\tVMOVDQU 64(AX), Y11")
	}
	g.p("\tMOVQ out_base+8(FP), DI")
	g.p("\tMOVQ in_base+32(FP), SI")
	g.p("\tMOVQ planes+56(FP), R8")
	g.p("\tMOVQ oh+64(FP), R9")
	g.p("\tMOVQ ow+72(FP), R10")
	g.p("\tMOVQ w+80(FP), R11")
	g.p("\tSHLQ $2, R11") // row stride, bytes
	g.p("\tMOVQ R9, AX")
	g.p("\tIMULQ R8, AX")
	g.p("\tMOVQ AX, R8") // rows in all
	// Rows follow each other: the caller makes sure that h = 2·oh, or
	// passes one plane at a time.
	g.p("\tMOVQ R10, R13")
	g.p("\tSHRQ $%d, R13", map[int]int{16: 4, 8: 3}[L]) // full vectors per row
	if g.zmm() {
		// Tail masks: K2 for the rem outputs, K3/K4 for the 2·rem inputs.
		g.p("\tMOVQ R10, CX")
		g.p("\tANDQ $15, CX")
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K2")
		g.p("\tSHLQ $1, CX")
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K3")
		g.p("\tSHRQ $16, AX")
		g.p("\tKMOVW AX, K4")
		g.p("\tVMOVDQU32 ·evenIdx(SB), Z14")
		g.p("\tVMOVDQU32 ·oddIdx(SB), Z15")
	}
	g.ld("quarter", 13)
	g.p("\tMOVQ isMax+0(FP), R12")
	g.p("pool%s_row:", s)
	g.p("\tMOVQ SI, AX")          // row 0
	g.p("\tLEAQ (SI)(R11*1), BX") // row 1
	g.p("\tMOVQ DI, DX")
	g.p("\tMOVQ R13, CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ pool%s_tail", s)
	g.p("pool%s_vec:", s)
	g.p("\tVMOVUPS (AX), %s", R(0))
	g.p("\tVMOVUPS %d(AX), %s", 4*L, R(1))
	g.p("\tVMOVUPS (BX), %s", R(2))
	g.p("\tVMOVUPS %d(BX), %s", 4*L, R(3))
	g.poolBody(s, "v")
	g.p("\tVMOVUPS %s, (DX)", R(4))
	g.p("\tADDQ $%d, AX", 8*L)
	g.p("\tADDQ $%d, BX", 8*L)
	g.p("\tADDQ $%d, DX", 4*L)
	g.p("\tDECQ CX")
	g.p("\tJNE pool%s_vec", s)
	g.p("pool%s_tail:", s)
	if g.zmm() {
		g.p("\tKORTESTW K2, K2")
		g.p("\tJEQ pool%s_next", s)
		g.p("\tVMOVUPS.Z (AX), K3, Z0")
		g.p("\tVMOVUPS.Z 64(AX), K4, Z1")
		g.p("\tVMOVUPS.Z (BX), K3, Z2")
		g.p("\tVMOVUPS.Z 64(BX), K4, Z3")
		g.poolBody(s, "t")
		g.p("\tVMOVUPS Z4, K2, (DX)")
	} else {
		g.p("\tVPTEST Y11, Y11")
		g.p("\tJEQ pool%s_next", s)
		g.p("\tVMASKMOVPS (AX), Y9, Y0")
		g.p("\tVMASKMOVPS 32(AX), Y10, Y1")
		g.p("\tVMASKMOVPS (BX), Y9, Y2")
		g.p("\tVMASKMOVPS 32(BX), Y10, Y3")
		g.poolBody(s, "t")
		g.p("\tVMASKMOVPS Y4, Y11, (DX)")
	}
	g.p("pool%s_next:", s)
	g.p("\tLEAQ (SI)(R11*2), SI")
	g.p("\tLEAQ (DI)(R10*4), DI")
	g.p("\tDECQ R8")
	g.p("\tJNE pool%s_row", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// poolBody reduces rows R0:R1 (row 0) and R2:R3 (row 1) into R4.
func (g *vg) poolBody(s, tag string) {
	R := g.R
	g.p("\tTESTQ R12, R12")
	g.p("\tJEQ pool%s_%savg", s, tag)
	// max(a, b) keeping b's NaN then a's: VMAXPS(src1=b, src2=a) gives a
	// on NaN; then b where b is NaN.
	mx := func(a, b, dst, tmp int) {
		g.p("\tVMAXPS %s, %s, %s", R(a), R(b), R(dst))
		if g.zmm() {
			g.p("\tVCMPPS $3, %s, %s, K1", R(b), R(b))
			g.p("\tVMOVAPS %s, K1, %s", R(b), R(dst))
		} else {
			g.p("\tVCMPPS $3, %s, %s, %s", R(b), R(b), R(tmp))
			g.p("\tVBLENDVPS %s, %s, %s, %s", R(tmp), R(b), R(dst), R(dst))
		}
	}
	g.verticalThenPairs(mx)
	g.p("\tJMP pool%s_%sdone", s, tag)
	g.p("pool%s_%savg:", s, tag)
	add := func(a, b, dst, tmp int) { g.p("\tVADDPS %s, %s, %s", R(b), R(a), R(dst)) }
	g.verticalThenPairs(add)
	g.p("\tVMULPS %s, %s, %s", R(13), R(4), R(4))
	g.p("pool%s_%sdone:", s, tag)
}

// verticalThenPairs: v0 = red(R0, R2), v1 = red(R1, R3), then R4 =
// red(even lanes of v0:v1, odd lanes).
func (g *vg) verticalThenPairs(red func(a, b, dst, tmp int)) {
	R := g.R
	red(0, 2, 5, 12)
	red(1, 3, 6, 12)
	if g.zmm() {
		g.p("\tVMOVAPS Z14, Z7")
		g.p("\tVPERMI2PS Z6, Z5, Z7") // Z7 = even lanes of Z5:Z6
		g.p("\tVMOVAPS Z15, Z8")
		g.p("\tVPERMI2PS Z6, Z5, Z8")
	} else {
		g.p("\tVSHUFPS $0x88, %s, %s, %s", R(6), R(5), R(7))
		g.p("\tVPERMPD $0xd8, %s, %s", R(7), R(7))
		g.p("\tVSHUFPS $0xdd, %s, %s, %s", R(6), R(5), R(8))
		g.p("\tVPERMPD $0xd8, %s, %s", R(8), R(8))
	}
	red(7, 8, 4, 12)
}

// genPack: im2col panel packing by row runs, packRunsGo's twin. Each run is
// copied in whole vectors (one or two): the excess lands in the next run's
// lanes, which that run then overwrites, or in the row padding.
func (g *vg) genPack() {
	s := g.is.suffix
	L := g.is.lanes
	R := func(i int) string { return fmt.Sprintf("%s%d", g.is.r, i) }
	g.p("// func packRuns%s(dst, src []float32, koff []int32, runs []run, stride int)", s)
	g.p("TEXT ·packRuns%s(SB), NOSPLIT, $0-104", s)
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ koff_base+48(FP), R8")
	g.p("\tMOVQ koff_len+56(FP), R9")
	g.p("\tMOVQ runs_base+72(FP), R10")
	g.p("\tMOVQ runs_len+80(FP), R11")
	g.p("\tMOVQ stride+96(FP), R12")
	g.p("\tSHLQ $2, R12")
	g.p("\tTESTQ R9, R9")
	g.p("\tJEQ pack%s_done", s)
	g.p("\tTESTQ R11, R11")
	g.p("\tJEQ pack%s_done", s)
	g.p("pack%s_run:", s)
	g.p("\tMOVLQSX (R10), AX")
	g.p("\tLEAQ (SI)(AX*4), BX") // run source
	g.p("\tMOVLQSX 4(R10), AX")
	g.p("\tLEAQ (DI)(AX*4), DX") // run destination, row 0
	g.p("\tMOVQ R8, R13")
	g.p("\tMOVQ R9, CX")
	g.p("\tCMPL 8(R10), $%d", L)
	g.p("\tJGT pack%s_two", s)
	g.p("pack%s_one:", s)
	g.p("\tMOVLQSX (R13), AX")
	g.p("\tVMOVUPS (BX)(AX*4), %s", R(0))
	g.p("\tVMOVUPS %s, (DX)", R(0))
	g.p("\tADDQ $4, R13")
	g.p("\tADDQ R12, DX")
	g.p("\tDECQ CX")
	g.p("\tJNE pack%s_one", s)
	g.p("\tJMP pack%s_next", s)
	g.p("pack%s_two:", s)
	g.p("\tMOVLQSX (R13), AX")
	g.p("\tLEAQ (BX)(AX*4), AX")
	g.p("\tVMOVUPS (AX), %s", R(0))
	g.p("\tVMOVUPS %d(AX), %s", 4*L, R(1))
	g.p("\tVMOVUPS %s, (DX)", R(0))
	g.p("\tVMOVUPS %s, %d(DX)", R(1), 4*L)
	g.p("\tADDQ $4, R13")
	g.p("\tADDQ R12, DX")
	g.p("\tDECQ CX")
	g.p("\tJNE pack%s_two", s)
	g.p("pack%s_next:", s)
	g.p("\tADDQ $16, R10")
	g.p("\tDECQ R11")
	g.p("\tJNE pack%s_run", s)
	g.p("pack%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genPoolRow: rows (1 or 2) output rows of a k×k pool with stride 1, 2
// or 4 (AVX-512): for each chunk of 16 outputs, reduce the k² strided
// input vectors (for stride 2, the even lanes of 32 consecutive floats; for
// stride 4, the even lanes of the even lanes of 64) in pool's order. With
// two rows (poolRows2_512: out holds both rows, in starts at the first
// one's input rows) the two reductions are independent chains interleaved
// tap by tap, so that one's latency hides behind the other's; each keeps
// its own accumulator and NaN mask (Z4 and K5; Z8 and K0, which no masked
// instruction reads).
func (g *vg) genPoolRow(rows int) {
	L, name := "prow", "poolRow512"
	if rows == 2 {
		L, name = "prow2", "poolRows2_512"
	}
	g.p("// func %s(isMax int, out, in []float32, w, k, s int, scale float32)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-84", name)
	g.p("\tMOVQ out_base+8(FP), DI")
	g.p("\tMOVQ out_len+16(FP), CX")
	if rows == 2 {
		g.p("\tSHRQ $1, CX")
	}
	g.p("\tMOVQ in_base+32(FP), SI")
	g.p("\tMOVQ w+56(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ k+64(FP), R9")
	g.p("\tMOVQ s+72(FP), R10")
	g.p("\tVBROADCASTSS scale+80(FP), Z13")
	g.p("\tVMOVDQU32 ·evenIdx(SB), Z14")
	g.p("\tMOVQ isMax+0(FP), R11")
	if rows == 2 {
		g.p("\tMOVQ R10, R14") // the second row's input: s rows on
		g.p("\tIMULQ R8, R14")
	}
	g.p("%s_chunk:", L)
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ %s_done", L)
	// n = min(16, CX) outputs; K2: n lanes; K3, K4: the 2n−1 input lanes
	// (stride 2), or K3, K4, K6, K7: the 4n−3 input lanes (stride 4).
	g.p("\tMOVQ CX, BX")
	g.p("\tCMPQ BX, $16")
	g.p("\tJLE %s_n", L)
	g.p("\tMOVQ $16, BX")
	g.p("%s_n:", L)
	g.p("\tMOVQ BX, R12")
	g.p("\tMOVQ CX, R13") // keep CX
	g.p("\tMOVQ R12, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K2")
	g.p("\tLEAQ -1(R12)(R12*1), CX")
	g.p("\tCMPQ R10, $4")
	g.p("\tJNE %s_mask", L)
	g.p("\tLEAQ -3(R12*4), CX")
	g.p("%s_mask:", L)
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K3")
	g.p("\tSHRQ $16, AX")
	g.p("\tKMOVW AX, K4")
	g.p("\tSHRQ $16, AX")
	g.p("\tKMOVW AX, K6")
	g.p("\tSHRQ $16, AX")
	g.p("\tKMOVW AX, K7")
	g.p("\tMOVQ R13, CX")
	// acc: the first input (max) or 0 (avg).
	g.p("\tVPXORD Z4, Z4, Z4")
	if rows == 2 {
		g.p("\tVPXORD Z8, Z8, Z8")
	}
	g.p("\tTESTQ R11, R11")
	g.p("\tJEQ %s_taps", L)
	g.p("\tMOVQ SI, AX")
	g.loadTap(L, "first")
	g.p("\tVMOVAPS Z0, Z4")
	g.p("\tVCMPPS $3, Z4, Z4, K5") // K5: the lanes whose acc is NaN
	if rows == 2 {
		g.p("\tADDQ R14, AX")
		g.loadTap(L, "first1")
		g.p("\tVMOVAPS Z0, Z8")
		g.p("\tVCMPPS $3, Z8, Z8, K0")
	}
	g.tapLoops(L, func() {
		g.loadTap(L, "tap")
		g.poolStep(L, "0", "Z4", "Z5", "K5")
		if rows == 2 {
			g.p("\tADDQ R14, AX")
			g.loadTap(L, "tap1")
			g.poolStep(L, "1", "Z8", "Z9", "K0")
			g.p("\tSUBQ R14, AX")
		}
	})
	g.p("\tTESTQ R11, R11")
	g.p("\tJNE %s_store", L)
	g.p("\tVMULPS Z13, Z4, Z4")
	if rows == 2 {
		g.p("\tVMULPS Z13, Z8, Z8")
	}
	g.p("%s_store:", L)
	g.p("\tVMOVUPS Z4, K2, (DI)")
	if rows == 2 {
		// The second row: out_len/2 floats on, out_len·2 bytes.
		g.p("\tMOVQ out_len+16(FP), BX")
		g.p("\tVMOVUPS Z8, K2, (DI)(BX*2)")
	}
	g.p("\tADDQ $64, DI")
	// Next chunk: 16 outputs on, 16·s inputs on.
	g.p("\tMOVQ R10, AX")
	g.p("\tSHLQ $6, AX")
	g.p("\tADDQ AX, SI")
	g.p("\tSUBQ $16, CX")
	g.p("\tJA %s_chunk", L)
	g.p("%s_done:", L)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genCopyRows256: copyRows512's AVX2 twin for rows of at least 8 floats:
// whole vectors, then one more that ends at the row's end (it overlaps
// the last whole one, writing the same values again) instead of a masked
// store, which AMD's cores microcode.
func genCopyRows256(g *vg) {
	g.p("// func copyRows256(dst, src []float32, rows, w, srcStride, dstStride int): w ≥ 8.")
	g.p("TEXT ·copyRows256(SB), NOSPLIT, $0-80")
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ rows+48(FP), R8")
	g.p("\tMOVQ w+56(FP), R9")
	g.p("\tMOVQ srcStride+64(FP), BX")
	g.p("\tSHLQ $2, BX")
	g.p("\tMOVQ dstStride+72(FP), R10")
	g.p("\tSHLQ $2, R10")
	g.p("\tTESTQ R8, R8")
	g.p("\tJEQ crow256_done")
	g.p("\tMOVQ R9, R11")
	g.p("\tSHRQ $3, R11")        // whole vectors
	g.p("\tLEAQ -32(R9*4), R13") // the last vector's byte offset
	g.p("crow256_row:")
	g.p("\tMOVQ DI, DX")
	g.p("\tMOVQ SI, R12")
	g.p("\tMOVQ R11, CX")
	g.p("crow256_vec:")
	g.p("\tVMOVUPS (R12), Y0")
	g.p("\tVMOVUPS Y0, (DX)")
	g.p("\tADDQ $32, R12")
	g.p("\tADDQ $32, DX")
	g.p("\tDECQ CX")
	g.p("\tJNE crow256_vec")
	g.p("\tVMOVUPS (SI)(R13*1), Y0")
	g.p("\tVMOVUPS Y0, (DI)(R13*1)")
	g.p("\tADDQ BX, SI")
	g.p("\tADDQ R10, DI")
	g.p("\tDECQ R8")
	g.p("\tJNE crow256_row")
	g.p("crow256_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genDeintPlane256: deintPlane512's AVX2 twin. Whole chunks of 16
// pixels a row split by VSHUFPS and VPERMPD; the row's last w mod 16
// through lane masks built from ·iota8 (Y12, Y13 the input lanes, Y10 the
// evens, Y11 the odds): two masked stores a row, where the Go loop it
// replaces called a kernel per row.
func genDeintPlane256(g *vg) {
	g.p("// func deintPlane256(prep, img []float32, h, w, wq, plane, evenAdd, oddAdd, y0 int)")
	g.p("TEXT ·deintPlane256(SB), NOSPLIT, $0-104")
	g.p("\tMOVQ prep_base+0(FP), DI")
	g.p("\tMOVQ img_base+24(FP), SI")
	g.p("\tMOVQ h+48(FP), R8")
	g.p("\tMOVQ w+56(FP), R9")
	g.p("\tMOVQ wq+64(FP), R11")
	g.p("\tMOVQ plane+72(FP), R12")
	g.p("\tMOVQ y0+96(FP), R13")
	g.p("\tTESTQ R8, R8")
	g.p("\tJEQ dplane256_done")
	g.p("\tVMOVDQU ·iota8(SB), Y14")
	g.p("\tMOVQ R9, CX")
	g.p("\tANDQ $15, CX") // rem
	g.p("\tMOVQ CX, AX")
	g.lanesBelow("Y12")
	g.p("\tSUBQ $8, AX")
	g.lanesBelow("Y13")
	g.p("\tMOVQ CX, AX")
	g.p("\tSHRQ $1, AX") // rem/2 odds
	g.lanesBelow("Y11")
	g.p("\tSUBQ AX, CX") // ceil(rem/2) evens
	g.p("\tMOVQ CX, AX")
	g.lanesBelow("Y10")
	g.p("dplane256_row:")
	deintRowDst(g)
	g.p("\tMOVQ R9, CX")
	g.p("\tSHRQ $4, CX")
	g.p("\tJEQ dplane256_tail")
	g.p("dplane256_vec:")
	g.p("\tVMOVUPS (SI), Y0")
	g.p("\tVMOVUPS 32(SI), Y1")
	g.p("\tVSHUFPS $0x88, Y1, Y0, Y2")
	g.p("\tVPERMPD $0xd8, Y2, Y2")
	g.p("\tVSHUFPS $0xdd, Y1, Y0, Y3")
	g.p("\tVPERMPD $0xd8, Y3, Y3")
	g.p("\tVMOVUPS Y2, (DX)")
	g.p("\tVMOVUPS Y3, (R10)")
	g.p("\tADDQ $64, SI")
	g.p("\tADDQ $32, DX")
	g.p("\tADDQ $32, R10")
	g.p("\tDECQ CX")
	g.p("\tJNE dplane256_vec")
	g.p("dplane256_tail:")
	g.p("\tMOVQ R9, AX")
	g.p("\tANDQ $15, AX")
	g.p("\tJEQ dplane256_next")
	g.p("\tVMASKMOVPS (SI), Y12, Y0")
	g.p("\tVMASKMOVPS 32(SI), Y13, Y1")
	g.p("\tVSHUFPS $0x88, Y1, Y0, Y2")
	g.p("\tVPERMPD $0xd8, Y2, Y2")
	g.p("\tVSHUFPS $0xdd, Y1, Y0, Y3")
	g.p("\tVPERMPD $0xd8, Y3, Y3")
	g.p("\tVMASKMOVPS Y2, Y10, (DX)")
	g.p("\tVMASKMOVPS Y3, Y11, (R10)")
	g.p("\tLEAQ (SI)(AX*4), SI")
	g.p("dplane256_next:")
	g.p("\tINCQ R13")
	g.p("\tDECQ R8")
	g.p("\tJNE dplane256_row")
	g.p("dplane256_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// deintRowDst points DX and R10 at the even and odd destinations of row
// y (R13) of a phase split (deintPlane512, deintPlane256): its plane row
// (y/2)·wq + (y%2)·2·plane (R11 wq, R12 plane) plus evenAdd and oddAdd,
// from the planes at DI.
func deintRowDst(g *vg) {
	g.p("\tMOVQ R13, BX")
	g.p("\tSHRQ $1, BX")
	g.p("\tIMULQ R11, BX")
	g.p("\tMOVQ R13, AX")
	g.p("\tANDQ $1, AX")
	g.p("\tIMULQ R12, AX")
	g.p("\tLEAQ (BX)(AX*2), BX")
	g.p("\tMOVQ evenAdd+80(FP), AX")
	g.p("\tADDQ BX, AX")
	g.p("\tLEAQ (DI)(AX*4), DX") // even destination
	g.p("\tMOVQ oddAdd+88(FP), AX")
	g.p("\tADDQ BX, AX")
	g.p("\tLEAQ (DI)(AX*4), R10") // odd destination
}

// lanesBelow sets AVX2 register reg to the lane mask of the lanes below AX
// (a signed count: none for AX ≤ 0), against ·iota8 in Y14; it uses Y15.
func (g *vg) lanesBelow(reg string) {
	g.p("\tVMOVD AX, X15")
	g.p("\tVPBROADCASTD X15, Y15")
	g.p("\tVPCMPGTD Y14, Y15, %s", reg)
}

// tapLoops emits the k×k window loops of the row pools (poolRow512,
// poolRows2_512, poolRow256): tap is emitted once, run for each tap in the
// window's row-major order with AX at the tap's input (SI the window's
// first, R8 the input row in bytes, R9 k), then AX steps one float.
func (g *vg) tapLoops(L string, tap func()) {
	g.p("%s_taps:", L)
	g.p("\tMOVQ SI, DX") // row ky
	g.p("\tMOVQ R9, R12")
	g.p("%s_ky:", L)
	g.p("\tMOVQ DX, AX")
	g.p("\tMOVQ R9, R13")
	g.p("%s_kx:", L)
	tap()
	g.p("\tADDQ $4, AX")
	g.p("\tDECQ R13")
	g.p("\tJNE %s_kx", L)
	g.p("\tADDQ R8, DX")
	g.p("\tDECQ R12")
	g.p("\tJNE %s_ky", L)
}

// genPoolRow256: one output row of a k×k pool with stride 1 or 2 (AVX2),
// poolRow512's twin: for each chunk of 8 outputs, fold the k² strided
// input vectors (for stride 2, the even lanes of 16 consecutive floats)
// into an accumulator in pool's order. The lane masks are built from the
// chunk's count (·iota8): Y11 the n outputs, Y12 and Y13 the n (stride 1)
// or 2n−1 (stride 2) input lanes; masked loads read nothing past them.
// Max keeps its NaN lanes in Y6, as poolStep does in K5. A whole chunk is
// stored plainly, a last partial one through Y11.
func (g *vg) genPoolRow256() {
	L := "prow256"
	g.p("// func poolRow256(isMax int, out, in []float32, w, k, s int, scale float32)")
	g.p("TEXT ·poolRow256(SB), NOSPLIT, $0-84")
	g.p("\tMOVQ out_base+8(FP), DI")
	g.p("\tMOVQ out_len+16(FP), CX")
	g.p("\tMOVQ in_base+32(FP), SI")
	g.p("\tMOVQ w+56(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ k+64(FP), R9")
	g.p("\tMOVQ s+72(FP), R10")
	g.p("\tMOVQ isMax+0(FP), R11")
	g.p("\tVMOVDQU ·iota8(SB), Y14")
	g.p("%s_chunk:", L)
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ %s_done", L)
	g.p("\tMOVQ CX, BX")
	g.p("\tCMPQ BX, $8")
	g.p("\tJLE %s_n", L)
	g.p("\tMOVQ $8, BX")
	g.p("%s_n:", L)
	g.p("\tMOVQ BX, AX")
	g.lanesBelow("Y11")
	g.p("\tVMOVDQA Y11, Y12")
	g.p("\tCMPQ R10, $1")
	g.p("\tJEQ %s_masked", L)
	g.p("\tLEAQ -1(BX)(BX*1), AX") // 2n−1 input lanes
	g.lanesBelow("Y12")
	g.p("\tSUBQ $8, AX")
	g.lanesBelow("Y13")
	g.p("%s_masked:", L)
	g.p("\tVXORPS Y4, Y4, Y4")
	g.p("\tTESTQ R11, R11")
	g.p("\tJEQ %s_taps", L)
	g.p("\tMOVQ SI, AX")
	g.loadTap256(L, "first")
	g.p("\tVMOVAPS Y0, Y4")
	g.p("\tVCMPPS $3, Y4, Y4, Y6") // Y6: the lanes whose acc is NaN
	g.tapLoops(L, func() {
		g.loadTap256(L, "tap")
		g.p("\tTESTQ R11, R11")
		g.p("\tJEQ %s_add", L)
		// acc = maxNaN(acc, v), as poolStep: VMAXPS gives v if v > acc,
		// else acc; a NaN v replaces acc where acc is not NaN yet.
		g.p("\tVMAXPS Y4, Y0, Y5")
		g.p("\tVCMPPS $3, Y0, Y0, Y7")
		g.p("\tVANDNPS Y7, Y6, Y7")
		g.p("\tVORPS Y7, Y6, Y6")
		g.p("\tVBLENDVPS Y7, Y0, Y5, Y4")
		g.p("\tJMP %s_tapnext", L)
		g.p("%s_add:", L)
		g.p("\tVADDPS Y0, Y4, Y4")
		g.p("%s_tapnext:", L)
	})
	g.p("\tTESTQ R11, R11")
	g.p("\tJNE %s_store", L)
	g.p("\tVBROADCASTSS scale+80(FP), Y15")
	g.p("\tVMULPS Y15, Y4, Y4")
	g.p("%s_store:", L)
	g.p("\tCMPQ BX, $8")
	g.p("\tJNE %s_part", L)
	g.p("\tVMOVUPS Y4, (DI)")
	g.p("\tJMP %s_stored", L)
	g.p("%s_part:", L)
	g.p("\tVMASKMOVPS Y4, Y11, (DI)")
	g.p("%s_stored:", L)
	g.p("\tADDQ $32, DI")
	// Next chunk: 8 outputs on, 8·s inputs on.
	g.p("\tMOVQ R10, AX")
	g.p("\tSHLQ $5, AX")
	g.p("\tADDQ AX, SI")
	g.p("\tSUBQ $8, CX")
	g.p("\tJA %s_chunk", L)
	g.p("%s_done:", L)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// loadTap256 loads the input vector at AX (stride 1, or the even lanes of
// 16 floats for stride 2) into Y0, through the lane masks Y12 and Y13.
func (g *vg) loadTap256(L, tag string) {
	g.p("\tCMPQ R10, $1")
	g.p("\tJNE %s_%s2", L, tag)
	g.p("\tVMASKMOVPS (AX), Y12, Y0")
	g.p("\tJMP %s_%sok", L, tag)
	g.p("%s_%s2:", L, tag)
	g.p("\tVMASKMOVPS (AX), Y12, Y0")
	g.p("\tVMASKMOVPS 32(AX), Y13, Y1")
	g.p("\tVSHUFPS $0x88, Y1, Y0, Y2")
	g.p("\tVPERMPD $0xd8, Y2, Y0")
	g.p("%s_%sok:", L, tag)
}

// poolStep folds the tap in Z0 into accumulator acc (tmp: a scratch
// register, nan: the mask of acc's NaN lanes).
func (g *vg) poolStep(L, tag, acc, tmp, nan string) {
	g.p("\tTESTQ R11, R11")
	g.p("\tJEQ %s_add%s", L, tag)
	// acc = maxNaN(acc, v): acc if acc is NaN, else v if v > acc or v is
	// NaN. VMAXPS gives v if v > acc, else acc (NaN or a tie included);
	// a NaN v replaces acc where acc is not NaN yet (nan, kept aside of
	// the acc chain: once NaN, acc stays that NaN).
	g.p("\tVMAXPS %s, Z0, %s", acc, tmp)
	g.p("\tVCMPPS $3, Z0, Z0, K1")
	g.p("\tKANDNW K1, %s, K1", nan)
	g.p("\tKORW K1, %s, %s", nan, nan)
	g.p("\tVMOVAPS Z0, K1, %s", tmp)
	g.p("\tVMOVAPS %s, %s", tmp, acc)
	g.p("\tJMP %s_tapnext%s", L, tag)
	g.p("%s_add%s:", L, tag)
	g.p("\tVADDPS Z0, %s, %s", acc, acc)
	g.p("%s_tapnext%s:", L, tag)
}

// loadTap loads the strided input vector at AX into Z0.
func (g *vg) loadTap(L, tag string) {
	g.p("\tCMPQ R10, $1")
	g.p("\tJNE %s_%s2", L, tag)
	g.p("\tVMOVUPS.Z (AX), K2, Z0")
	g.p("\tJMP %s_%sok", L, tag)
	g.p("%s_%s2:", L, tag)
	g.p("\tCMPQ R10, $4")
	g.p("\tJEQ %s_%s4", L, tag)
	g.p("\tVMOVUPS.Z (AX), K3, Z0")
	g.p("\tVMOVUPS.Z 64(AX), K4, Z1")
	g.p("\tVMOVAPS Z14, Z2")
	g.p("\tVPERMI2PS Z1, Z0, Z2")
	g.p("\tVMOVAPS Z2, Z0")
	g.p("\tJMP %s_%sok", L, tag)
	// Stride 4: the even lanes of 0–31 and of 32–63, then their even lanes.
	g.p("%s_%s4:", L, tag)
	g.p("\tVMOVUPS.Z (AX), K3, Z0")
	g.p("\tVMOVUPS.Z 64(AX), K4, Z1")
	g.p("\tVMOVUPS.Z 128(AX), K6, Z2")
	g.p("\tVMOVUPS.Z 192(AX), K7, Z3")
	g.p("\tVMOVAPS Z14, Z6")
	g.p("\tVPERMI2PS Z1, Z0, Z6")
	g.p("\tVMOVAPS Z14, Z7")
	g.p("\tVPERMI2PS Z3, Z2, Z7")
	g.p("\tVMOVAPS Z14, Z0")
	g.p("\tVPERMI2PS Z7, Z6, Z0")
	g.p("%s_%sok:", L, tag)
}

// genDeint: even[i] = row[2i], odd[i] = row[2i+1]; AVX-512 masks the tail,
// AVX2 leaves the last len(row) mod 16 to Go.
func (g *vg) genDeint() {
	s := g.is.suffix
	L := g.is.lanes
	R := func(i int) string { return fmt.Sprintf("%s%d", g.is.r, i) }
	g.p("// func deint%s(even, odd, row []float32)", s)
	g.p("TEXT ·deint%s(SB), NOSPLIT, $0-72", s)
	g.p("\tMOVQ even_base+0(FP), DI")
	g.p("\tMOVQ odd_base+24(FP), DX")
	g.p("\tMOVQ row_base+48(FP), SI")
	g.p("\tMOVQ row_len+56(FP), CX")
	if g.zmm() {
		g.p("\tVMOVDQU32 ·evenIdx(SB), Z14")
		g.p("\tVMOVDQU32 ·oddIdx(SB), Z15")
	}
	g.p("deint%s_loop:", s)
	g.p("\tCMPQ CX, $%d", 2*L)
	g.p("\tJLT deint%s_tail", s)
	g.p("\tVMOVUPS (SI), %s", R(0))
	g.p("\tVMOVUPS %d(SI), %s", 4*L, R(1))
	if g.zmm() {
		g.p("\tVMOVAPS Z14, Z2")
		g.p("\tVPERMI2PS Z1, Z0, Z2")
		g.p("\tVMOVAPS Z15, Z3")
		g.p("\tVPERMI2PS Z1, Z0, Z3")
	} else {
		g.p("\tVSHUFPS $0x88, Y1, Y0, Y2")
		g.p("\tVPERMPD $0xd8, Y2, Y2")
		g.p("\tVSHUFPS $0xdd, Y1, Y0, Y3")
		g.p("\tVPERMPD $0xd8, Y3, Y3")
	}
	g.p("\tVMOVUPS %s, (DI)", R(2))
	g.p("\tVMOVUPS %s, (DX)", R(3))
	g.p("\tADDQ $%d, SI", 8*L)
	g.p("\tADDQ $%d, DI", 4*L)
	g.p("\tADDQ $%d, DX", 4*L)
	g.p("\tSUBQ $%d, CX", 2*L)
	g.p("\tJMP deint%s_loop", s)
	g.p("deint%s_tail:", s)
	if g.zmm() {
		g.p("\tTESTQ CX, CX")
		g.p("\tJEQ deint%s_done", s)
		// K1, K2: the rem input lanes; K3: ceil(rem/2) evens; K4: rem/2 odds.
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K1")
		g.p("\tSHRQ $16, AX")
		g.p("\tKMOVW AX, K2")
		g.p("\tMOVQ CX, BX")
		g.p("\tSHRQ $1, BX")
		g.p("\tMOVQ CX, R8")
		g.p("\tSUBQ BX, R8")
		g.p("\tMOVQ R8, CX")
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K3")
		g.p("\tMOVQ BX, CX")
		g.p("\tMOVQ $1, AX")
		g.p("\tSHLQ CX, AX")
		g.p("\tDECQ AX")
		g.p("\tKMOVW AX, K4")
		g.p("\tVMOVUPS.Z (SI), K1, Z0")
		g.p("\tVMOVUPS.Z 64(SI), K2, Z1")
		g.p("\tVMOVAPS Z14, Z2")
		g.p("\tVPERMI2PS Z1, Z0, Z2")
		g.p("\tVMOVAPS Z15, Z3")
		g.p("\tVPERMI2PS Z1, Z0, Z3")
		g.p("\tVMOVUPS Z2, K3, (DI)")
		g.p("\tVMOVUPS Z3, K4, (DX)")
	}
	g.p("deint%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genCopyRows: copy rows of w floats, srcStride apart in src, to rows
// dstStride apart in dst (the zero-padded planes of a stride-1
// convolution), with a masked last vector per row (AVX-512 only).
func genCopyRows(g *vg) {
	g.p("// func copyRows512(dst, src []float32, rows, w, srcStride, dstStride int)")
	g.p("TEXT ·copyRows512(SB), NOSPLIT, $0-80")
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ rows+48(FP), R8")
	g.p("\tMOVQ w+56(FP), R9")
	g.p("\tMOVQ srcStride+64(FP), BX")
	g.p("\tSHLQ $2, BX")
	g.p("\tMOVQ dstStride+72(FP), R10")
	g.p("\tSHLQ $2, R10")
	g.p("\tTESTQ R8, R8")
	g.p("\tJEQ crow_done")
	g.p("\tMOVQ R9, CX")
	g.p("\tANDQ $15, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K1")
	g.p("\tMOVQ R9, R11")
	g.p("\tSHRQ $4, R11")
	g.p("crow_row:")
	g.p("\tMOVQ DI, DX")
	g.p("\tMOVQ SI, R12")
	g.p("\tMOVQ R11, CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ crow_tail")
	g.p("crow_vec:")
	g.p("\tVMOVUPS (R12), Z0")
	g.p("\tVMOVUPS Z0, (DX)")
	g.p("\tADDQ $64, R12")
	g.p("\tADDQ $64, DX")
	g.p("\tDECQ CX")
	g.p("\tJNE crow_vec")
	g.p("crow_tail:")
	g.p("\tVMOVUPS.Z (R12), K1, Z0")
	g.p("\tVMOVUPS Z0, K1, (DX)")
	g.p("\tADDQ BX, SI")
	g.p("\tADDQ R10, DI")
	g.p("\tDECQ R8")
	g.p("\tJNE crow_row")
	g.p("crow_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genPackVec: im2col panel packing vector by vector (AVX-512): for each of
// the tile's vectors, every tap's 16 lanes are gathered from the (at most
// three) row runs that cover them, the first loaded whole and the others
// merged in under their lane masks, and stored to the panel as one whole
// vector (on a cache line when the panel is aligned). packRuns stores each
// run's whole vector instead, two or three overlapping stores a vector,
// most of them across two cache lines. The lanes a vector's pieces cover
// get what packRunsGo writes there; a vector's other lanes lie past the
// tile's last pixel, where the micro-kernels' results are not stored.
func genPackVec(g *vg) {
	g.p("// func packVec512(dst, src []float32, koff []int32, vp []vecPieces, strideBytes int)")
	g.p("TEXT ·packVec512(SB), NOSPLIT, $0-104")
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ koff_base+48(FP), R8")
	g.p("\tMOVQ koff_len+56(FP), R11")
	g.p("\tMOVQ vp_base+72(FP), R10")
	g.p("\tMOVQ vp_len+80(FP), R12")
	g.p("\tTESTQ R11, R11")
	g.p("\tJEQ pvec_done")
	g.p("\tTESTQ R12, R12")
	g.p("\tJEQ pvec_done")
	g.p("pvec_vec:")
	g.p("\tMOVL (R10), AX")
	g.p("\tTESTL AX, AX")
	g.p("\tJEQ pvec_next")
	for i, r := range []string{"R9", "R13", "R14"} {
		g.p("\tMOVLQSX %d(R10), %s", 4+4*i, r)
		g.p("\tLEAQ (SI)(%s*4), %s", r, r)
	}
	g.p("\tKMOVW 20(R10), K1")
	g.p("\tKMOVW 24(R10), K2")
	g.p("\tMOVQ R8, BX")
	g.p("\tMOVQ R11, CX")
	g.p("\tMOVQ DI, DX")
	g.p("\tCMPL AX, $2")
	g.p("\tJLT pvec_1")
	g.p("\tJEQ pvec_2")
	for n := 3; n >= 1; n-- {
		g.p("pvec_%d:", n)
		g.p("\tMOVLQSX (BX), AX")
		g.p("\tVMOVUPS (R9)(AX*4), Z0")
		if n >= 2 {
			g.p("\tVMOVUPS (R13)(AX*4), K1, Z0")
		}
		if n >= 3 {
			g.p("\tVMOVUPS (R14)(AX*4), K2, Z0")
		}
		g.p("\tVMOVUPS Z0, (DX)")
		g.p("\tADDQ $4, BX")
		g.p("\tADDQ strideBytes+96(FP), DX")
		g.p("\tDECQ CX")
		g.p("\tJNE pvec_%d", n)
		g.p("\tJMP pvec_next")
	}
	g.p("pvec_next:")
	g.p("\tADDQ $32, R10")
	g.p("\tADDQ $64, DI")
	g.p("\tDECQ R12")
	g.p("\tJNE pvec_vec")
	g.p("pvec_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genDeintPlane: the phase split of one channel for stride 2 (AVX-512): row
// ih of the image (w floats) is padded row y = ih + y0, going to row y/2 of
// the row-phase y%2 planes; its even elements to the column-phase plane at
// evenAdd, its odd ones to the one at oddAdd (deintGo per row).
func genDeintPlane(g *vg) {
	g.p("// func deintPlane512(prep, img []float32, h, w, wq, plane, evenAdd, oddAdd, y0 int)")
	g.p("TEXT ·deintPlane512(SB), NOSPLIT, $0-104")
	g.p("\tMOVQ prep_base+0(FP), DI")
	g.p("\tMOVQ img_base+24(FP), SI")
	g.p("\tMOVQ h+48(FP), R8")
	g.p("\tMOVQ w+56(FP), R9")
	g.p("\tMOVQ wq+64(FP), R11")
	g.p("\tMOVQ plane+72(FP), R12")
	g.p("\tMOVQ y0+96(FP), R13")
	g.p("\tVMOVDQU32 ·evenIdx(SB), Z14")
	g.p("\tVMOVDQU32 ·oddIdx(SB), Z15")
	g.p("\tTESTQ R8, R8")
	g.p("\tJEQ dplane_done")
	// Tail masks for rem = w mod 32: K1, K2 input lanes, K3 ceil(rem/2)
	// evens, K4 rem/2 odds.
	g.p("\tMOVQ R9, CX")
	g.p("\tANDQ $31, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K1")
	g.p("\tSHRQ $16, AX")
	g.p("\tKMOVW AX, K2")
	g.p("\tMOVQ CX, BX")
	g.p("\tSHRQ $1, BX")
	g.p("\tSUBQ BX, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K3")
	g.p("\tMOVQ BX, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K4")
	g.p("dplane_row:")
	deintRowDst(g)
	g.p("\tMOVQ R9, CX")
	g.p("\tSHRQ $5, CX")
	g.p("\tJEQ dplane_tail")
	g.p("dplane_vec:")
	g.p("\tVMOVUPS (SI), Z0")
	g.p("\tVMOVUPS 64(SI), Z1")
	g.p("\tVMOVAPS Z14, Z2")
	g.p("\tVPERMI2PS Z1, Z0, Z2")
	g.p("\tVMOVAPS Z15, Z3")
	g.p("\tVPERMI2PS Z1, Z0, Z3")
	g.p("\tVMOVUPS Z2, (DX)")
	g.p("\tVMOVUPS Z3, (R10)")
	g.p("\tADDQ $128, SI")
	g.p("\tADDQ $64, DX")
	g.p("\tADDQ $64, R10")
	g.p("\tDECQ CX")
	g.p("\tJNE dplane_vec")
	g.p("dplane_tail:")
	g.p("\tVMOVUPS.Z (SI), K1, Z0")
	g.p("\tVMOVUPS.Z 64(SI), K2, Z1")
	g.p("\tVMOVAPS Z14, Z2")
	g.p("\tVPERMI2PS Z1, Z0, Z2")
	g.p("\tVMOVAPS Z15, Z3")
	g.p("\tVPERMI2PS Z1, Z0, Z3")
	g.p("\tVMOVUPS Z2, K3, (DX)")
	g.p("\tVMOVUPS Z3, K4, (R10)")
	g.p("\tMOVQ R9, AX")
	g.p("\tANDQ $31, AX")
	g.p("\tLEAQ (SI)(AX*4), SI")
	g.p("\tINCQ R13")
	g.p("\tDECQ R8")
	g.p("\tJNE dplane_row")
	g.p("dplane_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genEvenRows: every second float of rows srcStride apart, n of them a row,
// to rows dstStride apart (the phase-(0, 0) plane of a 1×1 convolution of
// stride 2, one channel a call; evenRowsGo), AVX-512 only. A row's last
// n mod 16 outputs are masked, their loads to the 2·rem−1 floats they read.
func genEvenRows(g *vg) {
	g.p("// func evenRows512(dst, src []float32, rows, n, srcStride, dstStride int)")
	g.p("TEXT ·evenRows512(SB), NOSPLIT, $0-80")
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ rows+48(FP), R8")
	g.p("\tMOVQ n+56(FP), R9")
	g.p("\tMOVQ srcStride+64(FP), R12")
	g.p("\tSHLQ $2, R12")
	g.p("\tMOVQ dstStride+72(FP), R10")
	g.p("\tSHLQ $2, R10")
	g.p("\tVMOVDQU32 ·evenIdx(SB), Z14")
	g.p("\tTESTQ R8, R8")
	g.p("\tJEQ erow_done")
	// K3: the rem = n mod 16 outputs; K1, K2: the 2·rem−1 inputs (none
	// when rem = 0).
	g.p("\tMOVQ R9, CX")
	g.p("\tANDQ $15, CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("\tKMOVW AX, K3")
	g.p("\tXORQ AX, AX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ erow_masks")
	g.p("\tLEAQ -1(CX)(CX*1), CX")
	g.p("\tMOVQ $1, AX")
	g.p("\tSHLQ CX, AX")
	g.p("\tDECQ AX")
	g.p("erow_masks:")
	g.p("\tKMOVW AX, K1")
	g.p("\tSHRQ $16, AX")
	g.p("\tKMOVW AX, K2")
	g.p("\tMOVQ R9, R11")
	g.p("\tSHRQ $4, R11")
	g.p("erow_row:")
	g.p("\tMOVQ SI, BX")
	g.p("\tMOVQ DI, DX")
	g.p("\tMOVQ R11, CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ erow_tail")
	g.p("erow_vec:")
	g.p("\tVMOVUPS (BX), Z0")
	g.p("\tVMOVUPS 64(BX), Z1")
	g.p("\tVMOVAPS Z14, Z2")
	g.p("\tVPERMI2PS Z1, Z0, Z2")
	g.p("\tVMOVUPS Z2, (DX)")
	g.p("\tADDQ $128, BX")
	g.p("\tADDQ $64, DX")
	g.p("\tDECQ CX")
	g.p("\tJNE erow_vec")
	g.p("erow_tail:")
	g.p("\tVMOVUPS.Z (BX), K1, Z0")
	g.p("\tVMOVUPS.Z 64(BX), K2, Z1")
	g.p("\tVMOVAPS Z14, Z2")
	g.p("\tVPERMI2PS Z1, Z0, Z2")
	g.p("\tVMOVUPS Z2, K3, (DX)")
	g.p("\tADDQ R12, SI")
	g.p("\tADDQ R10, DI")
	g.p("\tDECQ R8")
	g.p("\tJNE erow_row")
	g.p("erow_done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}
