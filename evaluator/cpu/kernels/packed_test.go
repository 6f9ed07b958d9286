package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// TestConv2DPackedSameAsConv2D packs each shape's weights once, for a batch
// other than the one computed, and checks Conv2DPacked against Conv2D bit
// for bit, on every path and in both algorithms, with guard bands around the
// output, the workspace and the packed weights.
func TestConv2DPackedSameAsConv2D(t *testing.T) {
	for _, mode := range []string{"auto", "direct", "packed", "winograd"} {
		t.Run(mode, func(t *testing.T) {
			prev := kernels.SetConvMode(mode)
			defer kernels.SetConvMode(prev)
			cases := convCases()
			forEachPath(t, func(t *testing.T, p kernels.Path) {
				r := rand.New(rand.NewPCG(5, 6))
				for i, cc := range cases {
					s := cc.shape()
					act := allActs[i%len(allActs)]
					threads := 1 + i%3
					name := fmt.Sprintf("%+v/%v/t%d", cc, act, threads)
					src := randSlice(r, cc.b*s.C*s.H*s.W, 1)
					w := randSlice(r, s.OC*s.C*s.K*s.K, 1)
					bias := randSlice(r, s.OC, 0.5)
					want := make([]float32, cc.b*s.OC*s.OH*s.OW)
					kernels.Conv2D(want, src, w, bias, s, cc.b, act, make([]float32, kernels.ConvWorkspace(s, cc.b, threads)), threads)

					packB := cc.b + i%5 // packed for another batch: the tile width may differ
					packed, checkPacked := guarded(t, name+" packed", kernels.PackedConvLen(s), float32(math.NaN()))
					pk := kernels.PackConv(packed, w, bias, s, packB, threads)
					checkPacked()
					dst, checkDst := guarded(t, name+" dst", len(want), float32(math.NaN()))
					ws, checkWs := guarded(t, name+" ws", kernels.ConvPackedWorkspace(s, max(cc.b, packB), threads), float32(math.NaN()))
					kernels.Conv2DPacked(dst, src, packed, pk, bias, s, cc.b, act, ws, threads)
					checkDst()
					checkWs()
					if !slices.EqualFunc(dst, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
						t.Fatalf("%s: Conv2DPacked differs from Conv2D", name)
					}
				}
			})
		})
	}
}

// TestDensePackedSameAsDense is TestConv2DPackedSameAsConv2D for dense
// layers.
func TestDensePackedSameAsDense(t *testing.T) {
	type tc struct{ b, in, out int }
	cases := []tc{{1, 1, 1}, {1, 3, 10}, {2, 17, 16}, {5, 64, 17}, {13, 33, 33}, {29, 129, 10}, {64, 50, 70}, {3, 7, 100}, {31, 16, 64}, {40, 9, 48}, {8, 300, 130}}
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(9, 10))
		for i, c := range cases {
			act := allActs[i%len(allActs)]
			threads := 1 + i%3
			name := fmt.Sprintf("%+v/%v/t%d", c, act, threads)
			src, w, bias := randSlice(r, c.b*c.in, 1), randSlice(r, c.out*c.in, 1), randSlice(r, c.out, 1)
			want := make([]float32, c.b*c.out)
			kernels.Dense(want, src, w, bias, c.b, c.in, c.out, act, make([]float32, kernels.DenseWorkspace(c.in, c.out, c.b, threads)), threads)

			packB := []int{1, 8, 256}[i%3]
			packed, checkPacked := guarded(t, name+" packed", kernels.PackedDenseLen(c.in, c.out), float32(math.NaN()))
			pk := kernels.PackDense(packed, w, c.in, c.out, packB, threads)
			checkPacked()
			dst, checkDst := guarded(t, name+" dst", len(want), float32(math.NaN()))
			ws, checkWs := guarded(t, name+" ws", kernels.DensePackedWorkspace(c.in, c.out, c.b, threads), float32(math.NaN()))
			kernels.DensePacked(dst, src, packed, pk, bias, c.b, c.in, c.out, act, ws, threads)
			checkDst()
			checkWs()
			if !slices.EqualFunc(dst, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				t.Fatalf("%s: DensePacked differs from Dense", name)
			}
		}
	})
}

// TestPackedKeepsItsPath packs on one path and computes after another path
// is selected: the call runs on the packing's path (its tile geometry),
// with the same results as that path's Conv2D and Dense, and allocates
// nothing.
func TestPackedKeepsItsPath(t *testing.T) {
	paths := kernels.Paths()
	if len(paths) < 2 {
		t.Skip("one kernel path only")
	}
	defer kernels.Select(kernels.Selected())
	r := rand.New(rand.NewPCG(11, 12))
	s := convCase{c: 6, h: 9, w: 9, oc: 40, k: 3, stride: 1, pad: 1, b: 4}.shape()
	src, w, bias := randSlice(r, 4*s.C*s.H*s.W, 1), randSlice(r, s.OC*s.C*9, 1), randSlice(r, s.OC, 1)
	dsrc, dw, dbias := randSlice(r, 4*50, 1), randSlice(r, 70*50, 1), randSlice(r, 70, 1)
	for _, pack := range paths {
		kernels.Select(pack)
		want := make([]float32, 4*s.OC*s.OH*s.OW)
		kernels.Conv2D(want, src, w, bias, s, 4, kernels.ReLU, make([]float32, kernels.ConvWorkspace(s, 4, 1)), 1)
		dwant := make([]float32, 4*70)
		kernels.Dense(dwant, dsrc, dw, dbias, 4, 50, 70, kernels.ReLU, make([]float32, kernels.DenseWorkspace(50, 70, 4, 1)), 1)
		packed := make([]float32, kernels.PackedConvLen(s))
		pk := kernels.PackConv(packed, w, bias, s, 4, 1)
		dpacked := make([]float32, kernels.PackedDenseLen(50, 70))
		dpk := kernels.PackDense(dpacked, dw, 50, 70, 4, 1)
		for _, run := range paths {
			kernels.Select(run)
			dst, ws := make([]float32, len(want)), make([]float32, kernels.ConvPackedWorkspace(s, 4, 1))
			ddst, dws := make([]float32, len(dwant)), make([]float32, kernels.DensePackedWorkspace(50, 70, 4, 1))
			if n := testing.AllocsPerRun(5, func() {
				kernels.Conv2DPacked(dst, src, packed, pk, bias, s, 4, kernels.ReLU, ws, 1)
				kernels.DensePacked(ddst, dsrc, dpacked, dpk, dbias, 4, 50, 70, kernels.ReLU, dws, 1)
			}); n != 0 {
				t.Errorf("packed on %v, run on %v: %v allocations per call", pack, run, n)
			}
			if !slices.Equal(dst, want) || !slices.Equal(ddst, dwant) {
				t.Errorf("packed on %v, run on %v: results differ from %v's", pack, run, pack)
			}
		}
	}
}
