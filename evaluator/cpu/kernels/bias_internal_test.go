package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBiasModesSame holds the epilogue that skips the zero bias (biasRow
// for convolutions, biasCol for dense layers) to the one that adds both,
// bit for bit, on every path and tile width, with −0 biases, products that
// cancel to zero, and NaN and ±Inf among the inputs.
func TestBiasModesSame(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pick := func() float32 {
		switch r.IntN(8) {
		case 0:
			return float32(math.Copysign(0, -1))
		case 1:
			return 0
		case 2:
			return 1
		case 3:
			return -1
		case 4:
			return []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
		}
		return float32(r.NormFloat64())
	}
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = pick()
		}
		return v
	}
	for _, p := range Paths() {
		for nv := 1; nv <= maxNV; nv++ {
			nr := nv * 16
			for trial := range 40 {
				mr := 1 + r.IntN(mrMax(p, nv))
				k := 1 + r.IntN(5)
				koff := make([]int32, k)
				for i := range koff {
					koff[i] = int32(i * nr)
				}
				a, b := fill(k*mr), fill(k*nr)
				if trial%2 == 0 { // sums that cancel to zero
					for i := range a {
						a[i] = float32(1 - 2*(i%2))
					}
					for i := range b {
						b[i] = float32(math.Copysign(0, -1))
					}
				}
				rowBias, colBias := fill(mr), fill(nr)
				var sg [1]seg
				sg[0].setMask(laneMask(0, nr))
				run := func(rb, cb []float32, mode int) []float32 {
					c := make([]float32, mr*nr)
					ta := tileArgs{a: a, b: b, koff: koff, c: c, segs: sg[:], rowBias: rb, colBias: cb,
						k: k, astride: mr, ldc: nr, mr: mr, act: trial % 3, bias: mode}
					gemm(p, nv, &ta)
					return c
				}
				for _, m := range []struct {
					name   string
					rb, cb []float32
					mode   int
				}{{"row", rowBias, zeros[:nr], biasRow}, {"col", zeros[:mr], colBias, biasCol}} {
					want, got := run(m.rb, m.cb, biasBoth), run(m.rb, m.cb, m.mode)
					for i := range want {
						if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
							t.Fatalf("%v nv %d mr %d k %d bias %s: c[%d] = %v (%#x), adding both gives %v (%#x)",
								p, nv, mr, k, m.name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}
