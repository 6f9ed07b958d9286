// ops.cu: pooling, global average pooling, the merges of several inputs,
// and the reduction of the logits to the loss and accuracy of a slice.
//
// Names end in the storage types they read and write (f = float32,
// h = bfloat16): pool_max_fh reads float32 and writes bfloat16. Merged
// inputs are always float32, as on the CPU backend, so that a merge adds
// no rounding of its own.
#include "common.cuh"

// ---- pooling -------------------------------------------------------------

struct PoolArgs {
	const void* x; // [planes][H][W]
	void* y;       // [planes][OH][OW]
	long long planes, H, W, K, S, OH, OW;
};

// pool: floor mode, no padding; max keeps NaN (a NaN in the window gives
// NaN), average divides the window's sum by K·K.
template <class TI, class TO, bool MAX>
NE_DEV void pool(const PoolArgs& a) {
	const TI* __restrict__ x = (const TI*)a.x;
	TO* __restrict__ y = (TO*)a.y;
	const long long ohw = a.OH * a.OW, total = a.planes * ohw, hw = a.H * a.W;
	const long long K = a.K, S = a.S, OW = a.OW, W = a.W;
	const float scale = 1.0f / (float)(a.K * a.K);
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		const long long pl = i / ohw;
		const long long r = i - pl * ohw;
		const long long oy = r / OW, ox = r - oy * OW;
		const long long base = pl * hw + oy * S * W + ox * S;
		float acc = MAX ? ld(x, base) : 0.0f;
		for (long long ky = 0; ky < K; ++ky) {
			for (long long kx = 0; kx < K; ++kx) {
				const float v = ld(x, base + ky * W + kx);
				if (MAX) {
					if (v != v || v > acc) {
						acc = v; // once acc is NaN, neither test holds for a number
					}
				} else {
					acc += v;
				}
			}
		}
		if (!MAX) {
			acc *= scale;
		}
		st(y, i, acc);
	}
}

#define POOL_ENTRY(name, MAX, tc, TI, TO)                                                           \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) name##_##tc(const PoolArgs a) { \
		pool<TI, TO, MAX>(a);                                                                    \
	}                                                                                            \
	NE_REGISTER(name##_##tc, PoolArgs)

#define POOL_TYPES(name, MAX)                        \
	POOL_ENTRY(name, MAX, ff, float, float)         \
	POOL_ENTRY(name, MAX, fh, float, bf16_t)        \
	POOL_ENTRY(name, MAX, hf, bf16_t, float)        \
	POOL_ENTRY(name, MAX, hh, bf16_t, bf16_t)

POOL_TYPES(pool_max, true)
POOL_TYPES(pool_avg, false)

// ---- global average pooling ---------------------------------------------

struct GapArgs {
	const void* x; // [planes][hw]
	void* y;       // [planes]
	long long planes, hw;
};

// gap: each warp sums one plane, its lanes striding the pixels, and lane 0
// adds the 32 partial sums in order: a fixed order, so the result does not
// depend on the grid.
template <class TI, class TO>
NE_DEV void gap(const GapArgs& a) {
	__shared__ float part[NE_THREADS];
	const TI* __restrict__ x = (const TI*)a.x;
	TO* __restrict__ y = (TO*)a.y;
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const long long groups = (a.planes + NE_THREADS / 32 - 1) / (NE_THREADS / 32);
	for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
		const long long pl = g * (NE_THREADS / 32) + warp;
		float s = 0.0f;
		if (pl < a.planes) {
			for (long long j = lane; j < a.hw; j += 32) {
				s += ld(x, pl * a.hw + j);
			}
		}
		part[threadIdx.x] = s;
		__syncthreads();
		if (lane == 0 && pl < a.planes) {
			float t = 0.0f;
			for (int l = 0; l < 32; ++l) {
				t += part[threadIdx.x + l];
			}
			st(y, pl, t / (float)a.hw);
		}
		__syncthreads();
	}
}

