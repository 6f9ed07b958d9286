package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// The memory-bound kernels report elements per second (Gelem/s) of input.

func reportElems(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
}

func BenchmarkPool(b *testing.B) {
	for _, c := range []struct {
		c, hw, k, s int
		relu        bool // the input a ReLU's output: no sign bits
	}{{16, 28, 2, 2, false}, {64, 14, 2, 2, false}, {128, 7, 2, 2, false}, {32, 28, 3, 2, false}, {8, 28, 4, 4, false},
		{8, 28, 4, 4, true}, {16, 28, 4, 4, true}} {
		batch := 128
		oh := kernels.OutSize(c.hw, c.k, c.s, 0)
		r := rand.New(rand.NewPCG(1, 1))
		src := randSlice(r, batch*c.c*c.hw*c.hw, 1)
		name := fmt.Sprintf("c%d_%d_k%ds%d", c.c, c.hw, c.k, c.s)
		if c.relu {
			name += "_relu"
			for i, v := range src {
				src[i] = max(v, 0)
			}
		}
		dst := make([]float32, batch*c.c*oh*oh)
		for _, isMax := range []bool{true, false} {
			name := fmt.Sprintf("%s/max=%v", name, isMax)
			b.Run(name, func(b *testing.B) {
				benchPaths(b, func(b *testing.B) {
					for b.Loop() {
						if isMax {
							kernels.MaxPool2D(dst, src, batch, c.c, c.hw, c.hw, c.k, c.s, oh, oh)
						} else {
							kernels.AvgPool2D(dst, src, batch, c.c, c.hw, c.hw, c.k, c.s, oh, oh)
						}
					}
					reportElems(b, len(src))
				})
			})
		}
	}
}

func BenchmarkApply(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	orig := randSlice(r, 16*28*28, 4)
	x := make([]float32, len(orig))
	for _, act := range allActs[1:] {
		b.Run(act.String(), func(b *testing.B) {
			benchPaths(b, func(b *testing.B) {
				// One image's activations, fresh each time: applying GELU
				// over and over would drive them into denormals.
				for b.Loop() {
					copy(x, orig)
					kernels.Apply(act, x)
				}
				reportElems(b, len(x))
			})
		})
	}
}

func BenchmarkGlobalAvgPool(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, hw := range []int{1, 9, 49, 196} {
		src := randSlice(r, 128*64*hw, 1)
		dst := make([]float32, 128*64)
		b.Run(fmt.Sprintf("hw%d", hw), func(b *testing.B) {
			benchPaths(b, func(b *testing.B) {
				for b.Loop() {
					kernels.GlobalAvgPool(dst, src, 128, 64, hw)
				}
				reportElems(b, len(src))
			})
		})
	}
}

func BenchmarkSumMerge(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	src := randSlice(r, 128*32*196, 1)
	dst := randSlice(r, 128*48*196, 1)
	benchPaths(b, func(b *testing.B) {
		for b.Loop() {
			kernels.SumMerge(dst, 48, src, 32, 128, 196)
		}
		reportElems(b, len(src))
	})
}

func BenchmarkBF16(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	f := randSlice(r, 1<<20, 10)
	h := make([]uint16, len(f))
	b.Run("to", func(b *testing.B) {
		benchPaths(b, func(b *testing.B) {
			for b.Loop() {
				kernels.F32ToBF16(h, f)
			}
			reportElems(b, len(f))
		})
	})
	b.Run("from", func(b *testing.B) {
		benchPaths(b, func(b *testing.B) {
			for b.Loop() {
				kernels.BF16ToF32(f, h)
			}
			reportElems(b, len(f))
		})
	})
}
