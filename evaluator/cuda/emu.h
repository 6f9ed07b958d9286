// emu.h: just enough of CUDA's device-side language for kernels/*.cu to be
// compiled as C++ and run on the CPU by emu.cc (build tag cudaemu): the
// built-in indices, __syncthreads, __shared__ (one static copy: blocks run
// one at a time) and the intrinsics the kernels use. Nothing here is
// linked into a real build.
#pragma once

#include <math.h>
#include <string.h>

#include <cmath>

struct emu_dim3 {
	unsigned x, y, z;
};

extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

void __syncthreads();

// emu_dynamic_shared is the block's dynamic shared memory: a buffer of the
// launch's size, poisoned with NaN before every block.
void *emu_dynamic_shared();

#define __global__
#define __device__
#define __launch_bounds__(...)
#define __shared__ static

using std::isfinite;

inline float __uint_as_float(unsigned u) {
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

inline unsigned __float_as_uint(float f) {
	unsigned u;
	memcpy(&u, &f, sizeof u);
	return u;
}

// tf32 is cvt.rna.tf32.f32: round to 10 mantissa bits, to nearest with
// ties away from zero (add half of the dropped part to the magnitude, then
// truncate); infinities and NaN unchanged.
inline unsigned tf32(float v) {
	unsigned u = __float_as_uint(v);
	if ((u & 0x7f800000u) == 0x7f800000u) {
		return u;
	}
	return (u + 0x1000u) & 0xffffe000u;
}

// mma_tf32 is the twin of mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// (emu.cc): a warp-collective operation, so every lane of the warp must
// call it at the same point, as on a GPU; the emulator exchanges the
// fragments through a table and two block-wide barriers, so every thread
// of the block must call it too (the kernels' MMA loops are uniform).
void mma_tf32(float *d, const unsigned *a, const unsigned *b);

// The kernel table: NE_REGISTER adds an entry point that takes its argument
// struct by address.
typedef void (*emu_entry)(const void *);
int emu_register(const char *name, emu_entry f);

#define NE_REGISTER(name, ArgsT)                                                      \
	static int emu_reg_##name = emu_register(#name, [](const void *p) { name(*(const ArgsT *)p); });
