package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPoolVecSameAsGo: the vector pools give the scalar loop's results bit
// for bit (signed zeros and NaN included), for strides 1 to 5 and windows
// 1 to 5, max and average, rows of one to several 16-output chunks, in
// pairs (poolRows2_512) and an odd last row alone.
func TestPoolVecSameAsGo(t *testing.T) {
	for _, p := range Paths() {
		if p != PureGo {
			t.Run(p.String(), func(t *testing.T) { testPoolVecSameAsGo(t, p) })
		}
	}
}

func testPoolVecSameAsGo(t *testing.T, p Path) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range [][2]int{{26, 26}, {28, 28}, {7, 9}, {13, 40}, {6, 150}} {
		h, w := dims[0], dims[1]
		const planes = 3
		src := make([]float32, planes*h*w)
		for i := range src {
			switch r.IntN(20) {
			case 0:
				src[i] = float32(math.Copysign(0, -1))
			case 1:
				src[i] = 0
			case 2: // NaNs of different payloads and signs: which one comes out counts
				src[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<22)) | uint32(r.IntN(2))<<31)
			default:
				src[i] = float32(r.NormFloat64())
			}
		}
		for k := 1; k <= 5; k++ {
			for s := 1; s <= 5; s++ {
				oh, ow := OutSize(h, k, s, 0), OutSize(w, k, s, 0)
				if oh < 1 || ow < 1 || (k == 2 && s == 2) {
					continue
				}
				for _, isMax := range []bool{true, false} {
					scale := float32(1) / float32(k*k)
					want := make([]float32, planes*oh*ow)
					got := make([]float32, planes*oh*ow)
					poolGo(isMax, want, src, planes, h, w, k, s, oh, ow, scale)
					if !poolVec(p, isMax, got, src, planes, h, w, k, s, oh, ow, scale) {
						t.Fatalf("%dx%d k%d s%d: no vector pool", h, w, k, s)
					}
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s", fmt.Sprintf("%dx%d k%d s%d max=%v: element %d = %v, scalar %v", h, w, k, s, isMax, i, got[i], want[i]))
						}
					}
				}
			}
		}
	}
}

// TestMaxPool4SameAsGo: the 4×4 stride-4 max pool gives the scalar loop's
// results bit for bit (ties of +0 and -0 included) on maps up to 32 wide,
// whatever their height and width modulo 4, and declines input with a NaN
// (pool then runs the general kernel, which the test above checks).
func TestMaxPool4SameAsGo(t *testing.T) {
	if selected() != AVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i, dims := range [][2]int{{28, 28}, {4, 4}, {7, 9}, {30, 30}, {32, 32}, {17, 13}, {9, 31}, {5, 16}, {8, 20}, {28, 28}, {32, 32}} {
		h, w := dims[0], dims[1]
		sign := float32(-1) // mostly negative: a window's maximum is often a zero of either sign
		if i%2 == 1 {
			sign = 1
		}
		const planes = 5
		oh, ow := OutSize(h, 4, 4, 0), OutSize(w, 4, 4, 0)
		src := make([]float32, planes*h*w)
		for i := range src {
			switch r.IntN(6) {
			case 0:
				src[i] = float32(math.Copysign(0, -1))
			case 1:
				src[i] = 0
			case 2:
				src[i] = sign * float32(r.IntN(3)) // ties
			default:
				src[i] = sign * float32(math.Abs(r.NormFloat64()))
			}
		}
		want := make([]float32, planes*oh*ow+3)
		got := make([]float32, planes*oh*ow+3)
		for i := range got {
			got[i], want[i] = 7, 7 // past the outputs: must stay
		}
		poolGo(true, want, src, planes, h, w, 4, 4, oh, ow, 1)
		if !maxPool4(AVX512, got, src, planes, h, w, oh, ow) {
			t.Fatalf("%dx%d: declined input without NaN", h, w)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%dx%d: element %d = %v, scalar %v", h, w, i, got[i], want[i])
			}
		}
		src[r.IntN(len(src))] = float32(math.NaN())
		if maxPool4(AVX512, got, src, planes, h, w, oh, ow) {
			t.Errorf("%dx%d: a NaN in the input, and the fast pool did not decline", h, w)
		}
		// Through pool, NaN and all: the scalar loop's result.
		poolGo(true, want, src, planes, h, w, 4, 4, oh, ow, 1)
		pool(AVX512, true, got, src, planes, h, w, 4, 4, oh, ow)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%dx%d with a NaN: element %d = %v, scalar %v", h, w, i, got[i], want[i])
			}
		}
	}
}

