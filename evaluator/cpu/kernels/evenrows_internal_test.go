package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// evenRowsInput returns floats with NaN, ±Inf and −0 among them.
func evenRowsInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(12) {
		case 0:
			x[i] = float32(math.NaN())
		case 1:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			x[i] = float32(math.Copysign(0, -1))
		default:
			x[i] = r.Float32()*2 - 1
		}
	}
	return x
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestEvenRows holds evenRows on every path (and evenRowsGo) to an inline
// reference, bit for bit: widths below, at and above one and two vectors,
// several rows, strides with slack; the floats between and after the rows
// stay untouched.
func TestEvenRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range Paths() {
		for _, n := range []int{1, 2, 7, 15, 16, 17, 31, 32, 33, 40, 100} {
			for _, rows := range []int{1, 2, 5} {
				srcStride := 2*n - 1 + r.IntN(4)
				dstStride := n + r.IntN(3)
				src := evenRowsInput(r, (rows-1)*srcStride+2*n-1)
				dst := evenRowsInput(r, rows*dstStride+3)
				want := append([]float32(nil), dst...)
				for y := range rows {
					for i := range n {
						want[y*dstStride+i] = src[y*srcStride+2*i]
					}
				}
				got := append([]float32(nil), dst...)
				evenRows(p, got, src, rows, n, srcStride, dstStride)
				if i := sameBits(want, got); i >= 0 {
					t.Fatalf("%v n=%d rows=%d strides %d,%d: dst[%d] = %v, want %v", p, n, rows, srcStride, dstStride, i, got[i], want[i])
				}
				got = append(got[:0], dst...)
				evenRowsGo(got, src, rows, n, srcStride, dstStride)
				if i := sameBits(want, got); i >= 0 {
					t.Fatalf("Go n=%d rows=%d: dst[%d] = %v, want %v", n, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPrepPhase00 holds prepPhase00 on every path to the pixel by pixel
// definition of the phase-(0, 0) plane, bit for bit: odd and even widths
// and heights, below and above one vector's pixels a row, padding 0 to 3.
func TestPrepPhase00(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range Paths() {
		for _, hw := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {3, 5}, {7, 7}, {8, 8}, {13, 31}, {14, 32}, {11, 33}, {9, 34}, {28, 28}, {5, 67}} {
			for pad := range 4 {
				t.Run(fmt.Sprintf("%v/%dx%d/P%d", p, hw[0], hw[1], pad), func(t *testing.T) {
					h, w := hw[0], hw[1]
					s := &ConvShape{C: 1 + r.IntN(4), H: h, W: w, OC: 1, K: 1, Stride: 2, Pad: pad}
					hq, wq := (h+2*pad+1)/2, (w+2*pad+1)/2+r.IntN(2)
					pl := &convPlan{path: p, nph: 1, hq: hq, wq: wq, plane: hq * wq}
					img := evenRowsInput(r, s.C*h*w)
					want := make([]float32, s.C*pl.plane+8)
					for c := range s.C {
						for ih := range h {
							for iw := range w {
								y, x := ih+pad, iw+pad
								if y%2 == 0 && x%2 == 0 {
									want[c*pl.plane+y/2*wq+x/2] = img[(c*h+ih)*w+iw]
								}
							}
						}
					}
					got := make([]float32, len(want))
					prepPhase00(pl, s, got, img)
					if i := sameBits(want, got); i >= 0 {
						t.Fatalf("prep[%d] = %v, want %v", i, got[i], want[i])
					}
				})
			}
		}
	}
}
