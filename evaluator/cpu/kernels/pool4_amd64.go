//go:build !noasm

package kernels

//go:noescape
func maxPool4x4_512(out, in []float32, planes, oh, ow, h, w int) (nan int)

// maxPool4 runs the 4×4 stride-4 max pool of planes h×w (w ≤ 32) on
// AVX-512 and reports whether it did: not on another path, a wider map, or
// input with a NaN (the caller then runs the general kernel, which
// propagates the window's first NaN; this one would not). Bit for bit the
// scalar loop's results otherwise (pool4_amd64.s): rows whose windows hold
// no sign bit and no NaN (a ReLU's output) are reduced as unsigned integers
// in any order, the others in the scalar loop's order. Profiled on an
// evolve run's genomes (conv 8 3×3 → this pool → dense), the general row
// kernel took as long as the convolution.
func maxPool4(p Path, dst, src []float32, planes, h, w, oh, ow int) bool {
	if p != AVX512 || w > 32 || oh < 1 || ow < 1 || planes < 1 {
		return false
	}
	_ = dst[planes*oh*ow-1]
	_ = src[planes*h*w-1]
	return maxPool4x4_512(dst, src, planes, oh, ow, h, w) == 0
}
