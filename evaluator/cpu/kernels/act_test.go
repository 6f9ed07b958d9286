package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// actInputs covers each activation's branches and edges: a dense sweep of
// [-20, 20], the tanh and sign switch points, tiny and huge values,
// infinities and NaN.
func actInputs() []float32 {
	var xs []float32
	for i := -40000; i <= 40000; i++ {
		xs = append(xs, float32(i)/2000)
	}
	for _, v := range []float64{0.625, -0.625, 0.62499994, 1e-30, -1e-30, 1e-45, 87, -87, 88, -88, 100, -100, 1e10, -1e10, 3.4e38, -3.4e38} {
		xs = append(xs, float32(v))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)))
	return xs
}

func TestApply(t *testing.T) {
	xs := actInputs()
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		for _, act := range allActs {
			// Every length up to 40 exercises the vector tails.
			for _, n := range []int{len(xs), 1, 7, 15, 17, 33, 40} {
				x, check := guarded(t, act.String(), n, 0)
				copy(x, xs[len(xs)-n:])
				in := append([]float32(nil), x...)
				kernels.Apply(act, x)
				check()
				for i, v := range in {
					want := act64(act, float64(v))
					got := float64(x[i])
					if math.IsNaN(want) || math.IsNaN(got) {
						if math.IsNaN(want) != math.IsNaN(got) {
							t.Fatalf("%v(%v) = %v, want %v", act, v, got, want)
						}
						continue
					}
					if math.IsInf(want, 0) && got == want {
						continue
					}
					// GELU of a negative x is x/2·(1 + erf(x/√2)), as PyTorch
					// computes it: 1 + erf cancels, so its error is absolute,
					// up to ~6 ulp of 1 times |x|/2 (< 9e-7).
					abs := 2e-7
					if act == kernels.GELU && v < 0 {
						abs = 1e-6
					}
					if d := math.Abs(got - want); d > 1e-6*math.Abs(want)+1e-30 && d > abs {
						t.Fatalf("%v(%v) = %v, want %v (error %.3g)", act, v, got, want, d)
					}
				}
			}
		}
	})
}

func TestActString(t *testing.T) {
	for _, tc := range []struct {
		a    kernels.Act
		want string
	}{{kernels.Identity, "identity"}, {kernels.LeakyReLU, "leaky_relu"}, {kernels.GELU, "gelu"}, {kernels.Act(9), "Act(9)"}} {
		if got := fmt.Sprint(tc.a); got != tc.want {
			t.Errorf("%d: got %q, want %q", tc.a, got, tc.want)
		}
	}
}

// TestApplyPlaceIndependent: an element's activation does not depend on
// where it sits in the call (a full vector or the last, partial one), so a
// forward's results do not depend on how its images are grouped in calls.
// The second input has a first pair of vectors all below tanh's switch at
// 0.625, which AVX-512 computes by the polynomial alone, against the same
// values in calls too short for a pair.
func TestApplyPlaceIndependent(t *testing.T) {
	const n = 64
	x, small := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i-n/2)*0.173 + 0.011
		small[i] = float32(i%32-16)*0.039 + 0.005
		if i >= 40 {
			small[i] = float32(i) * 0.5
		}
	}
	for _, x := range [][]float32{x, small} {
		placeIndependent(t, x)
	}
}

func placeIndependent(t *testing.T, x []float32) {
	n := len(x)
	for _, act := range []kernels.Act{kernels.Tanh, kernels.Sigmoid, kernels.GELU, kernels.ReLU, kernels.LeakyReLU} {
		full := append([]float32(nil), x...)
		kernels.Apply(act, full)
		for l := 1; l < n; l++ {
			part := append([]float32(nil), x[:l]...)
			kernels.Apply(act, part)
			for i, v := range part {
				if math.Float32bits(v) != math.Float32bits(full[i]) {
					t.Fatalf("%v of %v: %v as element %d of %d, %v of %d", act, x[i], v, i, l, full[i], n)
				}
			}
		}
	}
}

// TestApplySIMDPathsAgree: the AVX2 and AVX-512 activations give the same
// bits (the same operations in the same order, an IEEE division; AVX-512's
// pair branch only skips a formula whose lanes the choice drops), on the
// sweep of actInputs, random bit patterns, and runs below tanh's and
// sigmoid's switch points so that AVX-512 takes its polynomial-only pairs.
func TestApplySIMDPathsAgree(t *testing.T) {
	if !slices.Contains(kernels.Paths(), kernels.AVX2) || !slices.Contains(kernels.Paths(), kernels.AVX512) {
		t.Skip("needs both AVX2 and AVX-512")
	}
	defer kernels.Select(kernels.Selected())
	xs := actInputs()
	r := rand.New(rand.NewPCG(5, 6))
	for range 1 << 16 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	for i := range 1 << 12 {
		xs = append(xs, float32(r.NormFloat64()*0.3), float32(i%64-32)*0.038)
	}
	for _, act := range allActs {
		var res [2][]float32
		for i, p := range []kernels.Path{kernels.AVX2, kernels.AVX512} {
			kernels.Select(p)
			res[i] = append([]float32(nil), xs...)
			kernels.Apply(act, res[i])
		}
		for i, v := range res[0] {
			w := res[1][i]
			if math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
				t.Fatalf("%v(%v): AVX2 %v, AVX-512 %v", act, xs[i], v, w)
			}
		}
	}
}
