package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// Each benchmark has one sub-benchmark per SIMD path, so that a run compares
// them; the pure-Go path joins with -v. FLOPs are counted as the population
// format counts them: 2 × multiply-adds.

type benchConv struct {
	name                      string
	c, hw, oc, k, stride, pad int
}

// Shapes typical of evolved CNNs on 28×28 inputs.
var benchConvs = []benchConv{
	{"c1_28_oc8_k3", 1, 28, 8, 3, 1, 1},
	{"c1_28_oc32_k5", 1, 28, 32, 5, 1, 2},
	{"c4_28_oc4_k3", 4, 28, 4, 3, 1, 1},
	{"c8_28_oc16_k3", 8, 28, 16, 3, 1, 1},
	{"c16_28_oc16_k3", 16, 28, 16, 3, 1, 1},
	{"c16_14_oc32_k3", 16, 14, 32, 3, 1, 1},
	{"c32_14_oc64_k3", 32, 14, 64, 3, 1, 1},
	{"c32_28_oc64_k3s2", 32, 28, 64, 3, 2, 1},
	{"c64_7_oc128_k3", 64, 7, 128, 3, 1, 1},
	{"c128_7_oc128_k3", 128, 7, 128, 3, 1, 1},
	{"c64_14_oc64_k1", 64, 14, 64, 1, 1, 0},
	{"c128_7_oc64_k5", 128, 7, 64, 5, 1, 2},
	{"c64_14_oc128_k3s2", 64, 14, 128, 3, 2, 1},
	// The heaviest layers of a generated wide (16–128 channel) and small
	// (4–32) population: odd channel counts and odd map sizes.
	{"w_c89_26_oc57_k3", 89, 26, 57, 3, 1, 1},
	{"w_c122_14_oc115_k3", 122, 14, 115, 3, 1, 1},
	{"w_c38_14_oc120_k5", 38, 14, 120, 5, 1, 2},
	{"w_c71_10_oc102_k5", 71, 10, 102, 5, 1, 2},
	{"w_c39_27_oc30_k5p0", 39, 27, 30, 5, 1, 0},
	{"s_c10_14_oc29_k5", 10, 14, 29, 5, 1, 2},
	{"s_c4_26_oc11_k5", 4, 26, 11, 5, 1, 2},
	{"s_c22_13_oc22_k3", 22, 13, 22, 3, 1, 1},
	{"s_c28_14_oc26_k3s2", 28, 14, 26, 3, 2, 1},
	// No padding, stride 1: read in place, not copied.
	{"s_c12_28_oc6_k3p0", 12, 28, 6, 3, 1, 0},
	{"s_c20_13_oc9_k5p0", 20, 13, 9, 5, 1, 0},
	// A 1×1 filter of stride 2: only one phase plane of four is built.
	{"w_c78_28_oc32_k1s2", 78, 28, 32, 1, 2, 0},
	// 1×1 filters of the small preset, read in place by the direct tiles.
	{"s_c1_28_oc28_k1", 1, 28, 28, 1, 1, 0},
	{"s_c28_14_oc4_k1", 28, 14, 4, 1, 1, 0},
}

func benchPaths(b *testing.B, f func(b *testing.B)) {
	for _, p := range kernels.Paths() {
		if p == kernels.PureGo && !testing.Verbose() {
			continue // minutes per shape; run with -v to include it
		}
		b.Run(p.String(), func(b *testing.B) {
			prev, _ := kernels.Select(p)
			defer kernels.Select(prev)
			f(b)
		})
	}
}

