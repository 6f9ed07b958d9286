package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// TestWinogradError measures the Winograd variant's error against the
// float64 definition, relative to Σ|terms| of each output, next to the
// direct sum's, on layers of the kind the presets hold (weights and inputs
// of both signs, He-scaled). The transforms' rounding may cost a few times
// the direct sum's error, no more: the bound is 16× the direct sum's worst
// and 4e-6 of the magnitude (F(2, 5) measured 1.1e-6, 6× the direct
// sum's).
func TestWinogradError(t *testing.T) {
	for _, cc := range []convCase{
		{c: 38, h: 14, w: 14, oc: 24, k: 5, stride: 1, pad: 2, b: 2},
		{c: 64, h: 13, w: 13, oc: 20, k: 3, stride: 1, pad: 1, b: 2},
		{c: 10, h: 14, w: 14, oc: 29, k: 5, stride: 1, pad: 2, b: 3},
		{c: 20, h: 13, w: 13, oc: 9, k: 5, stride: 1, pad: 0, b: 3},
		{c: 8, h: 28, w: 28, oc: 8, k: 3, stride: 1, pad: 1, b: 1},
	} {
		s := cc.shape()
		r := rand.New(rand.NewPCG(31, 32))
		src := randSlice(r, cc.b*s.C*s.H*s.W, 1)
		w := randSlice(r, s.OC*s.C*s.K*s.K, math.Sqrt(2/float64(s.C*s.K*s.K)))
		bias := randSlice(r, s.OC, 0.1)
		want, mag := convRef(src, w, bias, s, cc.b, kernels.Identity)
		var worst [2]float64
		for i, mode := range []string{"classic", "winograd"} {
			prev := kernels.SetConvMode(mode)
			got := make([]float32, len(want))
			kernels.Conv2D(got, src, w, bias, s, cc.b, kernels.Identity, make([]float32, kernels.ConvWorkspace(s, cc.b, 1)), 1)
			kernels.SetConvMode(prev)
			for j, v := range want {
				worst[i] = max(worst[i], math.Abs(float64(got[j])-v)/mag[j])
			}
		}
		t.Logf("%+v: worst error / Σ|terms|: direct %.3g, Winograd %.3g", cc, worst[0], worst[1])
		if worst[1] > 16*worst[0] || worst[1] > 4e-6 {
			t.Errorf("%+v: Winograd error %.3g of the magnitude, direct %.3g", cc, worst[1], worst[0])
		}
	}
}
