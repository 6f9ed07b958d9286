package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

func poolRef(src []float32, planes, h, w, k, s, oh, ow int, isMax bool) []float64 {
	out := make([]float64, 0, planes*oh*ow)
	for pl := range planes {
		for oy := range oh {
			for ox := range ow {
				acc := math.Inf(-1)
				if !isMax {
					acc = 0
				}
				for ky := range k {
					for kx := range k {
						v := float64(src[(pl*h+oy*s+ky)*w+ox*s+kx])
						switch {
						case !isMax:
							acc += v
						case math.IsNaN(v) || math.IsNaN(acc):
							acc = math.NaN()
						default:
							acc = math.Max(acc, v)
						}
					}
				}
				if !isMax {
					acc /= float64(k * k)
				}
				out = append(out, acc)
			}
		}
	}
	return out
}

func TestPool(t *testing.T) {
	type tc struct{ b, c, h, w, k, s int }
	cases := []tc{{1, 1, 2, 2, 2, 2}, {2, 3, 28, 28, 2, 2}, {1, 2, 7, 7, 2, 2}, {3, 1, 5, 33, 2, 2}, {1, 2, 9, 9, 3, 3},
		{2, 2, 9, 8, 3, 2}, {1, 1, 6, 6, 1, 1}, {1, 3, 65, 67, 2, 2}, {2, 1, 10, 10, 4, 1}, {1, 1, 3, 3, 3, 1},
		{1, 2, 9, 40, 3, 2}, {2, 1, 5, 40, 2, 1}, {1, 1, 8, 70, 3, 2}, {1, 2, 6, 35, 2, 2}}
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, c := range cases {
			oh, ow := kernels.OutSize(c.h, c.k, c.s, 0), kernels.OutSize(c.w, c.k, c.s, 0)
			src := randSlice(r, c.b*c.c*c.h*c.w, 2)
			src[r.IntN(len(src))] = float32(math.NaN())
			src[r.IntN(len(src))] = float32(math.Inf(1))
			for _, isMax := range []bool{true, false} {
				name := fmt.Sprintf("%+v/max=%v", c, isMax)
				want := poolRef(src, c.b*c.c, c.h, c.w, c.k, c.s, oh, ow, isMax)
				dst, check := guarded(t, name, len(want), 0)
				if isMax {
					kernels.MaxPool2D(dst, src, c.b, c.c, c.h, c.w, c.k, c.s, oh, ow)
				} else {
					kernels.AvgPool2D(dst, src, c.b, c.c, c.h, c.w, c.k, c.s, oh, ow)
				}
				check()
				mag := make([]float64, len(want))
				for i := range mag {
					mag[i] = 2
				}
				checkClose(t, name, dst, want, mag)
			}
		}
	})
}

func TestGlobalAvgPool(t *testing.T) {
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, hw := range []int{1, 3, 16, 17, 49, 196, 784} {
			b, c := 3, 5
			src := randSlice(r, b*c*hw, 1)
			want, mag := make([]float64, b*c), make([]float64, b*c)
			for i := range want {
				for _, v := range src[i*hw : (i+1)*hw] {
					want[i] += float64(v)
					mag[i] += math.Abs(float64(v))
				}
				want[i] /= float64(hw)
				mag[i] /= float64(hw)
			}
			dst, check := guarded(t, "gap", b*c, 0)
			kernels.GlobalAvgPool(dst, src, b, c, hw)
			check()
			checkClose(t, fmt.Sprint("hw ", hw), dst, want, mag)
		}
	})
}
