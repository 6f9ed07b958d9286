//go:build ignore

package main

import (
	"fmt"
	"math"
	"os"
	"strings"
)

// vecISA describes one instruction set for the vector kernels. Both use
// registers 0..15 only, so that one emitter serves AVX2 and AVX-512.
type vecISA struct {
	suffix string // function name suffix
	r      string // register prefix
	lanes  int
}

var vecISAs = []vecISA{{"512", "Z", 16}, {"256", "Y", 8}}

// Constants are stored as 8 copies (32 bytes): AVX2 reads them as a vector,
// AVX-512 broadcasts the first.
var consts = []struct {
	name string
	bits uint32
}{
	{"one", f(1)}, {"two", f(2)}, {"half", f(0.5)}, {"minus2", f(-2)}, {"quarter", f(0.25)},
	{"absMask", 0x7fffffff}, {"signMask", 0x80000000}, {"i127", 127},
	{"expLo", f(-87)}, {"log2e", f(1.44269504088896341)}, {"ln2Hi", f(0.693359375)}, {"ln2Lo", f(-2.12194440e-4)},
	{"expC0", f(1.9875691500e-4)}, {"expC1", f(1.3981999507e-3)}, {"expC2", f(8.3334519073e-3)},
	{"expC3", f(4.1665795894e-2)}, {"expC4", f(1.6666665459e-1)}, {"expC5", f(5.0000001201e-1)},
	{"tanhT", f(0.625)}, {"sigT", f(1.25)}, {"tanhP0", f(-5.70498872745e-3)}, {"tanhP1", f(2.06390887954e-2)},
	{"tanhP2", f(-5.37397155531e-2)}, {"tanhP3", f(1.33314422036e-1)}, {"tanhP4", f(-3.33332819422e-1)},
	// tanh(x) ≈ x·N(x²)/D(x²) and erf(x/√2) ≈ x·P(x²)/Q(x²): see act.go.
	{"tanhC", f(tanhC)}, {"tanhNegC", f(-tanhC)},
	{"tanhN0", f(tanhN[0])}, {"tanhN1", f(tanhN[1])}, {"tanhN2", f(tanhN[2])}, {"tanhN3", f(tanhN[3])},
	{"tanhN4", f(tanhN[4])}, {"tanhN5", f(tanhN[5])}, {"tanhN6", f(tanhN[6])},
	{"tanhD1", f(tanhD[0])}, {"tanhD2", f(tanhD[1])}, {"tanhD3", f(tanhD[2])},
	{"geluC", f(geluC)}, {"geluNegC", f(-geluC)}, {"minusOne", f(-1)},
	{"erfP0", f(erfP[0])}, {"erfP1", f(erfP[1])}, {"erfP2", f(erfP[2])}, {"erfP3", f(erfP[3])},
	{"erfP4", f(erfP[4])}, {"erfP5", f(erfP[5])},
	{"erfQ1", f(erfQ[0])}, {"erfQ2", f(erfQ[1])}, {"erfQ3", f(erfQ[2])}, {"erfQ4", f(erfQ[3])}, {"erfQ5", f(erfQ[4])},
	{"slope", f(0.01)},
	{"bfOne", 1}, {"bfBias", 0x7fff}, {"bfInf", 0x7f800000}, {"bfQuiet", 0x40},
}

// The rational approximations of tanh and erf (see act.go, which holds the
// same values).
const (
	tanhC = 9.5
	geluC = 6.0
)

var (
	tanhN = []float64{0.99999998416133044, 0.1306568451839546, 0.0030834705020270355, 1.0939337631967857e-5, -1.9348366637102077e-8, 4.8537125262736748e-11, -7.397757038199901e-14}
	tanhD = []float64{0.46399007541023855, 0.024413646845264383, 0.00025162761266952777}
	erfP  = []float64{0.79788453946901812, 0.067136070483738808, 0.0093164116339541018, 0.00033134936838160184, 1.2614610735250856e-5, 4.5666452974740026e-8}
	erfQ  = []float64{0.25080894862740611, 0.028478645325359421, 0.0018669224179006649, 7.2509630573196041e-5, 1.1965997363208636e-6}
)

func f(v float64) uint32 { return math.Float32bits(float32(v)) }

type vg struct {
	is  vecISA
	sb  strings.Builder
	set int // 0, or 1 for the second vector of a 2× interleave (AVX-512)
}

