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

// The kernel table: NE_REGISTER adds an entry point that takes its argument
// struct by address.
typedef void (*emu_entry)(const void *);
int emu_register(const char *name, emu_entry f);

#define NE_REGISTER(name, ArgsT)                                                      \
	static int emu_reg_##name = emu_register(#name, [](const void *p) { name(*(const ArgsT *)p); });
