package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDenseRowsSameAsPanel: a dense layer of at most 16 outputs on AVX-512
// reads its batch rows where they lie (gemm512x1s); its results are those
// of the one-vector kernel on the rows transposed into a panel, as Dense
// computed them before, bit for bit: every activation, panel heights 1 to
// 28, with -0, NaN and ±Inf among the inputs.
func TestDenseRowsSameAsPanel(t *testing.T) {
	if !available(AVX512) {
		t.Skip("no AVX-512 on this machine")
	}
	old, err := Select(AVX512)
	if err != nil {
		t.Fatal(err)
	}
	defer Select(old)
	r := rand.New(rand.NewPCG(9, 10))
	pick := func() float32 {
		switch r.IntN(16) {
		case 0:
			return float32(math.Copysign(0, -1))
		case 1:
			return 0
		case 2:
			return []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
		}
		return float32(r.NormFloat64())
	}
	fill := func(n int, specials bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			if specials {
				x[i] = pick()
			} else {
				x[i] = float32(r.NormFloat64())
			}
		}
		return x
	}
	type tc struct{ b, in, out int }
	cases := []tc{{1, 1, 1}, {1, 784, 10}, {28, 9, 16}, {29, 30, 10}, {200, 784, 10}, {200, 392, 10}, {57, 17, 3}, {3, 100, 15}, {140, 64, 16}}
	for i, c := range cases {
		for ai, act := range []Act{Identity, ReLU, LeakyReLU, Sigmoid, Tanh} {
			threads := 1 + (i+ai)%2
			specials := (i+ai)%3 == 0
			name := fmt.Sprintf("%+v/%v/t%d/specials=%v", c, act, threads, specials)
			src, w, bias := fill(c.b*c.in, specials), fill(c.out*c.in, specials), fill(c.out, specials)
			pl := planDense(AVX512, c.in, c.out, c.b, threads, 0, false)
			if pl.nv != 1 || pl.npan != 1 {
				t.Fatalf("%s: plan %+v, want one panel of one vector", name, pl)
			}
			got := make([]float32, c.b*c.out)
			Dense(got, src, w, bias, c.b, c.in, c.out, act, make([]float32, DenseWorkspace(c.in, c.out, c.b, threads)), threads)

			// The panel route: Wᵀ and the rows transposed, gemm512x1.
			wt := make([]float32, 16*c.in)
			for o := range c.out {
				for k := range c.in {
					wt[k*16+o] = w[o*c.in+k]
				}
			}
			koff := make([]int32, c.in)
			for k := range koff {
				koff[k] = int32(16 * k)
			}
			cb := make([]float32, 16)
			copy(cb, bias)
			want := make([]float32, c.b*c.out)
			var sg [1]seg
			sg[0].setMask(laneMask(0, c.out))
			for p := range pl.mpan {
				b0, mr := panel(c.b, pl.mpan, p)
				pa := make([]float32, mr*c.in)
				for rr := range mr {
					for k := range c.in {
						pa[k*mr+rr] = src[(b0+rr)*c.in+k]
					}
				}
				ta := tileArgs{a: pa, b: wt, koff: koff, c: want, segs: sg[:], rowBias: zeros[:], colBias: cb,
					k: c.in, astride: mr, mr: mr, ldc: c.out, coff: b0 * c.out, act: epilogueAct(act), bias: biasCol}
				gemm(AVX512, 1, &ta)
				if applyAfter(act) {
					applyVec(AVX512, act, want[b0*c.out:(b0+mr)*c.out])
				}
			}
			for k := range want {
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
					t.Fatalf("%s: element %d = %v (%#x), panel route %v (%#x)", name, k,
						got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
				}
			}
		}
	}
}
