package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPadTapsSame holds convolutions that skip the taps reading only
// padding (usedTaps, skipTaps) to the ones computing every tap, bit for bit:
// small maps with wide filters (1×1 to 4×4, 3×3 and 5×5 filters, paddings 1
// and 2, strides 1 and 2), every algorithm, path and activation, Conv2D and
// PackConv + Conv2DPacked, with −0, NaN and ±Inf among the pixels and
// weights, and NaN or ±Inf weights on skipped taps (which must then be kept:
// their products with the padding are NaN).
func TestPadTapsSame(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pick := func(special bool) float32 {
		if special {
			switch r.IntN(10) {
			case 0:
				return float32(math.Copysign(0, -1))
			case 1:
				return 0
			case 2:
				return []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
			}
		}
		return float32(r.NormFloat64())
	}
	fill := func(n int, special bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = pick(special)
		}
		return v
	}
	var shapes []ConvShape
	for _, hw := range []int{1, 2, 3, 4} {
		for _, k := range []int{3, 5} {
			for _, pad := range []int{1, 2} {
				for _, stride := range []int{1, 2} {
					if pad >= k {
						continue
					}
					oh := OutSize(hw, k, stride, pad)
					if oh < 1 {
						continue
					}
					c, oc := 1+r.IntN(20), 1+r.IntN(33)
					shapes = append(shapes, ConvShape{C: c, H: hw, W: hw, OC: oc, K: k, Stride: stride, Pad: pad, OH: oh, OW: oh})
				}
			}
		}
	}
	shapes = append(shapes, ConvShape{C: 3, H: 1, W: 4, OC: 5, K: 5, Stride: 1, Pad: 2, OH: 1, OW: 4},
		ConvShape{C: 2, H: 2, W: 1, OC: 7, K: 3, Stride: 1, Pad: 1, OH: 2, OW: 1})
	skipped := 0
	for i, s := range shapes {
		b := 1 + r.IntN(70)
		src := fill(b*s.C*s.H*s.W, i%2 == 0)
		w := fill(s.OC*s.C*s.K*s.K, i%3 == 0)
		bias := fill(s.OC, i%4 == 0)
		used := usedTaps(s)
		if i%5 == 4 && used != allTapsOf(s) { // a NaN or Inf weight on a skipped tap
			for t := range s.K * s.K {
				if !hasTap(s, used, t) {
					w[r.IntN(s.OC*s.C)*s.K*s.K+t] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
					break
				}
			}
		}
		if skipTaps(s, w, bias) {
			skipped++
		}
		act := Act(i % int(GELU+1))
		for _, mode := range []int{modeDirect, modePacked} {
			for _, p := range Paths() {
				prevMode, prevPath := convMode, selected()
				convMode = mode
				Select(p)
				run := func(keep, packed bool) []float32 {
					keepPadTaps = keep
					defer func() { keepPadTaps = false }()
					dst := make([]float32, b*s.OC*s.OH*s.OW)
					threads := 1 + i%2
					if packed {
						pw := make([]float32, PackedConvLen(s))
						pk := PackConv(pw, w, bias, s, b, threads)
						Conv2DPacked(dst, src, pw, pk, bias, s, b, act, make([]float32, ConvPackedWorkspace(s, b, threads)), threads)
					} else {
						Conv2D(dst, src, w, bias, s, b, act, make([]float32, ConvWorkspace(s, b, threads)), threads)
					}
					return dst
				}
				for _, packed := range []bool{false, true} {
					want, got := run(true, packed), run(false, packed)
					name := fmt.Sprintf("%+v b %d %v mode %d %v packed %v", s, b, act, mode, p, packed)
					for j := range want {
						if math.Float32bits(want[j]) != math.Float32bits(got[j]) {
							t.Fatalf("%s: out[%d] = %v (%#x) skipping the padding's taps, %v (%#x) with them",
								name, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
						}
					}
				}
				convMode = prevMode
				Select(prevPath)
			}
		}
	}
	if skipped < 6 {
		t.Errorf("only %d of %d shapes skip taps", skipped, len(shapes))
	}
}

// TestPadTapsNegZero is the case that skipTaps's −0 bias check is for: a
// product that underflows to −0 makes the sum −0, which a skipped tap's
// +0 term would have made +0, and a −0 bias keeps the difference.
func TestPadTapsNegZero(t *testing.T) {
	s := ConvShape{C: 1, H: 1, W: 1, OC: 1, K: 3, Stride: 1, Pad: 1, OH: 1, OW: 1}
	w := []float32{1, 1, 1, 1, 0.25, 1, 1, 1, 1}
	src := []float32{-math.SmallestNonzeroFloat32} // 0.25 times it rounds to −0
	for _, bias := range []float32{float32(math.Copysign(0, -1)), 0, 1} {
		run := func(keep bool) float32 {
			keepPadTaps = keep
			defer func() { keepPadTaps = false }()
			dst := make([]float32, 1)
			Conv2D(dst, src, w, []float32{bias}, s, 1, Identity, make([]float32, ConvWorkspace(s, 1, 1)), 1)
			return dst[0]
		}
		want, got := run(true), run(false)
		if math.Float32bits(want) != math.Float32bits(got) {
			t.Errorf("bias %v: %v (%#x) skipping the padding's taps, %v (%#x) with them",
				bias, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// TestUsedTaps checks the taps of a few shapes by hand.
func TestUsedTaps(t *testing.T) {
	for _, c := range []struct {
		s    ConvShape
		want uint64
	}{
		{ConvShape{C: 1, H: 1, W: 1, OC: 1, K: 5, Stride: 1, Pad: 2, OH: 1, OW: 1}, 1 << 12},
		{ConvShape{C: 1, H: 1, W: 1, OC: 1, K: 3, Stride: 1, Pad: 1, OH: 1, OW: 1}, 1 << 4},
		{ConvShape{C: 1, H: 2, W: 2, OC: 1, K: 5, Stride: 1, Pad: 2, OH: 2, OW: 2}, 0b01110_01110_01110_00000},
		{ConvShape{C: 1, H: 3, W: 3, OC: 1, K: 5, Stride: 1, Pad: 2, OH: 3, OW: 3}, 1<<25 - 1},
		{ConvShape{C: 1, H: 2, W: 2, OC: 1, K: 3, Stride: 2, Pad: 1, OH: 1, OW: 1}, 0b110_110_000},
		{ConvShape{C: 1, H: 28, W: 28, OC: 1, K: 3, Stride: 1, Pad: 1, OH: 28, OW: 28}, 1<<9 - 1},
		{ConvShape{C: 1, H: 9, W: 9, OC: 1, K: 9, Stride: 1, Pad: 4, OH: 9, OW: 9}, ^uint64(0)},
	} {
		if got := usedTaps(c.s); got != c.want {
			t.Errorf("usedTaps(%+v) = %b, want %b", c.s, got, c.want)
		}
	}
}
