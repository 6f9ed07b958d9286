package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// guard is the sentinel written around every output and scratch slice; a
// kernel that writes outside its slice changes it.
const guard = 64

var sentinel = math.Float32frombits(0x7fc0dead)

// guarded returns a slice of n floats with guard sentinels on both sides and
// a function that fails t if the sentinels changed. The slice itself starts
// filled with fill.
func guarded(t *testing.T, name string, n int, fill float32) ([]float32, func()) {
	buf := make([]float32, n+2*guard)
	for i := range buf {
		buf[i] = sentinel
	}
	s := buf[guard : guard+n : guard+n]
	for i := range s {
		s[i] = fill
	}
	return s, func() {
		t.Helper()
		for i, v := range buf {
			if (i < guard || i >= guard+n) && math.Float32bits(v) != math.Float32bits(sentinel) {
				t.Fatalf("%s: guard band overwritten at %d (slice of %d): %v", name, i-guard, n, v)
			}
		}
	}
}

// forEachPath runs f once per kernel path available here, as subtests.
func forEachPath(t *testing.T, f func(t *testing.T, p kernels.Path)) {
	for _, p := range kernels.Paths() {
		t.Run(p.String(), func(t *testing.T) {
			prev, err := kernels.Select(p)
			if err != nil {
				t.Fatal(err)
			}
			defer kernels.Select(prev)
			f(t, p)
		})
	}
}

func randSlice(r *rand.Rand, n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32((r.Float64()*2 - 1) * scale)
	}
	return s
}

// act64 is the float64 definition of each activation.
func act64(a kernels.Act, x float64) float64 {
	switch a {
	case kernels.ReLU:
		if x < 0 {
			return 0
		}
	case kernels.LeakyReLU:
		if x < 0 {
			return 0.01 * x
		}
	case kernels.Tanh:
		return math.Tanh(x)
	case kernels.Sigmoid:
		return 1 / (1 + math.Exp(-x))
	case kernels.GELU:
		return x * 0.5 * (1 + math.Erf(x/math.Sqrt2))
	}
	return x
}

var allActs = []kernels.Act{kernels.Identity, kernels.ReLU, kernels.LeakyReLU, kernels.Tanh, kernels.Sigmoid, kernels.GELU}

// checkClose compares got with want element by element: each may differ by
// 1e-5 of the magnitude mag[i] (the sum of the absolute terms) plus 1e-6.
func checkClose(t *testing.T, what string, got []float32, want, mag []float64) {
	t.Helper()
	bad := 0
	for i, w := range want {
		g := float64(got[i])
		tol := 1e-5*mag[i] + 1e-6 + 2e-6*math.Abs(w)
		if math.IsNaN(w) != math.IsNaN(g) || math.Abs(g-w) > tol {
			if bad < 5 {
				t.Errorf("%s: [%d] = %v, want %v (tol %.3g)", what, i, g, w, tol)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d wrong", what, bad, len(want))
	}
}

func short() bool { return testing.Short() || raceEnabled }
