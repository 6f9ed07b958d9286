package kernels_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

func TestSumMerge(t *testing.T) {
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, tc := range []struct{ dstC, srcC, b, hw int }{{1, 1, 1, 1}, {4, 4, 2, 49}, {16, 3, 3, 7}, {8, 5, 2, 196}, {3, 1, 5, 33}} {
			src := randSlice(r, tc.b*tc.srcC*tc.hw, 1)
			dst, check := guarded(t, "dst", tc.b*tc.dstC*tc.hw, 0)
			copy(dst, randSlice(r, len(dst), 1))
			want := slices.Clone(dst)
			for i := range tc.b {
				for j := range tc.srcC * tc.hw {
					want[i*tc.dstC*tc.hw+j] += src[i*tc.srcC*tc.hw+j]
				}
			}
			kernels.SumMerge(dst, tc.dstC, src, tc.srcC, tc.b, tc.hw)
			check()
			if !slices.Equal(dst, want) {
				t.Fatalf("%+v: wrong sum", tc)
			}
		}
	})
}

func TestCopyChannels(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	b, hw, dstC := 3, 10, 7
	a, c := randSlice(r, b*4*hw, 1), randSlice(r, b*3*hw, 1)
	dst, check := guarded(t, "dst", b*dstC*hw, 0)
	kernels.CopyChannels(dst, dstC, 0, a, 4, b, hw)
	kernels.CopyChannels(dst, dstC, 4, c, 3, b, hw)
	check()
	for i := range b {
		for ch := range dstC {
			for x := range hw {
				var want float32
				if ch < 4 {
					want = a[(i*4+ch)*hw+x]
				} else {
					want = c[(i*3+ch-4)*hw+x]
				}
				if got := dst[(i*dstC+ch)*hw+x]; got != want {
					t.Fatalf("[%d,%d,%d] = %v, want %v", i, ch, x, got, want)
				}
			}
		}
	}
}