func (g *vg) p(format string, args ...any) { fmt.Fprintf(&g.sb, format+"\n", args...) }

// R names vector register i. In the second set of an interleave, the
// temporaries move up by 16; the constants in 8..11 are shared.
func (g *vg) R(i int) string {
	if g.set == 1 && (i < 8 || i > 11) {
		i += 16
	}
	return fmt.Sprintf("%s%d", g.is.r, i)
}

// capture returns the lines body emits for one register set.
func (g *vg) capture(set int, body func()) []string {
	saved := g.sb.String()
	g.sb.Reset()
	g.set = set
	body()
	g.set = 0
	lines := strings.Split(strings.TrimSuffix(g.sb.String(), "\n"), "\n")
	g.sb.Reset()
	g.sb.WriteString(saved)
	return lines
}

// loop2 emits, for AVX-512, a loop over pairs of vectors running body on
// both register sets with their instructions interleaved (two independent
// dependency chains), then a loop for the last odd vector; for AVX2 the
// plain loop.
func (g *vg) loop2(name string, body func()) {
	if !g.zmm() {
		g.loop(name, body)
		return
	}
	a, b := g.capture(0, body), g.capture(1, body)
	g.p("%s:", name)
	g.p("\tCMPQ CX, $2")
	g.p("\tJLT %s_one", name)
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			g.sb.WriteString(a[i] + "\n")
		}
		if i < len(b) {
			g.sb.WriteString(b[i] + "\n")
		}
	}
	g.p("\tADDQ $128, SI")
	g.p("\tSUBQ $2, CX")
	g.p("\tJNE %s", name)
	g.p("\tJMP %s_end", name)
	g.p("%s_one:", name)
	for _, l := range a {
		g.sb.WriteString(l + "\n")
	}
	g.p("%s_end:", name)
}

// smallPairs is loop2 on AVX-512 with a branch between the two parts of
// tanh or sigmoid: a pair of vectors whose lanes are all below the
// threshold (|x| in register 1 against register 14) runs small (store the
// polynomial) instead of b, which computes the other formula and chooses
// lane by lane. Every lane gets the value the choice would have given.
func (g *vg) smallPairs(name string, a, b, small func()) {
	both := func(f func()) {
		x, y := g.capture(0, f), g.capture(1, f)
		for i := range max(len(x), len(y)) {
			if i < len(x) {
				g.sb.WriteString(x[i] + "\n")
			}
			if i < len(y) {
				g.sb.WriteString(y[i] + "\n")
			}
		}
	}
	g.p("%s:", name)
	g.p("\tCMPQ CX, $2")
	g.p("\tJLT %s_one", name)
	both(a)
	g.p("\tVCMPPS $1, Z14, Z1, K1") // Z14: the threshold
	g.p("\tVCMPPS $1, Z14, Z17, K2")
	g.p("\tKANDW K1, K2, K3")
	g.p("\tKORTESTW K3, K3")
	g.p("\tJCS %s_small", name)
	both(b)
	g.p("\tJMP %s_next", name)
	g.p("%s_small:", name)
	both(small)
	g.p("%s_next:", name)
	g.p("\tADDQ $128, SI")
	g.p("\tSUBQ $2, CX")
	g.p("\tJNE %s", name)
	g.p("\tJMP %s_end", name)
	g.p("%s_one:", name)
	for _, l := range append(g.capture(0, a), g.capture(0, b)...) {
		g.sb.WriteString(l + "\n")
	}
	g.p("%s_end:", name)
}

// smallVec is smallPairs for AVX2, a vector at a time: a vector whose
// lanes are all below the threshold (|x| in Y1 against Y14) runs small
// instead of b.
func (g *vg) smallVec(name string, a, b, small func()) {
	g.p("%s:", name)
	a()
	g.p("\tVCMPPS $1, Y14, Y1, Y7")
	g.p("\tVMOVMSKPS Y7, AX")
	g.p("\tCMPL AX, $0xff")
	g.p("\tJEQ %s_small", name)
	b()
	g.p("\tJMP %s_next", name)
	g.p("%s_small:", name)
	small()
	g.p("%s_next:", name)
	g.p("\tADDQ $%d, SI", g.is.lanes*4)
	g.p("\tDECQ CX")
	g.p("\tJNE %s", name)
}

