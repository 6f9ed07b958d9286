//go:build !noasm

package kernels

import "golang.org/x/sys/cpu"

//go:generate go run gen_gemm.go

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
)

func best() Path {
	switch {
	case hasAVX512:
		return AVX512
	case hasAVX2:
		return AVX2
	}
	return PureGo
}

func available(p Path) bool {
	switch p {
	case AVX512:
		return hasAVX512
	case AVX2:
		return hasAVX2
	}
	return p == PureGo
}

// The micro-kernels, generated into gemm_amd64.s. Calls go through the
// switch in gemm, not through function values, so that the argument block
// stays on the caller's stack (//go:noescape only holds for direct calls).

//go:noescape
func gemm512x1(t *tileArgs)

//go:noescape
func gemm512x2(t *tileArgs)

//go:noescape
func gemm512x3(t *tileArgs)

//go:noescape
func gemm512x4(t *tileArgs)

//go:noescape
func gemm256x1(t *tileArgs)

//go:noescape
func gemm256x2(t *tileArgs)

//go:noescape
func gemm256x3(t *tileArgs)

//go:noescape
func gemm256x4(t *tileArgs)

func gemm(p Path, nv int, t *tileArgs) {
	switch p {
	case AVX512:
		switch nv {
		case 1:
			gemm512x1(t)
		case 2:
			gemm512x2(t)
		case 3:
			gemm512x3(t)
		default:
			gemm512x4(t)
		}
	case AVX2:
		switch nv {
		case 1:
			gemm256x1(t)
		case 2:
			gemm256x2(t)
		case 3:
			gemm256x3(t)
		default:
			gemm256x4(t)
		}
	default:
		gemmGo(t, nv)
	}
}

func applyVec(_ Path, act Act, x []float32)             { applyGo(act, x) }
func pool2x2(_ Path, isMax bool, out, r0, r1 []float32) { pool2x2Go(isMax, out, r0, r1) }
func sumVec(_ Path, x []float32) float32                { return sumGo(x) }
func addVec(_ Path, dst, src []float32)                 { addGo(dst, src) }
func toBF16Vec(Path, []uint16, []float32) int           { return 0 }
func fromBF16Vec(Path, []float32, []uint16) int         { return 0 }
func deinterleave2(_ Path, prep []float32, o0, o1, pad int, row []float32) {
	deinterleave2Go(prep, o0, o1, pad, row)
}
