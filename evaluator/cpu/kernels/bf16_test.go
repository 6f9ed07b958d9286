package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/vram"
)

// bf16Ref rounds by comparing distances in float64 to the two neighbouring
// bfloat16 values, ties to the even one: a different algorithm from the
// kernels' integer rounding.
func bf16Ref(v float32) uint16 {
	u := math.Float32bits(v)
	if v != v {
		return uint16(u>>16) | 0x40
	}
	lo := u &^ 0xffff
	if u == lo {
		return uint16(lo >> 16)
	}
	hi := lo + 0x10000
	flo, fhi := float64(math.Float32frombits(lo)), float64(math.Float32frombits(hi))
	if hi&0x7fffffff == 0x7f800000 {
		fhi = math.Copysign(math.Ldexp(1, 128), float64(v)) // the value the rounding step reaches
	}
	dlo, dhi := math.Abs(float64(v)-flo), math.Abs(float64(v)-fhi)
	switch {
	case dlo < dhi, dlo == dhi && (lo>>16)&1 == 0:
		return uint16(lo >> 16)
	}
	return uint16(hi >> 16)
}

func TestBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	src := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625, 1.005859375, 1.001953125, 1.0029296875,
		3.3895314e38, math.MaxFloat32, -math.MaxFloat32, 1e-40, -1e-45, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xff800001)}
	for range 100000 {
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	forEachPath(t, func(t *testing.T, p kernels.Path) {
		for _, n := range []int{len(src), 1, 15, 17, 33} {
			in := src[len(src)-n:]
			dst := make([]uint16, n+1)
			dst[n] = 0xbeef
			kernels.F32ToBF16(dst[:n], in)
			if dst[n] != 0xbeef {
				t.Fatal("F32ToBF16 wrote past its slice")
			}
			plain := make([]uint16, n)
			vram.F32ToBF16(plain, in)
			for i, v := range in {
				if want := bf16Ref(v); dst[i] != want {
					t.Fatalf("F32ToBF16(%v [%#08x]) = %#04x, want %#04x", v, math.Float32bits(v), dst[i], want)
				}
				if plain[i] != dst[i] {
					t.Fatalf("vram.F32ToBF16(%#08x) = %#04x, kernels.F32ToBF16 %#04x", math.Float32bits(v), plain[i], dst[i])
				}
			}
			back, check := guarded(t, "back", n, 0)
			kernels.BF16ToF32(back, dst[:n])
			check()
			for i, h := range dst[:n] {
				if math.Float32bits(back[i]) != uint32(h)<<16 {
					t.Fatalf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(back[i]))
				}
			}
			plainBack := make([]float32, n)
			vram.BF16ToF32(plainBack, dst[:n])
			for i := range plainBack {
				if math.Float32bits(plainBack[i]) != math.Float32bits(back[i]) {
					t.Fatalf("vram.BF16ToF32(%#04x) = %#08x, kernels.BF16ToF32 %#08x", dst[i], math.Float32bits(plainBack[i]), math.Float32bits(back[i]))
				}
			}
		}
	})
}
