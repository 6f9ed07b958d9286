// gemm_tc.cu: conv2d and dense on the tensor cores. The implicit-GEMM
// template of gemm.cuh with TC: each k-step of the shared tiles goes
// through mma.sync.m16n8k8 in TF32 (inputs rounded to nearest, ties away,
// to 10 mantissa bits; products and sums in float32), the compute
// precision "tf32" (PyTorch's default for convolutions). The kernels are
// named gemmtc_<tile>_<kind>_<types>, beside gemm.cu's gemm_….
#include "gemm.cuh"

#define GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, POOL, tc, TW, TI, TO)                                                   \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) gemmtc_##cfg##_##kind##_##tc(const GemmArgs a) { \
		gemm<TW, TI, TO, BM, TM, DENSE, true, POOL>(a);                                                                 \
	}                                                                                                           \
	NE_REGISTER(gemmtc_##cfg##_##kind##_##tc, GemmArgs)

#define GEMM_TC_TYPES(cfg, BM, TM, kind, DENSE)                            \
	GEMM_TC_POOL_TYPES(cfg, BM, TM, kind, DENSE, false)                      \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, false, hhf, bf16_t, bf16_t, float) \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, false, hff, bf16_t, float, float)

// The types of an output that is not the logits: a fused pool's (convpool).
#define GEMM_TC_POOL_TYPES(cfg, BM, TM, kind, DENSE, POOL)                      \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, POOL, fff, float, float, float)    \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, POOL, hhh, bf16_t, bf16_t, bf16_t) \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, POOL, hfh, bf16_t, float, bf16_t)

GEMM_TC_TYPES(m16, 16, 1, conv, false)
GEMM_TC_TYPES(m16, 16, 1, dense, true)
GEMM_TC_POOL_TYPES(m16, 16, 1, convpool, false, true)
GEMM_TC_TYPES(m32, 32, 2, conv, false)
GEMM_TC_TYPES(m32, 32, 2, dense, true)
GEMM_TC_POOL_TYPES(m32, 32, 2, convpool, false, true)
GEMM_TC_TYPES(m64, 64, 4, conv, false)
GEMM_TC_TYPES(m64, 64, 4, dense, true)
GEMM_TC_POOL_TYPES(m64, 64, 4, convpool, false, true)
