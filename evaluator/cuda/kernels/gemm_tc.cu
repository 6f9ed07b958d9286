// gemm_tc.cu: conv2d and dense on the tensor cores. The implicit-GEMM
// template of gemm.cuh with TC: each k-step of the shared tiles goes
// through mma.sync.m16n8k8 in TF32 (inputs rounded to nearest, ties away,
// to 10 mantissa bits; products and sums in float32), the compute
// precision "tf32" (PyTorch's default for convolutions). The kernels are
// named gemmtc_<tile>_<kind>_<types>, beside gemm.cu's gemm_….
#include "gemm.cuh"

#define GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, tc, TW, TI, TO)                                                   \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) gemmtc_##cfg##_##kind##_##tc(const GemmArgs a) { \
		gemm<TW, TI, TO, BM, TM, DENSE, true>(a);                                                                 \
	}                                                                                                           \
	NE_REGISTER(gemmtc_##cfg##_##kind##_##tc, GemmArgs)

#define GEMM_TC_TYPES(cfg, BM, TM, kind, DENSE)                                   \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, fff, float, float, float)            \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, hhh, bf16_t, bf16_t, bf16_t)         \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, hhf, bf16_t, bf16_t, float)          \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, hfh, bf16_t, float, bf16_t)          \
	GEMM_TC_ENTRY(cfg, BM, TM, kind, DENSE, hff, bf16_t, float, float)

GEMM_TC_TYPES(m16, 16, 1, conv, false)
GEMM_TC_TYPES(m16, 16, 1, dense, true)
GEMM_TC_TYPES(m32, 32, 2, conv, false)
GEMM_TC_TYPES(m32, 32, 2, dense, true)
GEMM_TC_TYPES(m64, 64, 4, conv, false)
GEMM_TC_TYPES(m64, 64, 4, dense, true)