// TestMaxPool4ReLUSameAsGo: on a ReLU's output (no sign bit, no NaN) the
// 4×4 stride-4 pool takes its unsigned-integer path; a -0, a negative
// number or a NaN planted in a window (anywhere in it, in any row or
// plane) sends the row to the ordered path, and the results stay the
// scalar loop's bit for bit. Planted beyond the windows (the columns and
// rows that floor mode drops), they change nothing.
func TestMaxPool4ReLUSameAsGo(t *testing.T) {
	if selected() != AVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	r := rand.New(rand.NewPCG(5, 6))
	negZero := float32(math.Copysign(0, -1))
	for _, dims := range [][2]int{{28, 28}, {4, 4}, {7, 9}, {30, 30}, {32, 32}, {17, 13}, {9, 31}, {8, 20}} {
		h, w := dims[0], dims[1]
		const planes = 6
		oh, ow := OutSize(h, 4, 4, 0), OutSize(w, 4, 4, 0)
		for trial := range 40 {
			src := make([]float32, planes*h*w)
			for i := range src {
				switch r.IntN(4) {
				case 0, 1:
					src[i] = 0 // whole windows of +0, as a ReLU leaves them
				case 2:
					src[i] = float32(r.IntN(3)) // ties
				default:
					src[i] = float32(math.Abs(r.NormFloat64())) * 1e-38 // subnormals too
				}
			}
			if trial%4 == 1 {
				src[r.IntN(len(src))] = float32(math.Inf(1))
			}
			// Plant trial%4 specials (none on the first trial of four).
			for range trial % 4 {
				i := r.IntN(len(src))
				switch r.IntN(4) {
				case 0, 1:
					src[i] = negZero
				case 2:
					src[i] = -float32(r.IntN(2)) - 0.5
				default:
					src[i] = float32(math.NaN())
				}
			}
			want := make([]float32, planes*oh*ow+3)
			got := make([]float32, planes*oh*ow+3)
			for i := range got {
				got[i], want[i] = 7, 7
			}
			poolGo(true, want, src, planes, h, w, 4, 4, oh, ow, 1)
			pool(AVX512, true, got, src, planes, h, w, 4, 4, oh, ow)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d trial %d: element %d = %v (%#x), scalar %v (%#x)", h, w, trial, i,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
		// A window of +0 with one -0 at each of its 16 places, and one with
		// a -0 first and a +0 after it in column-major order but not in
		// row-major order: only the ordered path gets all of them right.
		for place := range 17 {
			src := make([]float32, planes*h*w)
			pl, oy, ox := r.IntN(planes), r.IntN(oh), r.IntN(ow)
			at := func(ky, kx int) int { return pl*h*w + (4*oy+ky)*w + 4*ox + kx }
			if place < 16 {
				src[at(place/4, place%4)] = negZero
			} else {
				for ky := range 4 {
					for kx := range 4 {
						src[at(ky, kx)] = -1
					}
				}
				src[at(0, 1)] = negZero
				src[at(1, 0)] = 0
			}
			want := make([]float32, planes*oh*ow)
			got := make([]float32, planes*oh*ow)
			poolGo(true, want, src, planes, h, w, 4, 4, oh, ow, 1)
			if !maxPool4(AVX512, got, src, planes, h, w, oh, ow) {
				t.Fatalf("%dx%d: declined input without NaN", h, w)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d -0 at place %d: element %d = %v, scalar %v", h, w, place, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGlobalAvgSmallSameBits holds the small-plane global average pool to
// the per-plane sums of every path, bit for bit: planes of 1 to 15
// pixels, counts that are and are not multiples of four, with NaN, ±Inf
// and −0 among the pixels.
func TestGlobalAvgSmallSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range Paths() {
		for hw := 1; hw < 16; hw++ {
			for _, planes := range []int{1, 3, 4, 7, 13} {
				src := make([]float32, planes*hw)
				for i := range src {
					switch r.IntN(20) {
					case 0:
						src[i] = float32(math.NaN())
					case 1:
						src[i] = float32(math.Inf(1 - 2*r.IntN(2)))
					case 2, 3:
						src[i] = float32(math.Copysign(0, -1))
					default:
						src[i] = float32(r.NormFloat64())
					}
				}
				got := make([]float32, planes)
				globalAvgSmall(got, src, hw, float32(hw))
				for i := range got {
					want := sumVec(p, src[i*hw:(i+1)*hw]) / float32(hw)
					if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
						t.Fatalf("%v hw %d planes %d: plane %d = %v (%#x), per-plane sum %v (%#x)",
							p, hw, planes, i, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}
