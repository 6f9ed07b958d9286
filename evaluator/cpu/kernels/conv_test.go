package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// convRef is the float64 definition, a plain loop over the formula: it
// returns the activated outputs and, for the tolerance, Σ|terms|.
func convRef(src, w, bias []float32, s kernels.ConvShape, b int, act kernels.Act) (out, mag []float64) {
	n := b * s.OC * s.OH * s.OW
	out, mag = make([]float64, n), make([]float64, n)
	i := 0
	for im := range b {
		for oc := range s.OC {
			for oh := range s.OH {
				for ow := range s.OW {
					acc, m := float64(bias[oc]), math.Abs(float64(bias[oc]))
					for c := range s.C {
						for kh := range s.K {
							for kw := range s.K {
								ih, iw := oh*s.Stride+kh-s.Pad, ow*s.Stride+kw-s.Pad
								if ih < 0 || iw < 0 || ih >= s.H || iw >= s.W {
									continue
								}
								t := float64(w[((oc*s.C+c)*s.K+kh)*s.K+kw]) * float64(src[((im*s.C+c)*s.H+ih)*s.W+iw])
								acc += t
								m += math.Abs(t)
							}
						}
					}
					out[i], mag[i] = act64(act, acc), m
					i++
				}
			}
		}
	}
	return out, mag
}

type convCase struct {
	c, h, w, oc, k, stride, pad, b int
}

func (c convCase) shape() kernels.ConvShape {
	return kernels.ConvShape{C: c.c, H: c.h, W: c.w, OC: c.oc, K: c.k, Stride: c.stride, Pad: c.pad,
		OH: kernels.OutSize(c.h, c.k, c.stride, c.pad), OW: kernels.OutSize(c.w, c.k, c.stride, c.pad)}
}

func convCases() []convCase {
	cs := []convCase{
		{1, 1, 1, 1, 1, 1, 0, 1},
		{1, 5, 5, 1, 3, 1, 1, 1},
		{1, 28, 28, 4, 3, 1, 1, 2},
		{1, 28, 28, 8, 5, 1, 2, 1},
		{3, 9, 7, 5, 3, 2, 1, 3},
		{4, 14, 14, 16, 1, 1, 0, 2},
		{8, 7, 7, 33, 3, 1, 1, 2},
		{16, 7, 7, 29, 5, 1, 2, 1},
		{5, 11, 13, 13, 3, 2, 0, 2},
		{2, 10, 10, 7, 4, 3, 1, 3},
		{7, 6, 6, 15, 2, 2, 0, 2},
		{3, 3, 3, 2, 5, 1, 2, 2},
		{2, 9, 9, 3, 1, 2, 0, 3},
		{3, 9, 11, 4, 1, 2, 1, 2}, // 1×1 stride 2, odd padding: the odd pixels of even rows
		{2, 10, 13, 5, 1, 2, 2, 2},
		{6, 4, 4, 17, 3, 1, 0, 5},
		{1, 2, 30, 9, 1, 1, 0, 1},
		{32, 7, 7, 64, 3, 2, 1, 2},
		{2, 30, 45, 5, 3, 2, 1, 2},
		{1, 40, 33, 3, 5, 2, 2, 1},
		{3, 36, 70, 4, 2, 2, 0, 1},
	}
	r := rand.New(rand.NewPCG(1, 2))
	extra := 40
	if short() {
		extra = 8
	}
	for len(cs) < 19+extra {
		c := convCase{c: 1 + r.IntN(12), h: 1 + r.IntN(15), w: 1 + r.IntN(15), oc: 1 + r.IntN(40),
			k: 1 + r.IntN(5), stride: 1 + r.IntN(3), pad: r.IntN(3), b: 1 + r.IntN(4)}
		if c.pad >= c.k || kernels.OutSize(c.h, c.k, c.stride, c.pad) < 1 || kernels.OutSize(c.w, c.k, c.stride, c.pad) < 1 {
			continue
		}
		cs = append(cs, c)
	}
	return cs
}

func TestConv2D(t *testing.T) {
	for _, mode := range []string{"auto", "direct", "packed", "winograd"} {
		t.Run(mode, func(t *testing.T) {
			prev := kernels.SetConvMode(mode)
			defer kernels.SetConvMode(prev)
			testConv2D(t)
		})
	}
}

func testConv2D(t *testing.T) {
	cases := convCases()
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(3, 4))
		for i, cc := range cases {
			s := cc.shape()
			act := allActs[i%len(allActs)]
			threads := 1 + i%3
			name := fmt.Sprintf("%+v/%v/t%d", cc, act, threads)
			src := randSlice(r, cc.b*s.C*s.H*s.W, 1)
			w := randSlice(r, s.OC*s.C*s.K*s.K, 1)
			bias := randSlice(r, s.OC, 0.5)
			want, mag := convRef(src, w, bias, s, cc.b, act)
			srcCopy, wCopy := slices.Clone(src), slices.Clone(w)
			dst, checkDst := guarded(t, name+" dst", len(want), float32(math.NaN()))
			ws, checkWs := guarded(t, name+" ws", kernels.ConvWorkspace(s, cc.b, threads), float32(math.NaN()))
			kernels.Conv2D(dst, src, w, bias, s, cc.b, act, ws, threads)
			checkDst()
			checkWs()
			checkClose(t, name, dst, want, mag)
			if !slices.Equal(src, srcCopy) || !slices.Equal(w, wCopy) {
				t.Fatalf("%s: inputs modified", name)
			}
		}
	})
}

