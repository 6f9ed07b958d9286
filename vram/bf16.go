package vram

import (
	"fmt"
	"math"
)

// F32ToBF16 stores src in bfloat16 (the top 16 bits of a float32), rounded
// to nearest with ties to even; NaN stays NaN (quieted), infinities stay.
// It is the BFloat16 storage of every backend, bit for bit what the CPU
// kernels' vectorised conversion gives, in plain Go: fast enough for
// weights copied once per load.
func F32ToBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("vram: F32ToBF16: len(dst) %d < len(src) %d", len(dst), len(src)))
	}
	for i, v := range src {
		u := math.Float32bits(v)
		if u&0x7fffffff > 0x7f800000 {
			dst[i] = uint16(u>>16) | 0x40
			continue
		}
		dst[i] = uint16((u + 0x7fff + (u>>16)&1) >> 16)
	}
}

// BF16ToF32 widens bfloat16 values to float32 (exact).
func BF16ToF32(dst []float32, src []uint16) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("vram: BF16ToF32: len(dst) %d < len(src) %d", len(dst), len(src)))
	}
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(v) << 16)
	}
}
