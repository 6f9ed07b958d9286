package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSharedPadColsSame holds the stride-1 plane layout whose rows share
// their padding columns (Wq = W+P) to the one with each row's own (Wq =
// W+2P), bit for bit: paddings 1 to 3, filters 2 to 7, maps 1×1 to 30×30
// (square and not; and a few of stride 2 or no padding), every algorithm, path, tile width and activation,
// Conv2D and PackConv + Conv2DPacked on 1 to 3 threads, with NaN, ±Inf and
// −0 among the pixels (a NaN read from a wrong place would show).
func TestSharedPadColsSame(t *testing.T) {
	testLayoutSame(t, "shared padding columns", func(old bool) { padBothSides = old })
}

// TestNarrowLastTileSame holds last tiles computed only as wide as the
// columns they have left (lastNV) to last tiles as wide as the others, bit
// for bit, on the same cases.
func TestNarrowLastTileSame(t *testing.T) {
	testLayoutSame(t, "narrow last tiles", func(old bool) { fullLastTile = old })
}

// TestShiftedPlanesSame holds the direct variant over column-shifted
// planes (no padding columns, one store run per tile) to the padded rows,
// bit for bit, on the same cases: every stride-1 shape takes the shifted
// planes against none.
func TestShiftedPlanesSame(t *testing.T) {
	t.Cleanup(func() { shiftPlanes = shiftAuto })
	testLayoutSame(t, "shifted planes", func(old bool) {
		shiftPlanes = shiftAlways
		if old {
			shiftPlanes = shiftNever
		}
	})
}

func testLayoutSame(t *testing.T, what string, setOld func(old bool)) {
	r := rand.New(rand.NewPCG(9, 10))
	var shapes []ConvShape
	for _, hw := range [][2]int{{1, 1}, {2, 3}, {5, 5}, {7, 7}, {13, 11}, {14, 14}, {28, 28}, {30, 17}} {
		for _, k := range []int{2, 3, 5, 7} {
			for pad := 1; pad <= 3 && pad < k; pad++ {
				oh, ow := OutSize(hw[0], k, 1, pad), OutSize(hw[1], k, 1, pad)
				if oh < 1 || ow < 1 {
					continue
				}
				shapes = append(shapes, ConvShape{C: 1 + r.IntN(6), H: hw[0], W: hw[1], OC: 1 + r.IntN(30), K: k, Stride: 1, Pad: pad, OH: oh, OW: ow})
			}
		}
	}
	shapes = append(shapes, // stride 2, no padding: the last tiles only
		ConvShape{C: 3, H: 28, W: 28, OC: 9, K: 3, Stride: 2, Pad: 1, OH: 14, OW: 14},
		ConvShape{C: 5, H: 13, W: 13, OC: 20, K: 5, Stride: 2, Pad: 2, OH: 7, OW: 7},
		ConvShape{C: 4, H: 11, W: 11, OC: 7, K: 1, Stride: 2, Pad: 0, OH: 6, OW: 6},
		ConvShape{C: 6, H: 14, W: 14, OC: 25, K: 5, Stride: 1, Pad: 0, OH: 10, OW: 10},
		ConvShape{C: 2, H: 12, W: 9, OC: 31, K: 3, Stride: 1, Pad: 0, OH: 10, OW: 7},
		ConvShape{C: 1, H: 28, W: 28, OC: 13, K: 5, Stride: 1, Pad: 0, OH: 24, OW: 24},
		ConvShape{C: 3, H: 5, W: 6, OC: 4, K: 2, Stride: 1, Pad: 0, OH: 4, OW: 5})
	if testing.Short() {
		shapes = shapes[:len(shapes)/2]
	}
	for i, s := range shapes {
		b := 1 + r.IntN(9)
		src := make([]float32, b*s.C*s.H*s.W)
		for j := range src {
			switch r.IntN(40) {
			case 0:
				src[j] = float32(math.NaN())
			case 1:
				src[j] = float32(math.Inf(1 - 2*r.IntN(2)))
			case 2:
				src[j] = float32(math.Copysign(0, -1))
			default:
				src[j] = float32(r.NormFloat64())
			}
		}
		w := make([]float32, s.OC*s.C*s.K*s.K)
		for j := range w {
			w[j] = float32(r.NormFloat64())
		}
		bias := make([]float32, s.OC)
		for j := range bias {
			bias[j] = float32(r.NormFloat64())
		}
		act := Act(i % int(GELU+1))
		threads := 1 + i%3
		for _, mode := range []int{modeAuto, modeDirect, modePacked} {
			for _, p := range Paths() {
				for nv := 0; nv <= maxNV; nv++ {
					prevMode, prevPath := convMode, selected()
					convMode = mode
					Select(p)
					run := func(old, packed bool) []float32 {
						setOld(old)
						defer setOld(false)
						dst := make([]float32, b*s.OC*s.OH*s.OW)
						if !packed {
							Conv2D(dst, src, w, bias, s, b, act, make([]float32, ConvWorkspace(s, b, threads)), threads)
							return dst
						}
						pw := make([]float32, PackedConvLen(s))
						pk := PackConv(pw, w, bias, s, b, threads)
						if nv > 0 { // every tile width, not only the planner's
							pk.nv = nv
							pl := planConv(p, s, b, threads, nv, modeAuto, true, pk.allTaps)
							packConvWeights(pw, w, s, pl.taps, pl.mpan)
						}
						Conv2DPacked(dst, src, pw, pk, bias, s, b, act, make([]float32, ConvPackedWorkspace(s, b, threads)), threads)
						return dst
					}
					for _, packed := range []bool{false, true} {
						if nv > 0 && !packed {
							continue
						}
						want, got := run(true, packed), run(false, packed)
						name := fmt.Sprintf("%+v b %d %v mode %d %v nv %d packed %v", s, b, act, mode, p, nv, packed)
						for j := range want {
							if math.Float32bits(want[j]) != math.Float32bits(got[j]) {
								t.Fatalf("%s: out[%d] = %v (%#x) with %s, %v (%#x) without",
									name, j, got[j], math.Float32bits(got[j]), what, want[j], math.Float32bits(want[j]))
							}
						}
					}
					convMode = prevMode
					Select(prevPath)
				}
			}
		}
	}
}

