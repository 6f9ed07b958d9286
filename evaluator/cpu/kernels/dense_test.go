package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

func denseRef(src, w, bias []float32, b, in, out int, act kernels.Act) (res, mag []float64) {
	res, mag = make([]float64, b*out), make([]float64, b*out)
	for i := range b {
		for o := range out {
			acc, m := float64(bias[o]), math.Abs(float64(bias[o]))
			for k := range in {
				t := float64(w[o*in+k]) * float64(src[i*in+k])
				acc += t
				m += math.Abs(t)
			}
			res[i*out+o], mag[i*out+o] = act64(act, acc), m
		}
	}
	return res, mag
}

func TestDense(t *testing.T) {
	type tc struct{ b, in, out int }
	cases := []tc{{1, 1, 1}, {1, 3, 10}, {2, 17, 16}, {5, 64, 17}, {13, 33, 33}, {29, 129, 10}, {64, 50, 70}, {3, 7, 100}, {31, 16, 64}, {40, 9, 48}}
	if !short() {
		cases = append(cases, tc{130, 300, 130}, tc{64, 784, 10})
	}
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		r := rand.New(rand.NewPCG(7, 8))
		for i, c := range cases {
			act := allActs[i%len(allActs)]
			threads := 1 + i%3
			name := fmt.Sprintf("%+v/%v/t%d", c, act, threads)
			src, w, bias := randSlice(r, c.b*c.in, 1), randSlice(r, c.out*c.in, 1), randSlice(r, c.out, 1)
			want, mag := denseRef(src, w, bias, c.b, c.in, c.out, act)
			dst, checkDst := guarded(t, name+" dst", c.b*c.out, float32(math.NaN()))
			ws, checkWs := guarded(t, name+" ws", kernels.DenseWorkspace(c.in, c.out, c.b, threads), float32(math.NaN()))
			kernels.Dense(dst, src, w, bias, c.b, c.in, c.out, act, ws, threads)
			checkDst()
			checkWs()
			checkClose(t, name, dst, want, mag)
		}
	})
}

func TestDenseAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	src, w, bias, dst := make([]float32, 8*40), make([]float32, 10*40), make([]float32, 10), make([]float32, 80)
	ws := make([]float32, kernels.DenseWorkspace(40, 10, 8, 1))
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		if n := testing.AllocsPerRun(10, func() { kernels.Dense(dst, src, w, bias, 8, 40, 10, kernels.Sigmoid, ws, 1) }); n != 0 {
			t.Fatalf("Dense allocates %v times per call", n)
		}
	})
}
