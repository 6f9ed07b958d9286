package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConv2DShifted times the direct variant over the padded rows
// (never), over the column-shifted planes (always) and as the cost model
// picks (auto), one thread, on stride-1 shapes of the small preset's kind:
// the one-channel first layers, where the shifted planes win by 8–30 %,
// and deeper layers, where their K-fold copy and footprint can lose. The
// sub-benchmark's name ends with the tile width and whether the plan took
// the shifted planes.
//
//	go test -run '^$' -bench Conv2DShifted ./evaluator/cpu/kernels/
func BenchmarkConv2DShifted(b *testing.B) {
	shapes := []ConvShape{
		{C: 1, H: 28, W: 28, OC: 8, K: 5, Pad: 2},
		{C: 1, H: 28, W: 28, OC: 24, K: 5, Pad: 2},
		{C: 1, H: 28, W: 28, OC: 16, K: 3, Pad: 1},
		{C: 1, H: 28, W: 28, OC: 16, K: 5, Pad: 0},
		{C: 8, H: 14, W: 14, OC: 16, K: 5, Pad: 2},
		{C: 24, H: 14, W: 14, OC: 8, K: 5, Pad: 2},
		{C: 16, H: 14, W: 14, OC: 16, K: 3, Pad: 1},
		{C: 8, H: 14, W: 14, OC: 16, K: 5, Pad: 0},
		{C: 16, H: 14, W: 14, OC: 8, K: 3, Pad: 0},
		{C: 8, H: 7, W: 7, OC: 16, K: 5, Pad: 2},
		{C: 16, H: 7, W: 7, OC: 16, K: 3, Pad: 1},
		{C: 20, H: 28, W: 28, OC: 8, K: 3, Pad: 1},
	}
	const batch = 16
	defer func(m, sh int) { convMode, shiftPlanes = m, sh }(convMode, shiftPlanes)
	for _, s := range shapes {
		s.Stride = 1
		s.OH, s.OW = OutSize(s.H, s.K, 1, s.Pad), OutSize(s.W, s.K, 1, s.Pad)
		r := rand.New(rand.NewPCG(1, 1))
		src, w, bias := normals(r, batch*s.C*s.H*s.W), normals(r, s.OC*s.C*s.K*s.K), normals(r, s.OC)
		dst := make([]float32, batch*s.OC*s.OH*s.OW)
		for _, sh := range []int{shiftNever, shiftAlways, shiftAuto} {
			convMode, shiftPlanes = modeDirect, sh
			ws := make([]float32, ConvWorkspace(s, batch, 1))
			pl := planConv(selected(), s, batch, 1, 0, modeDirect, false, true)
			name := fmt.Sprintf("C%d/%dx%d/k%d/p%d/oc%d/%s/nv%d/shifted=%v", s.C, s.H, s.W, s.K, s.Pad, s.OC,
				[...]string{"auto", "never", "always"}[sh], pl.nv, pl.shifted)
			b.Run(name, func(b *testing.B) {
				convMode, shiftPlanes = modeDirect, sh
				for b.Loop() {
					Conv2D(dst, src, w, bias, s, batch, Identity, ws, 1)
				}
				b.ReportMetric(float64(s.FLOPs())*batch*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// normals returns n draws of N(0, 1).
func normals(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}