// TestConv2DThreadsAgree checks that the result does not depend on the
// thread count: each image is computed the same way whichever worker has it.
func TestConv2DThreadsAgree(t *testing.T) {
	for _, mode := range []string{"direct", "packed", "winograd"} {
		t.Run(mode, func(t *testing.T) {
			prev := kernels.SetConvMode(mode)
			defer kernels.SetConvMode(prev)
			testConv2DThreadsAgree(t)
		})
	}
}

func testConv2DThreadsAgree(t *testing.T) {
	// The second shape takes the Winograd variant (a 5×5 filter over 9
	// channels, odd output rows).
	for _, cc := range []convCase{{c: 5, h: 12, w: 12, oc: 20, k: 3, stride: 1, pad: 1, b: 7}, {c: 9, h: 12, w: 11, oc: 20, k: 5, stride: 1, pad: 2, b: 7}} {
		s := cc.shape()
		r := rand.New(rand.NewPCG(5, 6))
		src, w, bias := randSlice(r, cc.b*s.C*s.H*s.W, 1), randSlice(r, s.OC*s.C*s.K*s.K, 1), randSlice(r, s.OC, 1)
		forEachPath(t, func(t *testing.T, p kernels.Path) {
			var first []float32
			for threads := 1; threads <= 3; threads++ {
				dst := make([]float32, cc.b*s.OC*s.OH*s.OW)
				kernels.Conv2D(dst, src, w, bias, s, cc.b, kernels.GELU, make([]float32, kernels.ConvWorkspace(s, cc.b, threads)), threads)
				if first == nil {
					first = dst
				} else if !slices.Equal(first, dst) {
					t.Fatalf("%+v: threads %d differs from threads 1", cc, threads)
				}
			}
		})
	}
}

func TestConv2DAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := convCase{c: 8, h: 10, w: 10, oc: 8, k: 3, stride: 1, pad: 1, b: 2}.shape()
	src, w, bias := make([]float32, 2*8*100), make([]float32, 8*72), make([]float32, 8)
	dst := make([]float32, 2*8*100)
	for _, mode := range []string{"direct", "packed", "winograd"} {
		prev := kernels.SetConvMode(mode)
		ws := make([]float32, kernels.ConvWorkspace(s, 2, 1))
		forEachPath(t, func(t *testing.T, p kernels.Path) {
			if n := testing.AllocsPerRun(10, func() { kernels.Conv2D(dst, src, w, bias, s, 2, kernels.Tanh, ws, 1) }); n != 0 {
				t.Fatalf("%s: Conv2D allocates %v times per call", mode, n)
			}
		})
		kernels.SetConvMode(prev)
	}
}

func TestConv2DPanics(t *testing.T) {
	s := convCase{c: 1, h: 4, w: 4, oc: 1, k: 3, stride: 1, pad: 1, b: 1}.shape()
	bad := s
	bad.OH = 3
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"shape", func() { kernels.ConvWorkspace(bad, 1, 1) }},
		{"dst", func() {
			kernels.Conv2D(make([]float32, 15), make([]float32, 16), make([]float32, 9), make([]float32, 1), s, 1, kernels.ReLU, make([]float32, 4096), 1)
		}},
		{"ws", func() {
			kernels.Conv2D(make([]float32, 16), make([]float32, 16), make([]float32, 9), make([]float32, 1), s, 1, kernels.ReLU, make([]float32, 1), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tc.f()
		})
	}
}