// TestCopyRowsPaths holds every path's row copy to copyRowsGo: widths 1
// to 40 (AVX2's overlapping last vector from 8 on), source and
// destination strides wider than the rows, and nothing written between
// or after the rows (the destination starts as NaN sentinels).
func TestCopyRowsPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, p := range Paths() {
		for w := 1; w <= 40; w++ {
			for _, rows := range []int{1, 2, 5} {
				ss, ds := w+r.IntN(5), w+r.IntN(7)
				src := make([]float32, (rows-1)*ss+w)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				want, got := make([]float32, (rows-1)*ds+w+8), make([]float32, (rows-1)*ds+w+8)
				for i := range want {
					want[i] = float32(math.NaN())
					got[i] = float32(math.NaN())
				}
				copyRowsGo(want, src, rows, w, ss, ds)
				copyRows(p, got[:(rows-1)*ds+w], src, rows, w, ss, ds)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v w %d rows %d strides %d, %d: dst[%d] = %v, want %v", p, w, rows, ss, ds, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestDeintPlanePaths holds the one-call phase-plane split of a stride-2
// image (deintPlane, AVX-512 and AVX2) to the pure-Go row loop, bit for
// bit: maps 1×1 to 40×40, paddings 0 to 3, and nothing written outside
// the pixels' places (the planes start as NaN sentinels).
func TestDeintPlanePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, p := range Paths() {
		if p == PureGo {
			continue
		}
		for _, hw := range [][2]int{{1, 1}, {2, 3}, {7, 9}, {14, 14}, {13, 17}, {28, 28}, {5, 40}, {40, 31}} {
			for pad := 0; pad <= 3; pad++ {
				s := ConvShape{C: 2, H: hw[0], W: hw[1], K: 3, Stride: 2, Pad: pad, OC: 1}
				s.OH, s.OW = OutSize(s.H, 3, 2, pad), OutSize(s.W, 3, 2, pad)
				if s.OH < 1 || s.OW < 1 {
					continue
				}
				hq, wq := ceilDiv(s.H+2*pad, 2), ceilDiv(s.W+2*pad, 2)
				img := make([]float32, s.C*s.H*s.W)
				for i := range img {
					img[i] = float32(r.NormFloat64())
				}
				run := func(p Path) []float32 {
					pl := convPlan{path: p, nph: 2, hq: hq, wq: wq, plane: hq * wq}
					prep := make([]float32, s.C*4*pl.plane+16)
					for i := range prep {
						prep[i] = float32(math.NaN())
					}
					prepImage(&pl, &s, prep, img)
					return prep
				}
				want, got := run(PureGo), run(p)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v %dx%d pad %d: prep[%d] = %v, Go %v", p, s.H, s.W, pad, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestShiftedPlanesBounded: a shape whose K column-shifted planes would
// outgrow 32-bit tap offsets keeps the plain layout, even where the test
// knob asks for the shifted one (the plain layout of such a shape still
// fits).
func TestShiftedPlanesBounded(t *testing.T) {
	defer func(sh int) { shiftPlanes = sh }(shiftPlanes)
	shiftPlanes = shiftAlways
	s := ConvShape{C: 2048, H: 512, W: 512, OC: 8, K: 3, Stride: 1, Pad: 1, OH: 512, OW: 512}
	if pl := planConv(AVX512, s, 1, 1, 0, modeDirect, false, true); pl.shifted {
		t.Fatalf("%+v: shifted planes of %d floats a channel", s, s.K*(s.H+2)*s.OW)
	}
	small := ConvShape{C: 2, H: 28, W: 28, OC: 8, K: 3, Stride: 1, Pad: 1, OH: 28, OW: 28}
	if pl := planConv(AVX512, small, 1, 1, 0, modeDirect, false, true); !pl.shifted {
		t.Fatalf("%+v: the knob's shifted planes not taken", small)
	}
}
