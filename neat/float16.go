package neat

import "math"

// f16ToF32 converts an IEEE 754 half-precision value, exactly: every half
// (subnormals, infinities and NaNs included) is a float32.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // infinity or NaN; the payload is kept
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case 0: // zero or subnormal: mant × 2⁻²⁴
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	default: // rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// bf16ToF32 converts a bfloat16 value: its bits are the upper half of a
// float32's.
func bf16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
