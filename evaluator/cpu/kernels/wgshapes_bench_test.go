package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
)

// BenchmarkWinogradShapes times the Winograd variant against the classic
// convolution (direct or packed) on every 3×3 and 5×5 stride-1 layer of
// three seeds of the bench's small and wide populations (28×28 inputs), 32
// images, one thread, ReLU, weights packed once. bench/wgfit.py fits
// wgRatio's coefficients (conv_winograd.go) to its output:
//
//	go test -run '^$' -bench WinogradShapes -benchtime 3x ./evaluator/cpu/kernels/ | python3 bench/wgfit.py
func BenchmarkWinogradShapes(b *testing.B) {
	seen := map[kernels.ConvShape]bool{}
	var shapes []kernels.ConvShape
	for _, cfg := range []struct {
		gen neat.GenConfig
		n   int
	}{{neat.DefaultGenConfig(), 64}, {neat.WideGenConfig(), 16}} {
		for seed := int64(1); seed <= 3; seed++ {
			pop := neat.Generate(seed, cfg.n, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, cfg.gen)
			for _, g := range pop.Genomes {
				gr, err := neat.Compile(g, pop.Input, 10)
				if err != nil {
					b.Fatal(err)
				}
				for _, st := range gr.Steps {
					n := st.Node
					s := kernels.ConvShape{C: st.In.C, H: st.In.H, W: st.In.W, OC: st.Out.C, K: n.Kernel,
						Stride: n.Stride, Pad: n.Padding, OH: st.Out.H, OW: st.Out.W}
					if n.Op != neat.OpConv2D || s.Stride != 1 || (s.K != 3 && s.K != 5) || s.OH < 2 || s.OW < 2 || seen[s] {
						continue
					}
					seen[s] = true
					shapes = append(shapes, s)
				}
			}
		}
	}
	sort.Slice(shapes, func(i, j int) bool { return shapes[i].FLOPs() > shapes[j].FLOPs() })
	const batch = 32
	for _, s := range shapes {
		r := rand.New(rand.NewPCG(1, 1))
		src := randSlice(r, batch*s.C*s.H*s.W, 1)
		w := randSlice(r, s.OC*s.C*s.K*s.K, 0.1)
		bias := randSlice(r, s.OC, 0.1)
		dst := make([]float32, batch*s.OC*s.OH*s.OW)
		for _, mode := range []string{"classic", "winograd"} {
			name := fmt.Sprintf("c%d_h%d_w%d_oc%d_k%d_p%d/%s", s.C, s.H, s.W, s.OC, s.K, s.Pad, mode)
			b.Run(name, func(b *testing.B) {
				prev := kernels.SetConvMode(mode)
				defer kernels.SetConvMode(prev)
				pk := make([]float32, kernels.PackedConvLen(s))
				pkg := kernels.PackConv(pk, w, bias, s, batch, 1)
				ws := make([]float32, kernels.ConvWorkspace(s, batch, 1))
				for b.Loop() {
					kernels.Conv2DPacked(dst, src, pk, pkg, bias, s, batch, kernels.ReLU, ws, 1)
				}
				b.ReportMetric(float64(s.FLOPs())*batch*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