// K names vector register i of either set: the constants kept for the
// whole loop (8 to 13 in act).
func (g *vg) K(i int) string { return fmt.Sprintf("%s%d", g.is.r, i) }

func (g *vg) zmm() bool { return g.is.r == "Z" }

// op emits "inst const, src, dst" with the constant as a memory operand.
func (g *vg) op(inst, c string, src, dst int) {
	if g.zmm() {
		g.p("\t%s.BCST ·%s(SB), %s, %s", inst, c, g.R(src), g.R(dst))
	} else {
		g.p("\t%s ·%s(SB), %s, %s", inst, c, g.R(src), g.R(dst))
	}
}

// ld loads constant c into register dst.
func (g *vg) ld(c string, dst int) {
	if g.zmm() {
		g.p("\tVBROADCASTSS ·%s(SB), %s", c, g.R(dst))
	} else {
		g.p("\tVMOVUPS ·%s(SB), %s", c, g.R(dst))
	}
}

// sel sets dst = (src1 PRED src2) ? ifSet : dst, with a compare predicate;
// tmp is a scratch register for AVX2's mask.
func (g *vg) sel(pred, src1, src2, ifSet, dst, tmp int) {
	s2 := g.R(src2)
	if src2 < 0 { // a constant register (K)
		s2 = g.K(-src2)
	}
	if g.zmm() {
		k := g.set + 1
		g.p("\tVCMPPS $%d, %s, %s, K%d", pred, s2, g.R(src1), k)
		g.p("\tVMOVAPS %s, K%d, %s", g.R(ifSet), k, g.R(dst))
	} else {
		g.p("\tVCMPPS $%d, %s, %s, %s", pred, s2, g.R(src1), g.R(tmp))
		g.p("\tVBLENDVPS %s, %s, %s, %s", g.R(tmp), g.R(ifSet), g.R(dst), g.R(dst))
	}
}

// expf: x = e^x (see expf in act.go); clobbers n, t, u. Register 8 holds 1.
func (g *vg) expf(x, n, t, u int) {
	g.p("\tVMAXPS %s, %s, %s", g.R(x), g.K(12), g.R(x)) // NaN stays
	g.op("VMULPS", "log2e", x, n)
	if g.zmm() {
		g.p("\tVRNDSCALEPS $0, %s, %s", g.R(n), g.R(n))
	} else {
		g.p("\tVROUNDPS $0, %s, %s", g.R(n), g.R(n))
	}
	g.op("VFNMADD231PS", "ln2Hi", n, x)
	g.op("VFNMADD231PS", "ln2Lo", n, x)
	g.p("\tVMOVAPS %s, %s", g.K(13), g.R(t))
	for _, c := range []string{"expC1", "expC2", "expC3", "expC4", "expC5"} {
		g.op("VFMADD213PS", c, x, t)
	}
	g.p("\tVMULPS %s, %s, %s", g.R(x), g.R(x), g.R(u))
	g.p("\tVMULPS %s, %s, %s", g.R(u), g.R(t), g.R(t))
	g.p("\tVADDPS %s, %s, %s", g.R(x), g.R(t), g.R(t))
	g.p("\tVADDPS %s, %s, %s", g.R(8), g.R(t), g.R(t))
	if g.zmm() {
		// y·2^n in one instruction instead of four (2^n built from n's
		// bits, then a product), rounded once as the product is: the same
		// bits for every n the clamp allows (n ≥ −126, so 2^n is normal);
		// a NaN stays y's NaN.
		g.p("\tVSCALEFPS %s, %s, %s", g.R(n), g.R(t), g.R(x))
		return
	}
	g.p("\tVCVTPS2DQ %s, %s", g.R(n), g.R(n))
	g.op("VPADDD", "i127", n, n)
	g.p("\tVPSLLD $23, %s, %s", g.R(n), g.R(n))
	g.p("\tVMULPS %s, %s, %s", g.R(n), g.R(t), g.R(x))
}

// clamp sets dst = min(max(src, K[lo]), K[hi]) with src returned where it
// is NaN (the second source of VMINPS/VMAXPS is the one returned).
func (g *vg) clamp(src, dst, lo, hi int) {
	g.p("\tVMINPS %s, %s, %s", g.R(src), g.K(hi), g.R(dst))
	g.p("\tVMAXPS %s, %s, %s", g.R(dst), g.K(lo), g.R(dst))
}

