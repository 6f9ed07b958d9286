// gemm.cu: conv2d and dense as one implicit-GEMM kernel, with the bias and
// the activation fused into the store.
//
// Y[img, m, pixel] = act(bias[m] + Σ_k W[m, k] · X[k, (img, pixel)]), where
// k runs over (channel, kernel row, kernel column) of the K×K window at the
// pixel (stride S, zero padding P) and the columns (img, pixel) run over
// every output pixel of every image of the slice: small feature maps of
// many images make long rows. A dense node is the same product with K = 1
// on a 1×1 image whose C channels are the input's features (flattened in
// C, H, W order, as the format says).
//
// A block computes a BM × 128 tile of Y with 256 threads, each a TM × 8
// sub-tile, and walks k in steps of 16 through shared memory: the weight
// tile is copied transposed (As[k][m]); the input tile is gathered from the
// images (no im2col matrix in device memory), with (channel, row, column)
// of the 16 k of a step decoded once into a table. Rows and columns past
// the grid are walked by the block itself, so any shape fits the grid's
// limits. Here the float32 FMA kernels, exact float32 (see
// evaluator/cuda/NOTES.md for the arithmetic and the ceilings); gemm_tc.cu
// instantiates the same template with TF32 tensor-core MMA.
#include "gemm.cuh"

#define GEMM_ENTRY(cfg, BM, TM, kind, DENSE, POOL, tc, TW, TI, TO)                                                   \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) gemm_##cfg##_##kind##_##tc(const GemmArgs a) { \
		gemm<TW, TI, TO, BM, TM, DENSE, false, POOL>(a);                                                                 \
	}                                                                                                           \
	NE_REGISTER(gemm_##cfg##_##kind##_##tc, GemmArgs)

#define GEMM_TYPES(cfg, BM, TM, kind, DENSE)                            \
	GEMM_POOL_TYPES(cfg, BM, TM, kind, DENSE, false)                      \
	GEMM_ENTRY(cfg, BM, TM, kind, DENSE, false, hhf, bf16_t, bf16_t, float) \
	GEMM_ENTRY(cfg, BM, TM, kind, DENSE, false, hff, bf16_t, float, float)

// The types of an output that is not the logits: a fused pool's (convpool).
#define GEMM_POOL_TYPES(cfg, BM, TM, kind, DENSE, POOL)                      \
	GEMM_ENTRY(cfg, BM, TM, kind, DENSE, POOL, fff, float, float, float)    \
	GEMM_ENTRY(cfg, BM, TM, kind, DENSE, POOL, hhh, bf16_t, bf16_t, bf16_t) \
	GEMM_ENTRY(cfg, BM, TM, kind, DENSE, POOL, hfh, bf16_t, float, bf16_t)

GEMM_TYPES(m16, 16, 1, conv, false)
GEMM_TYPES(m16, 16, 1, dense, true)
GEMM_POOL_TYPES(m16, 16, 1, convpool, false, true)
GEMM_TYPES(m32, 32, 2, conv, false)
GEMM_TYPES(m32, 32, 2, dense, true)
GEMM_POOL_TYPES(m32, 32, 2, convpool, false, true)
GEMM_TYPES(m64, 64, 4, conv, false)
GEMM_TYPES(m64, 64, 4, dense, true)
GEMM_POOL_TYPES(m64, 64, 4, convpool, false, true)
