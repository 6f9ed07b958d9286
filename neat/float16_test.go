package neat

import (
	"math"
	"testing"
)

// TestF16Exhaustive checks every half-precision value against the
// definition, computed in float64.
func TestF16Exhaustive(t *testing.T) {
	for h := range 1 << 16 {
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		exp, mant := h>>10&0x1f, h&0x3ff
		got := f16ToF32(uint16(h))
		switch {
		case exp == 0x1f && mant == 0:
			if !math.IsInf(float64(got), int(sign)) {
				t.Fatalf("%#04x: %v, want %v infinity", h, got, sign)
			}
		case exp == 0x1f:
			if !math.IsNaN(float64(got)) {
				t.Fatalf("%#04x: %v, want NaN", h, got)
			}
		default:
			var want float64
			if exp == 0 {
				want = sign * math.Ldexp(float64(mant), -24)
			} else {
				want = sign * math.Ldexp(1+float64(mant)/1024, exp-15)
			}
			if float64(got) != want || math.Signbit(float64(got)) != (sign < 0) {
				t.Fatalf("%#04x: %v, want %v", h, got, want)
			}
		}
	}
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		bits uint16
		want float32
	}{
		{0x3f80, 1}, {0xc000, -2}, {0x3e20, 0.15625}, {0x0000, 0}, {0x7f7f, 3.3895314e38}, {0x0001, 9.1835e-41},
	} {
		if got := bf16ToF32(c.bits); got != c.want {
			t.Errorf("%#04x: %v, want %v", c.bits, got, c.want)
		}
	}
	if got := bf16ToF32(0xff80); !math.IsInf(float64(got), -1) {
		t.Errorf("0xff80: %v, want -Inf", got)
	}
	if got := bf16ToF32(0x7fc1); !math.IsNaN(float64(got)) {
		t.Errorf("0x7fc1: %v, want NaN", got)
	}
}
