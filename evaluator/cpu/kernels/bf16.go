package kernels

import (
	"fmt"
	"math"
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

func toBF16Go(dst []uint16, src []float32) {
	for i, v := range src {
		u := math.Float32bits(v)
		if u&0x7fffffff > 0x7f800000 {
			dst[i] = uint16(u>>16) | 0x40
			continue
		}
		dst[i] = uint16((u + 0x7fff + (u>>16)&1) >> 16)
	}
}

func fromBF16Go(dst []float32, src []uint16) {
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(v) << 16)
	}
}
