// common.cuh: storage types, conversions and activations shared by the
// kernels of neateval's CUDA backend.
//
// Storage is float32 or bfloat16 (the top 16 bits of a float32, kept as an
// unsigned short); every kernel computes in float32. Conversions and
// activations follow the CPU kernels' semantics (evaluator/kernels):
// float32 → bfloat16 rounds to nearest, ties to even, and keeps NaN a
// (quiet) NaN; ReLU and max pooling keep NaN; GELU is the exact erf form.
//
// Every kernel takes one struct argument whose fields are all 8 bytes wide
// (pointers and long long), filled by the Go side positionally
// (evaluator/cuda/internal/sched): the field order here is that contract.
// Every kernel runs 256 threads a block; none returns before a barrier, and
// every barrier is reached by the whole block.
#pragma once

#ifndef NEATEVAL_EMU
#define NE_DEV __device__ __forceinline__
// NE_REGISTER names a kernel and its argument struct for a host build of
// these sources; nvcc needs nothing of it.
#define NE_REGISTER(name, ArgsT)
#else
#define NE_DEV inline
#endif

typedef unsigned short bf16_t;

#define NE_THREADS 256

// NE_DYN_SHARED declares name as the block's dynamic shared memory (the
// launch's sharedMemBytes; the emulator's buffer of the launch's size).
#ifndef NEATEVAL_EMU
#define NE_DYN_SHARED(T, name) extern __shared__ T name[]
#else
#define NE_DYN_SHARED(T, name) T* name = (T*)emu_dynamic_shared()
#endif

NE_DEV float ld(const float* p, long long i) { return p[i]; }
NE_DEV float ld(const bf16_t* p, long long i) { return __uint_as_float(((unsigned)p[i]) << 16); }

// f2bf rounds to the nearest bfloat16, ties to even; NaN stays NaN.
NE_DEV bf16_t f2bf(float v) {
	unsigned u = __float_as_uint(v);
	if ((u & 0x7fffffffu) > 0x7f800000u) {
		return (bf16_t)((u >> 16) | 0x40u);
	}
	return (bf16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

NE_DEV void st(float* p, long long i, float v) { p[i] = v; }
NE_DEV void st(bf16_t* p, long long i, float v) { p[i] = f2bf(v); }

// rnd is v as st would store it in *p and ld read it back.
NE_DEV float rnd(const float*, float v) { return v; }
NE_DEV float rnd(const bf16_t*, float v) { return __uint_as_float(((unsigned)f2bf(v)) << 16); }

// tf32 rounds a float32 to TF32 (10 mantissa bits), to nearest with ties
// away from zero, as cvt.rna.tf32.f32 does; the result is a float32 bit
// pattern with its low 13 bits zero. Infinities and NaN pass unchanged.
// mma_tf32 is one warp's mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32:
// d[0..3] += A·B for this lane's fragments (see gemm.cuh). The emulator has
// C++ twins of both (emu.h, emu.cc).
#ifndef NEATEVAL_EMU
NE_DEV unsigned tf32(float v) {
	unsigned u;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(v));
	return u;
}

NE_DEV void mma_tf32(float* d, const unsigned* a, const unsigned* b) {
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

// The activation codes: kernels.Act's numbering.
enum { ACT_IDENTITY = 0, ACT_RELU = 1, ACT_LEAKY = 2, ACT_TANH = 3, ACT_SIGMOID = 4, ACT_GELU = 5 };

// activate_smooth is the transcendental activations, called rather than
// inlined: a matrix-product kernel stores up to 32 values a thread, and 32
// inlined copies of erfcf would swell every kernel for no speed (the store
// is not the hot loop).
#ifndef NEATEVAL_EMU
__device__ __noinline__
#else
inline
#endif
float activate_smooth(float x, long long act) {
	switch (act) {
	case ACT_TANH:
		return tanhf(x);
	case ACT_SIGMOID: {
		float e = expf(-fabsf(x));
		float s = 1.0f / (1.0f + e);
		return x >= 0.0f ? s : e * s;
	}
	case ACT_GELU:
		// x·½·(1 + erf(x/√2)) = x·½·erfc(−x/√2), without the cancellation
		// of 1 + erf for negative x.
		return 0.5f * x * erfcf(-x * 0.70710678118654752f);
	default:
		return x;
	}
}

NE_DEV float activate(float x, long long act) {
	switch (act) {
	case ACT_IDENTITY:
		return x;
	case ACT_RELU:
		return x < 0.0f ? 0.0f : x; // NaN stays NaN (fmaxf would give 0)
	case ACT_LEAKY:
		return x < 0.0f ? 0.01f * x : x;
	default:
		return activate_smooth(x, act);
	}
}

// Stats is what a forward brings back to the host: 32 bytes.
struct Stats {
	double loss;         // Σ logsumexp(row) − row[label] over finite rows
	long long correct;   // rows whose argmax (lowest index on ties) is the label
	long long nonfinite; // rows holding NaN or ±Inf
	long long rows;
};

// row_stats scores one row of logits as the CPU backend does: ROW_NONFINITE
// when a logit is NaN or ±Inf (or the label is beyond the classes: it
// cannot come from a checked data set, and is counted rather than read
// past the row); else ROW_RIGHT when the argmax (ties to the lowest class)
// is the label, ROW_WRONG when not, with loss = logsumexp(row) −
// row[label], in float64 after subtracting the row's max (0 when not
// finite).
enum { ROW_WRONG = 0, ROW_RIGHT = 1, ROW_NONFINITE = 2 };

struct RowStats {
	int kind;
	double loss;
};

NE_DEV RowStats row_stats(const float* row, int C, int label) {
	float best = row[0];
	int arg = 0;
	for (int k = 0; k < C; ++k) {
		const float v = row[k];
		if (!isfinite(v)) {
			return RowStats{ROW_NONFINITE, 0.0};
		}
		if (v > best) {
			best = v;
			arg = k;
		}
	}
	if (label >= C) {
		return RowStats{ROW_NONFINITE, 0.0};
	}
	double s = 0.0;
	for (int k = 0; k < C; ++k) {
		s += exp((double)row[k] - (double)best);
	}
	return RowStats{arg == label ? ROW_RIGHT : ROW_WRONG, log(s) + (double)best - (double)row[label]};
}

// block_stats ends a one-block reduction (reduce_logits, pop_reduce): the
// block adds its threads' partial sums in a fixed tree order, so the sums
// do not depend on timing, and thread 0 stores them with rows at out.
NE_DEV void block_stats(double loss, long long corr, long long nf, long long rows, void* out) {
	__shared__ double sl[NE_THREADS];
	__shared__ long long sc[NE_THREADS];
	__shared__ long long sn[NE_THREADS];
	const int tid = threadIdx.x;
	sl[tid] = loss;
	sc[tid] = corr;
	sn[tid] = nf;
	__syncthreads();
	for (int h = NE_THREADS / 2; h > 0; h /= 2) {
		if (tid < h) {
			sl[tid] += sl[tid + h];
			sc[tid] += sc[tid + h];
			sn[tid] += sn[tid + h];
		}
		__syncthreads();
	}
	if (tid == 0) {
		Stats* o = (Stats*)out;
		o->loss = sl[0];
		o->correct = sc[0];
		o->nonfinite = sn[0];
		o->rows = rows;
	}
}