// TestConv2DBatchInvariant checks that an image's output does not depend on
// the batch around it: tiles may span images (packed mode), but every output
// is the same sum in the same order, so the results are bit-identical.
//
// The shapes of stride 1 and no padding read a batch's images in place, all
// but the last (an image alone is copied): there the tiles' reads past an
// image fall in the next one, whose NaN and infinities (planted in image
// 4) must reach only lanes the stores drop.
func TestConv2DBatchInvariant(t *testing.T) {
	for _, cc := range []convCase{
		{c: 6, h: 7, w: 7, oc: 30, k: 3, stride: 1, pad: 1, b: 9}, {c: 3, h: 12, w: 11, oc: 5, k: 5, stride: 2, pad: 2, b: 9},
		{c: 5, h: 28, w: 28, oc: 7, k: 3, stride: 1, pad: 0, b: 9}, {c: 3, h: 9, w: 13, oc: 17, k: 5, stride: 1, pad: 0, b: 9},
		{c: 4, h: 14, w: 14, oc: 9, k: 1, stride: 1, pad: 0, b: 9}, {c: 2, h: 5, w: 6, oc: 3, k: 2, stride: 1, pad: 0, b: 9},
		// 1×1 and 2×2 output maps: packed, a group holds all nine images.
		{c: 9, h: 5, w: 5, oc: 20, k: 5, stride: 2, pad: 0, b: 9}, {c: 7, h: 2, w: 2, oc: 21, k: 5, stride: 1, pad: 2, b: 9},
		// Winograd: tiles over the images of a group, odd maps (a last
		// tile row and column of one output), no padding.
		{c: 9, h: 7, w: 7, oc: 30, k: 3, stride: 1, pad: 1, b: 9}, {c: 8, h: 9, w: 13, oc: 17, k: 5, stride: 1, pad: 0, b: 9},
	} {
		s := cc.shape()
		r := rand.New(rand.NewPCG(21, 22))
		src, w, bias := randSlice(r, cc.b*s.C*s.H*s.W, 1), randSlice(r, s.OC*s.C*s.K*s.K, 1), randSlice(r, s.OC, 1)
		in, out := s.C*s.H*s.W, s.OC*s.OH*s.OW
		for i, x := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for j := i; j < in; j += 3 {
				src[4*in+j] = x
			}
		}
		forEachPath(t, func(t *testing.T, p kernels.Path) {
			for _, mode := range []string{"auto", "direct", "packed", "winograd"} {
				prev := kernels.SetConvMode(mode)
				all := make([]float32, cc.b*out)
				kernels.Conv2D(all, src, w, bias, s, cc.b, kernels.Sigmoid, make([]float32, kernels.ConvWorkspace(s, cc.b, 2)), 2)
				one := make([]float32, out)
				for i := range cc.b {
					kernels.Conv2D(one, src[i*in:(i+1)*in], w, bias, s, 1, kernels.Sigmoid, make([]float32, kernels.ConvWorkspace(s, 1, 1)), 1)
					if !sameBits(one, all[i*out:(i+1)*out]) {
						t.Fatalf("%s: image %d alone differs from image %d in a batch of %d", mode, i, i, cc.b)
					}
				}
				kernels.SetConvMode(prev)
			}
		})
	}
}

// TestNoAllocs checks that the memory-bound kernels allocate nothing.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	src := make([]float32, 2*3*28*28)
	dst := make([]float32, 2*5*28*28)
	h := make([]uint16, len(src))
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		for name, f := range map[string]func(){
			"maxpool":  func() { kernels.MaxPool2D(dst, src, 2, 3, 28, 28, 2, 2, 14, 14) },
			"avgpool3": func() { kernels.AvgPool2D(dst, src, 2, 3, 28, 28, 3, 2, 13, 13) },
			"gap":      func() { kernels.GlobalAvgPool(dst, src, 2, 3, 784) },
			"sum":      func() { kernels.SumMerge(dst, 5, src, 3, 2, 784) },
			"concat":   func() { kernels.CopyChannels(dst, 5, 2, src, 3, 2, 784) },
			"gelu":     func() { kernels.Apply(kernels.GELU, dst) },
			"bf16":     func() { kernels.F32ToBF16(h, src); kernels.BF16ToF32(src, h) },
		} {
			if n := testing.AllocsPerRun(5, f); n != 0 {
				t.Errorf("%s allocates %v times per call", name, n)
			}
		}
	})
}

// TestConv2DSIMDPathsAgree checks that the AVX2 and AVX-512 kernels give
// bit-identical convolutions: both accumulate each output
// with fused multiply-adds in the same order.
func TestConv2DSIMDPathsAgree(t *testing.T) {
	if !slices.Contains(kernels.Paths(), kernels.AVX2) || !slices.Contains(kernels.Paths(), kernels.AVX512) {
		t.Skip("needs both AVX2 and AVX-512")
	}
	defer kernels.Select(kernels.Selected())
	r := rand.New(rand.NewPCG(23, 24))
	for _, cc := range convCases()[:12] {
		s := cc.shape()
		src, w, bias := randSlice(r, cc.b*s.C*s.H*s.W, 1), randSlice(r, s.OC*s.C*s.K*s.K, 1), randSlice(r, s.OC, 1)
		var res [2][]float32
		for i, p := range []kernels.Path{kernels.AVX2, kernels.AVX512} {
			kernels.Select(p)
			res[i] = make([]float32, cc.b*s.OC*s.OH*s.OW)
			kernels.Conv2D(res[i], src, w, bias, s, cc.b, kernels.LeakyReLU, make([]float32, kernels.ConvWorkspace(s, cc.b, 1)), 1)
		}
		if !slices.Equal(res[0], res[1]) {
			t.Fatalf("%+v: AVX2 and AVX-512 differ", cc)
		}
	}
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