#define GAP_ENTRY(tc, TI, TO)                                                                   \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) gap_##tc(const GapArgs a) { \
		gap<TI, TO>(a);                                                                      \
	}                                                                                        \
	NE_REGISTER(gap_##tc, GapArgs)

GAP_ENTRY(ff, float, float)
GAP_ENTRY(fh, float, bf16_t)
GAP_ENTRY(hf, bf16_t, float)
GAP_ENTRY(hh, bf16_t, bf16_t)

// ---- merges ----------------------------------------------------------------

struct MergeArgs {
	float* dst;      // [n][dstC][hw], float32
	const void* src; // [n][srcC][hw]
	long long n, dstC, srcC, hw;
	long long off; // merge_cat: the first channel of dst that src fills
};

// merge_pad: dst = src zero-padded to dstC channels (the first input of a
// sum). One thread per element of dst.
template <class TI>
NE_DEV void merge_pad(const MergeArgs& a) {
	const TI* __restrict__ src = (const TI*)a.src;
	const long long per = a.dstC * a.hw, total = a.n * per;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		const long long img = i / per, r = i - img * per;
		const long long c = r / a.hw, p = r - c * a.hw;
		a.dst[i] = c < a.srcC ? ld(src, (img * a.srcC + c) * a.hw + p) : 0.0f;
	}
}

// merge_add: dst[:, :srcC] += src (a later input of a sum).
template <class TI>
NE_DEV void merge_add(const MergeArgs& a) {
	const TI* __restrict__ src = (const TI*)a.src;
	const long long per = a.srcC * a.hw, total = a.n * per;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		const long long img = i / per, r = i - img * per;
		a.dst[img * a.dstC * a.hw + r] += ld(src, i);
	}
}

// merge_cat: dst[:, off:off+srcC] = src (concat).
template <class TI>
NE_DEV void merge_cat(const MergeArgs& a) {
	const TI* __restrict__ src = (const TI*)a.src;
	const long long per = a.srcC * a.hw, total = a.n * per;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		const long long img = i / per, r = i - img * per;
		a.dst[(img * a.dstC + a.off) * a.hw + r] = ld(src, i);
	}
}

#define MERGE_ENTRY(name, tc, TI)                                                                   \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) name##_##tc(const MergeArgs a) { \
		name<TI>(a);                                                                              \
	}                                                                                             \
	NE_REGISTER(name##_##tc, MergeArgs)

MERGE_ENTRY(merge_pad, f, float)
MERGE_ENTRY(merge_pad, h, bf16_t)
MERGE_ENTRY(merge_add, f, float)
MERGE_ENTRY(merge_add, h, bf16_t)
MERGE_ENTRY(merge_cat, f, float)
MERGE_ENTRY(merge_cat, h, bf16_t)

// ---- the reduction of the logits ----------------------------------------

struct ReduceArgs {
	const float* logits;          // [n][classes], float32
	const unsigned char* labels;  // [n]
	long long n, classes;
	void* out;                    // Stats
};

// reduce_logits runs as one block: each thread scores rows t, t + 256, …
// as the CPU backend does (argmax with ties to the lowest class; the loss
// in float64 after subtracting the row's max; a row with a NaN or ±Inf
// counts only as non-finite), then the block adds the partial results in a
// fixed tree order, so the sums do not depend on timing.
extern "C" __global__ void __launch_bounds__(NE_THREADS) reduce_logits(const ReduceArgs a) {
	const int tid = threadIdx.x;
	const int C = (int)a.classes;
	double loss = 0.0;
	long long corr = 0, nf = 0;
	for (long long r = tid; r < a.n; r += NE_THREADS) {
		const RowStats st = row_stats(a.logits + r * C, C, a.labels[r]);
		if (st.kind == ROW_NONFINITE) {
			++nf;
			continue;
		}
		if (st.kind == ROW_RIGHT) {
			++corr;
		}
		loss += st.loss;
	}
	block_stats(loss, corr, nf, a.n, a.out);
}
NE_REGISTER(reduce_logits, ReduceArgs)
