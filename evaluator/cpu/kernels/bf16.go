package kernels

import (
	"fmt"

	"github.com/neateval/neateval/vram"
)

// F32ToBF16 rounds src to bfloat16 (the top 16 bits of a float32), to
// nearest with ties to even. NaN stays NaN (quieted); infinities stay.
func F32ToBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels: F32ToBF16: len(dst) %d < len(src) %d", len(dst), len(src)))
	}
	n := 0
	if len(src) > 0 {
		n = toBF16Vec(selected(), dst, src)
	}
	toBF16Go(dst[n:], src[n:])
}

// BF16ToF32 widens bfloat16 values to float32 (exact).
func BF16ToF32(dst []float32, src []uint16) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels: BF16ToF32: len(dst) %d < len(src) %d", len(dst), len(src)))
	}
	n := 0
	if len(src) > 0 {
		n = fromBF16Vec(selected(), dst, src)
	}
	fromBF16Go(dst[n:], src[n:])
}

// toBF16Go and fromBF16Go are the vector loops' pure-Go twins: the
// conversion every backend stores bfloat16 with (vram), whose rounding
// (to nearest even, NaN kept quiet) the assembly reproduces bit for bit.
func toBF16Go(dst []uint16, src []float32) { vram.F32ToBF16(dst, src) }

func fromBF16Go(dst []float32, src []uint16) { vram.BF16ToF32(dst, src) }