// horner sets dst = c_hi·z^(hi-lo) + … + c_lo by Horner's rule with fused
// multiply-adds, the coefficients named name+index.
func (g *vg) horner(name string, hi, lo, z, dst int) {
	g.ld(fmt.Sprintf("%s%d", name, hi), dst)
	for i := hi - 1; i >= lo; i-- {
		g.op("VFMADD213PS", fmt.Sprintf("%s%d", name, i), z, dst)
	}
}

// tanhPoly sets p = tanh(x) for |x| < 0.625 by Cephes' odd polynomial,
// x + x·z·P(z) with z = x² (register 15 holds its first coefficient);
// clobbers z.
func (g *vg) tanhPoly(x, z, p int) {
	g.p("\tVMULPS %s, %s, %s", g.R(x), g.R(x), g.R(z))
	g.p("\tVMOVAPS %s, %s", g.K(15), g.R(p))
	for _, c := range []string{"tanhP1", "tanhP2", "tanhP3", "tanhP4"} {
		g.op("VFMADD213PS", c, z, p)
	}
	g.p("\tVMULPS %s, %s, %s", g.R(z), g.R(p), g.R(p))
	g.p("\tVMULPS %s, %s, %s", g.R(x), g.R(p), g.R(p))
	g.p("\tVADDPS %s, %s, %s", g.R(x), g.R(p), g.R(p))
}

// rational sets p = x·N(z)/D(z), the coefficients named num0…numHi and
// den1…denHi (D₀ = 1, register 8); clobbers q.
func (g *vg) rational(num string, numHi int, den string, denHi, x, z, p, q int) {
	g.horner(num, numHi, 0, z, p)
	g.p("\tVMULPS %s, %s, %s", g.R(x), g.R(p), g.R(p))
	g.horner(den, denHi, 1, z, q)
	g.p("\tVFMADD213PS %s, %s, %s", g.R(8), g.R(z), g.R(q))
	g.p("\tVDIVPS %s, %s, %s", g.R(q), g.R(p), g.R(p))
}

// loop emits a loop over SI with CX vectors, body between load and store.
func (g *vg) loop(name string, body func()) {
	g.p("%s:", name)
	body()
	g.p("\tADDQ $%d, SI", g.is.lanes*4)
	g.p("\tDECQ CX")
	g.p("\tJNE %s", name)
}