func BenchmarkConv2D(b *testing.B) {
	for _, bc := range benchConvs {
		for _, threads := range []int{1, 2} {
			batch := 128
			s := kernels.ConvShape{C: bc.c, H: bc.hw, W: bc.hw, OC: bc.oc, K: bc.k, Stride: bc.stride, Pad: bc.pad,
				OH: kernels.OutSize(bc.hw, bc.k, bc.stride, bc.pad), OW: kernels.OutSize(bc.hw, bc.k, bc.stride, bc.pad)}
			r := rand.New(rand.NewPCG(1, 1))
			src := randSlice(r, batch*s.C*s.H*s.W, 1)
			w := randSlice(r, s.OC*s.C*s.K*s.K, 0.1)
			bias := randSlice(r, s.OC, 0.1)
			dst := make([]float32, batch*s.OC*s.OH*s.OW)
			ws := make([]float32, kernels.ConvWorkspace(s, batch, threads))
			b.Run(fmt.Sprintf("%s/b%d/t%d", bc.name, batch, threads), func(b *testing.B) {
				benchPaths(b, func(b *testing.B) {
					for b.Loop() {
						kernels.Conv2D(dst, src, w, bias, s, batch, kernels.ReLU, ws, threads)
					}
					b.ReportMetric(float64(s.FLOPs())*float64(batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			})
		}
	}
}

func BenchmarkDense(b *testing.B) {
	for _, d := range []struct{ in, out int }{{128, 10}, {784, 10}, {3136, 10}, {784, 128}, {1024, 256}} {
		for _, threads := range []int{1, 2} {
			batch := 256
			r := rand.New(rand.NewPCG(1, 1))
			src, w, bias := randSlice(r, batch*d.in, 1), randSlice(r, d.out*d.in, 0.1), randSlice(r, d.out, 0.1)
			dst := make([]float32, batch*d.out)
			ws := make([]float32, kernels.DenseWorkspace(d.in, d.out, batch, threads))
			b.Run(fmt.Sprintf("in%d_out%d/b%d/t%d", d.in, d.out, batch, threads), func(b *testing.B) {
				benchPaths(b, func(b *testing.B) {
					for b.Loop() {
						kernels.Dense(dst, src, w, bias, batch, d.in, d.out, kernels.Identity, ws, threads)
					}
					b.ReportMetric(float64(kernels.DenseFLOPs(d.in, d.out))*float64(batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			})
		}
	}
}

// BenchmarkSGEMM is the ceiling of the package's own micro-kernels: a square
// 1024³ product through Dense (C = X·Wᵀ, X and W both 1024×1024).
func BenchmarkSGEMM(b *testing.B) {
	const n = 1024
	for _, threads := range []int{1, 2} {
		r := rand.New(rand.NewPCG(1, 1))
		src, w, bias := randSlice(r, n*n, 1), randSlice(r, n*n, 1), make([]float32, n)
		dst := make([]float32, n*n)
		ws := make([]float32, kernels.DenseWorkspace(n, n, n, threads))
		b.Run(fmt.Sprintf("1024/t%d", threads), func(b *testing.B) {
			benchPaths(b, func(b *testing.B) {
				for b.Loop() {
					kernels.Dense(dst, src, w, bias, n, n, n, kernels.Identity, ws, threads)
				}
				b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkConv2DModes compares the direct and the packed convolution on
// the selected path (the cost model in planConv picks between them).
func BenchmarkConv2DModes(b *testing.B) {
	for _, bc := range benchConvs {
		batch := 128
		s := kernels.ConvShape{C: bc.c, H: bc.hw, W: bc.hw, OC: bc.oc, K: bc.k, Stride: bc.stride, Pad: bc.pad,
			OH: kernels.OutSize(bc.hw, bc.k, bc.stride, bc.pad), OW: kernels.OutSize(bc.hw, bc.k, bc.stride, bc.pad)}
		r := rand.New(rand.NewPCG(1, 1))
		src := randSlice(r, batch*s.C*s.H*s.W, 1)
		w := randSlice(r, s.OC*s.C*s.K*s.K, 0.1)
		bias := randSlice(r, s.OC, 0.1)
		dst := make([]float32, batch*s.OC*s.OH*s.OW)
		for _, mode := range []string{"auto", "direct", "packed", "classic", "winograd"} {
			prev := kernels.SetConvMode(mode)
			ws := make([]float32, kernels.ConvWorkspace(s, batch, 1))
			b.Run(fmt.Sprintf("%s/%s", bc.name, mode), func(b *testing.B) {
				for b.Loop() {
					kernels.Conv2D(dst, src, w, bias, s, batch, kernels.ReLU, ws, 1)
				}
				b.ReportMetric(float64(s.FLOPs())*float64(batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			kernels.SetConvMode(prev)
		}
	}
}

// BenchmarkConvPool is the evolve genomes' first two steps on a tile of 72
// images (what the CPU backend's tile holds for them): a 3×3 ReLU
// convolution of one 28×28 channel into 8 or 16, then the 4×4 stride-4 max
// pool, step by step over the tile (chunk=72) or a few images at a time
// (the convolution's output of those images still in L2 for the pool).
func BenchmarkConvPool(b *testing.B) {
	const tile = 72
	for _, oc := range []int{8, 16} {
		s := kernels.ConvShape{C: 1, H: 28, W: 28, OC: oc, K: 3, Stride: 1, Pad: 1, OH: 28, OW: 28}
		r := rand.New(rand.NewPCG(1, 1))
		src, w, bias := randSlice(r, tile*28*28, 1), randSlice(r, oc*9, 1), randSlice(r, oc, 0.1)
		conv := make([]float32, tile*oc*28*28)
		pooled := make([]float32, tile*oc*7*7)
		ws := make([]float32, kernels.ConvPackedWorkspace(s, tile, 1))
		packed := make([]float32, kernels.PackedConvLen(s))
		pk := kernels.PackConv(packed, w, bias, s, tile, 1)
		for _, chunk := range []int{tile, max(1, (256<<10)/4/(oc*28*28))} {
			b.Run(fmt.Sprintf("c%d/chunk=%d", oc, chunk), func(b *testing.B) {
				for b.Loop() {
					for a := 0; a < tile; a += chunk {
						m := min(chunk, tile-a)
						co := conv[:m*oc*28*28]
						kernels.Conv2DPacked(co, src[a*28*28:(a+m)*28*28], packed, pk, bias, s, m, kernels.ReLU, ws, 1)
						kernels.MaxPool2D(pooled[a*oc*49:(a+m)*oc*49], co, m, oc, 28, 28, 4, 4, 7, 7)
					}
				}
			})
		}
	}
}
