package vram_test

import (
	"math"
	"testing"

	"github.com/neateval/neateval/vram"
)

// TestBF16RoundTrip widens every bfloat16 value and stores it back: the
// same bits, except that a signalling NaN comes back quieted.
func TestBF16RoundTrip(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	wide := make([]float32, len(all))
	vram.BF16ToF32(wide, all)
	back := make([]uint16, len(all))
	vram.F32ToBF16(back, wide)
	for i, h := range all {
		if math.Float32bits(wide[i]) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(wide[i]))
		}
		want := h
		if h&0x7fff > 0x7f80 {
			want |= 0x40
		}
		if back[i] != want {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x, want %#04x", h, back[i], want)
		}
	}
}

// TestF32ToBF16Rounding checks the rounding: to nearest, ties to even, up
// to infinity past the largest bfloat16.
func TestF32ToBF16Rounding(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // a tie: to the even 1
		{0x3f818000, 0x3f82}, // a tie: to the even 1+2⁻⁶
		{0x3f808001, 0x3f81}, // just past the tie
		{0x3f807fff, 0x3f80}, // just before it
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to +Inf
		{0xff800000, 0xff80}, // −Inf
		{0x7f800001, 0x7fc0}, // a signalling NaN, quieted
		{0x80000000, 0x8000}, // −0
	} {
		dst := []uint16{0}
		vram.F32ToBF16(dst, []float32{math.Float32frombits(tc.in)})
		if dst[0] != tc.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tc.in, dst[0], tc.want)
		}
	}
}
