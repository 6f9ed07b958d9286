// gemm.cuh: the implicit-GEMM kernel template of gemm.cu (float32 FMA) and
// gemm_tc.cu (TF32 tensor cores); see gemm.cu.
#pragma once

#include "common.cuh"

struct GemmArgs {
	const void* x;    // input: conv [img][C][H][W]; dense [img][C]
	const void* w;    // weights [M][Kd]
	const void* bias; // [M]
	void* y;          // output [img][M][OH][OW]
	long long cols;   // images · OH · OW
	long long M;      // output channels (features)
	long long Kd;     // C · K · K
	long long C, H, W, K, S, P, OH, OW;
	long long act;
};

#define GEMM_BN 128
#define GEMM_BK 16
#define GEMM_TN 8

// TC selects the compute of the tile: false, each thread a TM × 8 sub-tile
// by float32 FMA; true, each warp a 16 × (8·NT) slab by TF32 tensor-core
// MMA (mma.sync m16n8k8, float32 accumulation), the operands rounded to
// TF32 as they leave shared memory. Loading the tiles and the store's
// bias and activation are the same.
template <class TW, class TI, class TO, int BM, int TM, bool DENSE, bool TC>
NE_DEV void gemm(const GemmArgs& a) {
	constexpr int BN = GEMM_BN, BK = GEMM_BK, TN = GEMM_TN;
	static_assert((BM / TM) * (BN / TN) == NE_THREADS, "one sub-tile per thread");
	static_assert(BN / TN == 16 && BM / TM == 16, "16 × 16 threads");
	__shared__ float As[BK][BM + 1];
	__shared__ float Bs[BK][BN + 1];
	__shared__ long long tabOff[BK];
	__shared__ long long tabKh[BK];
	__shared__ int tabKw[BK];

	const TW* __restrict__ w = (const TW*)a.w;
	const TW* __restrict__ bias = (const TW*)a.bias;
	const TI* __restrict__ x = (const TI*)a.x;
	TO* __restrict__ y = (TO*)a.y;
	const int tid = threadIdx.x;
	const int tx = tid % 16, ty = tid / 16;
	// TC: warp wid covers rows 16·(wid % WM) … and NT n8-tiles of columns
	// from 8·NT·(wid / WM); lane = 4·g + q, as the MMA fragments number them.
	constexpr int WM = BM / 16, WN = 8 / WM, NT = 16 / WN;
	static_assert(!TC || (WM * WN == NE_THREADS / 32 && NT * WN * 8 == BN), "8 warps tile BM × 128");
	const int wid = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
	const int wm = wid % WM, wn = wid / WM;
	// M, Kd and so K are below 2^30 (sched.checkRange), so k, m and the
	// kernel taps are ints; positions in the (padded) image are 64-bit: a
	// genome may pad or stride far beyond its image.
	const int M = (int)a.M, Kd = (int)a.Kd, K = (int)a.K;
	const int KK = K * K;
	const long long H = a.H, W = a.W, S = a.S, P = a.P, OW = a.OW;
	const long long OHW = a.OH * a.OW;
	const long long HW = a.H * a.W;
	const long long CHW = a.C * HW;
	// conv: this thread gathers column bc of every input tile, at rows
	// bk0, bk0 + 2, …
	const int bc = tid % BN, bk0 = tid / BN;

	for (long long col0 = (long long)blockIdx.x * BN; col0 < a.cols; col0 += (long long)gridDim.x * BN) {
		long long pbase = 0, iy0 = 0, ix0 = 0;
		bool cvalid = false;
		if (!DENSE) {
			const long long col = col0 + bc;
			cvalid = col < a.cols;
			if (cvalid) {
				const long long img = col / OHW;
				const long long p = col - img * OHW;
				const long long oy = p / OW, ox = p - oy * OW;
				iy0 = oy * S - P;
				ix0 = ox * S - P;
				pbase = img * CHW + iy0 * W + ix0;
			}
		}
		for (int m0 = blockIdx.y * BM; m0 < M; m0 += gridDim.y * BM) {
			// FMA: acc[i][j] is row ty·TM + i, column tx + 16j. TC: the
			// MMA accumulators of n8-tile j / 4, element j % 4.
			static_assert(TM * TN == (TC ? NT * 4 : TM * TN), "as many accumulators either way");
			float acc[TM][TN];
#pragma unroll
			for (int i = 0; i < TM; ++i) {
#pragma unroll
				for (int j = 0; j < TN; ++j) {
					acc[i][j] = 0.0f;
				}
			}
			for (int k0 = 0; k0 < Kd; k0 += BK) {
				if (!DENSE) {
					if (tid < BK) {
						const int k = k0 + tid;
						if (k < Kd) {
							const int c = k / KK, r = k - c * KK, kh = r / K, kw = r - kh * K;
							tabOff[tid] = (long long)c * HW + (long long)kh * W + kw;
							tabKh[tid] = kh;
							tabKw[tid] = kw;
						} else {
							// Past the end of k: a row below every image
							// (iy0 is within ±2^33) reads as zero.
							tabOff[tid] = 0;
							tabKh[tid] = 1LL << 62;
							tabKw[tid] = 0;
						}
					}
					__syncthreads();
				}
				// The weight tile, transposed: As[k][m] = W[m0 + m][k0 + k].
				for (int e = tid; e < BM * BK; e += NE_THREADS) {
					const int m = e / BK, k = e % BK;
					float v = 0.0f;
					if (m0 + m < M && k0 + k < Kd) {
						v = ld(w, (long long)(m0 + m) * Kd + (k0 + k));
					}
					As[k][m] = v;
				}
				if (DENSE) {
					// Bs[k][c] = X[col0 + c][k0 + k]: consecutive threads
					// read consecutive features of one image.
					const int k = tid % BK;
#pragma unroll
					for (int i = 0; i < BK * BN / NE_THREADS; ++i) {
						const int c = tid / BK + i * (NE_THREADS / BK);
						const long long col = col0 + c;
						float v = 0.0f;
						if (col < a.cols && k0 + k < Kd) {
							v = ld(x, col * Kd + (k0 + k));
						}
						Bs[k][c] = v;
					}
				} else {
					// Bs[k][bc] = the input under tap k of column bc, zero
					// in the padding.
#pragma unroll
					for (int i = 0; i < BK * BN / NE_THREADS; ++i) {
						const int k = bk0 + i * (NE_THREADS / BN);
						const long long iy = iy0 + tabKh[k], ix = ix0 + tabKw[k];
						float v = 0.0f;
						if (cvalid && (unsigned long long)iy < (unsigned long long)H && (unsigned long long)ix < (unsigned long long)W) {
							v = ld(x, pbase + tabOff[k]);
						}
						Bs[k][bc] = v;
					}
				}
				__syncthreads();
				if (TC) {
					// Two m16n8k8 MMAs a k-step for each of the warp's NT
					// n8-tiles; accumulator element e of the warp's tiles is
					// acc[e / TN][e % TN].
					const int r0 = wm * 16 + g;
#pragma unroll
					for (int kk = 0; kk < BK; kk += 8) {
						const unsigned af[4] = {tf32(As[kk + q][r0]), tf32(As[kk + q][r0 + 8]),
						                        tf32(As[kk + q + 4][r0]), tf32(As[kk + q + 4][r0 + 8])};
#pragma unroll
						for (int nt = 0; nt < NT; ++nt) {
							const int c = wn * NT * 8 + nt * 8 + g;
							const unsigned bf[2] = {tf32(Bs[kk + q][c]), tf32(Bs[kk + q + 4][c])};
							float* d = &acc[(nt * 4) / TN][(nt * 4) % TN];
							mma_tf32(d, af, bf);
						}
					}
				} else {
#pragma unroll
					for (int k = 0; k < BK; ++k) {
						float av[TM], bv[TN];
#pragma unroll
						for (int i = 0; i < TM; ++i) {
							av[i] = As[k][ty * TM + i];
						}
#pragma unroll
						for (int j = 0; j < TN; ++j) {
							bv[j] = Bs[k][tx + 16 * j];
						}
#pragma unroll
						for (int i = 0; i < TM; ++i) {
#pragma unroll
							for (int j = 0; j < TN; ++j) {
								acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
							}
						}
					}
				}
				__syncthreads();
			}
			if (TC) {
				// Element i of n8-tile nt: row g (+8 for i ≥ 2), column
				// 2q + (i & 1) of the tile.
#pragma unroll
				for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
					for (int i = 0; i < 4; ++i) {
						const long long col = col0 + wn * NT * 8 + nt * 8 + 2 * q + (i & 1);
						const int m = m0 + wm * 16 + g + (i >= 2 ? 8 : 0);
						if (col < a.cols && m < M) {
							const long long img = DENSE ? col : col / OHW;
							const long long p = DENSE ? 0 : col - img * OHW;
							st(y, img * (long long)M * OHW + (long long)m * OHW + p,
							   activate(acc[(nt * 4 + i) / TN][(nt * 4 + i) % TN] + ld(bias, m), a.act));
						}
					}
				}
				continue;
			}
			// Bias, activation, store: column tx + 16j, row ty·TM + i. The
			// column's (image, pixel) is divided out once and stepped.
			long long img, p;
			if (DENSE) {
				img = col0 + tx;
				p = 0;
			} else {
				img = (col0 + tx) / OHW;
				p = col0 + tx - img * OHW;
			}
#pragma unroll
			for (int j = 0; j < TN; ++j) {
				if (col0 + tx + 16 * j < a.cols) {
					const long long ybase = img * (long long)M * OHW + p;
#pragma unroll
					for (int i = 0; i < TM; ++i) {
						const int m = m0 + ty * TM + i;
						if (m < M) {
							st(y, ybase + (long long)m * OHW, activate(acc[i][j] + ld(bias, m), a.act));
						}
					}
				}
				if (DENSE) {
					img += 16;
				} else {
					p += 16;
					while (p >= OHW) {
						p -= OHW;
						++img;
					}
				}
			}
		}
	}
}