func (g *vg) genAct() {
	s := g.is.suffix
	g.p("// func act%s(act int, x []float32): x[i] = act(x[i]), len(x) a multiple of %d.", s, g.is.lanes)
	g.p("TEXT ·act%s(SB), NOSPLIT, $0-32", s)
	g.p("\tMOVQ act+0(FP), AX")
	g.p("\tMOVQ x_base+8(FP), SI")
	g.p("\tMOVQ x_len+16(FP), CX")
	g.p("\tSHRQ $%d, CX", map[int]int{16: 4, 8: 3}[g.is.lanes])
	g.p("\tJEQ act%s_done", s)
	g.ld("one", 8)
	g.ld("absMask", 9)
	g.ld("slope", 11)
	g.ld("expLo", 12)
	g.ld("expC0", 13)
	if g.zmm() {
		g.p("\tVPXORD Z10, Z10, Z10")
	} else {
		g.p("\tVXORPS Y10, Y10, Y10")
	}
	for i, a := range []string{"relu", "leaky", "tanh", "sigmoid", "gelu"} {
		g.p("\tCMPQ AX, $%d", i+1)
		g.p("\tJEQ act%s_%s", s, a)
	}
	g.p("\tJMP act%s_done", s)
	R := g.R
	load := func(r int) { g.p("\tVMOVUPS %d(SI), %s", 64*g.set, R(r)) }
	store := func(r int) { g.p("\tVMOVUPS %s, %d(SI)", R(r), 64*g.set) }
	fin := func() { g.p("\tJMP act%s_done", s) }

	g.loop("act"+s+"_relu", func() {
		load(0)
		g.p("\tVMAXPS %s, %s, %s", R(0), R(10), R(0))
		store(0)
	})
	fin()
	g.loop("act"+s+"_leaky", func() {
		load(0)
		g.p("\tVMULPS %s, %s, %s", R(11), R(0), R(1))
		g.p("\tVMAXPS %s, %s, %s", R(0), R(1), R(0))
		store(0)
	})
	fin()
	// tanh in two parts: for |x| < 0.625 an odd polynomial (Cephes tanhf;
	// A), else x·N(x²)/D(x²) on x clamped to ±tanhC (B, NaN kept: the
	// clamps return x when either operand is NaN), chosen lane by lane.
	// Where every lane of both vectors of a pair (AVX2: of a vector) is
	// below 0.625 (common: a first layer's output over an image's blank
	// background is its bias), it stores A and skips B.
	tanhA := func() {
		load(0)
		g.p("\tVANDPS %s, %s, %s", R(9), R(0), R(1)) // a
		g.tanhPoly(0, 2, 3)                          // small-|x| result
	}
	tanhB := func() {
		g.clamp(0, 4, 13, 12)
		g.p("\tVMULPS %s, %s, %s", R(4), R(4), R(5))
		g.rational("tanhN", 6, "tanhD", 3, 4, 5, 6, 7)
		g.sel(1, 1, -14, 3, 6, 7) // |x| < 0.625: the polynomial
		store(6)
	}
	g.p("act%s_tanh:", s)
	g.ld("tanhT", 14)
	g.ld("tanhP0", 15)
	g.ld("tanhC", 12)
	g.ld("tanhNegC", 13)
	if g.zmm() {
		g.smallPairs("act"+s+"_tanhl", tanhA, tanhB, func() { store(3) })
	} else {
		g.smallVec("act"+s+"_tanhl", tanhA, tanhB, func() { store(3) })
	}
	fin()
	// sigmoid in two parts: for |x| < 1.25, (1 + tanh(x/2))/2 with the
	// polynomial of tanh (A; one rounding: the halving is exact), else
	// from e^-|x| (B), chosen lane by lane, pairs below 1.25 as for tanh.
	sigA := func() {
		load(0)
		g.p("\tVANDPS %s, %s, %s", R(9), R(0), R(1)) // a
		g.op("VMULPS", "half", 0, 2)                 // u = x/2
		g.tanhPoly(2, 3, 4)                          // tanh(x/2)
		g.p("\tVADDPS %s, %s, %s", R(8), R(4), R(3))
		g.op("VMULPS", "half", 3, 3) // small-|x| result
	}
	sigB := func() {
		g.p("\tVSUBPS %s, %s, %s", R(1), R(10), R(4))
		g.expf(4, 5, 6, 7)
		g.p("\tVADDPS %s, %s, %s", R(4), R(8), R(5))
		g.p("\tVDIVPS %s, %s, %s", R(5), R(8), R(5)) // s = 1/(1+e)
		g.p("\tVMULPS %s, %s, %s", R(4), R(5), R(6)) // e·s
		g.sel(13, 0, 10, 5, 6, 7)                    // x ≥ 0: s
		g.sel(1, 1, -14, 3, 6, 7)                    // |x| < 1.25: A
		store(6)
	}
	g.p("act%s_sigmoid:", s)
	g.ld("sigT", 14)
	g.ld("tanhP0", 15)
	if g.zmm() {
		g.smallPairs("act"+s+"_sigmoidl", sigA, sigB, func() { store(3) })
	} else {
		g.smallVec("act"+s+"_sigmoidl", sigA, sigB, func() { store(3) })
	}
	fin()
	// GELU: h + h·E with h = x/2 and E = erf(x/√2) = x·P(x²)/Q(x²) on x
	// clamped to ±geluC, then E clamped to ±1: beyond the clamp E is ±1
	// exactly, so GELU(x) is x or +0 there.
	g.p("act%s_gelu:", s)
	g.ld("geluC", 14)
	g.ld("geluNegC", 15)
	g.ld("minusOne", 12)
	g.loop2("act"+s+"_gelul", func() {
		load(0)
		g.clamp(0, 1, 15, 14)
		g.p("\tVMULPS %s, %s, %s", R(1), R(1), R(2)) // z = x²
		g.rational("erfP", 5, "erfQ", 5, 1, 2, 3, 4) // E
		g.p("\tVMINPS %s, %s, %s", R(3), R(8), R(3))
		g.p("\tVMAXPS %s, %s, %s", R(3), g.K(12), R(3))
		g.op("VMULPS", "half", 0, 5) // h
		g.p("\tVFMADD213PS %s, %s, %s", R(5), R(3), R(5))
		store(5)
	})
	g.p("act%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

func (g *vg) genAdd() {
	s := g.is.suffix
	g.p("// func add%s(dst, src []float32): dst[i] += src[i], len(dst) a multiple of %d.", s, g.is.lanes)
	g.p("TEXT ·add%s(SB), NOSPLIT, $0-48", s)
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ dst_len+8(FP), CX")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tSHRQ $%d, CX", map[int]int{16: 4, 8: 3}[g.is.lanes])
	g.p("\tJEQ add%s_done", s)
	g.p("add%s_loop:", s)
	g.p("\tVMOVUPS (SI), %s", g.R(0))
	g.p("\tVADDPS (DI), %s, %s", g.R(0), g.R(0))
	g.p("\tVMOVUPS %s, (DI)", g.R(0))
	g.p("\tADDQ $%d, SI", g.is.lanes*4)
	g.p("\tADDQ $%d, DI", g.is.lanes*4)
	g.p("\tDECQ CX")
	g.p("\tJNE add%s_loop", s)
	g.p("add%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

// genSum: 16 partial sums (one zmm, or two ymm), reduced pairwise as sumGo.
func (g *vg) genSum() {
	s := g.is.suffix
	g.p("// func sum%s(x []float32) float32: the 16-lane partial sums of x (len a multiple of 16), reduced pairwise.", s)
	g.p("TEXT ·sum%s(SB), NOSPLIT, $0-28", s)
	g.p("\tMOVQ x_base+0(FP), SI")
	g.p("\tMOVQ x_len+8(FP), CX")
	g.p("\tSHRQ $4, CX")
	if g.zmm() {
		g.p("\tVPXORD Z0, Z0, Z0")
	} else {
		g.p("\tVXORPS Y0, Y0, Y0")
		g.p("\tVXORPS Y1, Y1, Y1")
	}
	g.p("\tTESTQ CX, CX")
	g.p("\tJEQ sum%s_red", s)
	g.p("sum%s_loop:", s)
	if g.zmm() {
		g.p("\tVADDPS (SI), Z0, Z0")
	} else {
		g.p("\tVADDPS (SI), Y0, Y0")
		g.p("\tVADDPS 32(SI), Y1, Y1")
	}
	g.p("\tADDQ $64, SI")
	g.p("\tDECQ CX")
	g.p("\tJNE sum%s_loop", s)
	g.p("sum%s_red:", s)
	if g.zmm() {
		g.p("\tVEXTRACTF64X4 $1, Z0, Y1")
	}
	g.p("\tVADDPS Y1, Y0, Y0")
	g.p("\tVEXTRACTF128 $1, Y0, X1")
	g.p("\tVADDPS X1, X0, X0")
	g.p("\tVMOVHLPS X0, X0, X1")
	g.p("\tVADDPS X1, X0, X0")
	g.p("\tVMOVSHDUP X0, X1")
	g.p("\tVADDSS X1, X0, X0")
	g.p("\tVZEROUPPER")
	g.p("\tMOVSS X0, ret+24(FP)")
	g.p("\tRET\n")
}

func (g *vg) genBF16() {
	s := g.is.suffix
	L := g.is.lanes
	R := g.R
	g.p("// func toBF16_%s(dst []uint16, src []float32): len(src) a multiple of %d.", s, L)
	g.p("TEXT ·toBF16_%s(SB), NOSPLIT, $0-48", s)
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ src_len+32(FP), CX")
	g.p("\tSHRQ $%d, CX", map[int]int{16: 4, 8: 3}[L])
	g.p("\tJEQ tobf%s_done", s)
	g.ld("bfOne", 8)
	g.ld("bfBias", 9)
	g.ld("absMask", 10)
	g.ld("bfInf", 11)
	g.ld("bfQuiet", 12)
	g.p("tobf%s_loop:", s)
	g.p("\tVMOVUPS (SI), %s", R(0))
	g.p("\tVPSRLD $16, %s, %s", R(0), R(1))
	g.p("\tVPAND%s %s, %s, %s", map[bool]string{true: "D", false: ""}[g.zmm()], R(8), R(1), R(2))
	g.p("\tVPADDD %s, %s, %s", R(9), R(2), R(2))
	g.p("\tVPADDD %s, %s, %s", R(0), R(2), R(2))
	g.p("\tVPSRLD $16, %s, %s", R(2), R(2))                                                       // rounded
	g.p("\tVPOR%s %s, %s, %s", map[bool]string{true: "D", false: ""}[g.zmm()], R(12), R(1), R(1)) // quiet NaN
	g.p("\tVPAND%s %s, %s, %s", map[bool]string{true: "D", false: ""}[g.zmm()], R(10), R(0), R(3))
	if g.zmm() {
		g.p("\tVPCMPUD $6, Z11, Z3, K1") // |x| > inf: NaN
		g.p("\tVMOVDQA32 Z1, K1, Z2")
		g.p("\tVPMOVDW Z2, (DI)")
	} else {
		g.p("\tVPCMPGTD Y11, Y3, Y3")
		g.p("\tVPBLENDVB Y3, Y1, Y2, Y2")
		g.p("\tVEXTRACTI128 $1, Y2, X3")
		g.p("\tVPACKUSDW X3, X2, X2")
		g.p("\tVMOVDQU X2, (DI)")
	}
	g.p("\tADDQ $%d, SI", 4*L)
	g.p("\tADDQ $%d, DI", 2*L)
	g.p("\tDECQ CX")
	g.p("\tJNE tobf%s_loop", s)
	g.p("tobf%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")

	g.p("// func fromBF16_%s(dst []float32, src []uint16): len(src) a multiple of %d.", s, L)
	g.p("TEXT ·fromBF16_%s(SB), NOSPLIT, $0-48", s)
	g.p("\tMOVQ dst_base+0(FP), DI")
	g.p("\tMOVQ src_base+24(FP), SI")
	g.p("\tMOVQ src_len+32(FP), CX")
	g.p("\tSHRQ $%d, CX", map[int]int{16: 4, 8: 3}[L])
	g.p("\tJEQ frombf%s_done", s)
	g.p("frombf%s_loop:", s)
	g.p("\tVPMOVZXWD (SI), %s", R(0))
	g.p("\tVPSLLD $16, %s, %s", R(0), R(0))
	g.p("\tVMOVUPS %s, (DI)", R(0))
	g.p("\tADDQ $%d, SI", 2*L)
	g.p("\tADDQ $%d, DI", 4*L)
	g.p("\tDECQ CX")
	g.p("\tJNE frombf%s_loop", s)
	g.p("frombf%s_done:", s)
	g.p("\tVZEROUPPER")
	g.p("\tRET\n")
}

func genVec() {
	var out strings.Builder
	out.WriteString("// Code generated by gen_asm.go; DO NOT EDIT.\n\n//go:build !noasm\n\n#include \"textflag.h\"\n\n")
	for _, c := range consts {
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&out, "DATA ·%s+%d(SB)/4, $%#x\n", c.name, 4*i, c.bits)
		}
		fmt.Fprintf(&out, "GLOBL ·%s(SB), RODATA|NOPTR, $32\n", c.name)
	}
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&out, "DATA ·evenIdx+%d(SB)/4, $%d\n", 4*i, 2*i)
		fmt.Fprintf(&out, "DATA ·oddIdx+%d(SB)/4, $%d\n", 4*i, 2*i+1)
	}
	out.WriteString("GLOBL ·evenIdx(SB), RODATA|NOPTR, $64\nGLOBL ·oddIdx(SB), RODATA|NOPTR, $64\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&out, "DATA ·iota8+%d(SB)/4, $%d\n", 4*i, i)
	}
	out.WriteString("GLOBL ·iota8(SB), RODATA|NOPTR, $32\n\n")
	pr := &vg{is: vecISAs[0]}
	pr.genPoolRow(1)
	pr.genPoolRow(2)
	genCopyRows(pr)
	genPackVec(pr)
	genDeintPlane(pr)
	genEvenRows(pr)
	out.WriteString(pr.sb.String())
	p2 := &vg{is: vecISAs[1]}
	p2.genPoolRow256()
	genCopyRows256(p2)
	genDeintPlane256(p2)
	out.WriteString(p2.sb.String())
	for _, is := range vecISAs {
		g := &vg{is: is}
		g.genAct()
		g.genAdd()
		g.genSum()
		g.genPool()
		g.genBF16()
		g.genPack()
		g.genDeint()
		out.WriteString(g.sb.String())
	}
	if err := os.WriteFile("vec_amd64.s", []byte(out.String()), 0o644); err != nil {
		panic(err)
	}
}
