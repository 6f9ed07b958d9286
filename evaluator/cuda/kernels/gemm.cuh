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
	// The fused pool (the convpool kernels; zero otherwise): its window PK,
	// stride PS, output POH × POW and kind (1 max, 2 average). There cols
	// counts the pool's windows, images · POH · POW.
	long long PK, PS, POH, POW, pool;
};

#define GEMM_BN 128
#define GEMM_BK 16
#define GEMM_TN 8

// store_pooled is the epilogue of a convpool tile: BM / 16 times, 16 of
// the tile's rows are activated, rounded to the storage type and put in
// shared memory (Cs, the input tile's buffer, free after the k-loop's
// last barrier), then every thread reduces windows of them in pool()'s
// order and stores the pooled values.
template <class TW, class TO, int BM, int TM, bool TC>
NE_DEV void store_pooled(const GemmArgs& a, const float (&acc)[TM][GEMM_TN], float (&Cs)[GEMM_BK][GEMM_BN + 1],
                         long long tile, int m0, int pkk, int wpt) {
	constexpr int WM = BM / 16, WN = 8 / WM, NT = 16 / WN;
	const TW* __restrict__ bias = (const TW*)a.bias;
	TO* __restrict__ y = (TO*)a.y;
	const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
	const int wid = tid / 32, lane = tid % 32, g = lane / 4, q = lane % 4;
	const int M = (int)a.M;
	const long long PHW = a.POH * a.POW;
	const float scale = 1.0f / (float)(a.PK * a.PK);
	for (int ch = 0; ch < BM / 16; ++ch) {
		// Local row r of chunk ch is row r·TM + ch (FMA: each thread's
		// acc[ch]) or 16·ch + r (TC: the warps of row slab ch).
		if (!TC) {
			const int m = m0 + ty * TM + ch;
			if (m < M) {
				const float b = ld(bias, m);
#pragma unroll
				for (int j = 0; j < GEMM_TN; ++j) {
					Cs[ty][tx + 16 * j] = rnd(y, activate(acc[ch][j] + b, a.act));
				}
			}
		} else if (wid % WM == ch) {
#pragma unroll
			for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
				for (int i = 0; i < 4; ++i) {
					const int r = g + (i >= 2 ? 8 : 0);
					const int m = m0 + ch * 16 + r;
					if (m < M) {
						const int c = (wid / WM) * NT * 8 + nt * 8 + 2 * q + (i & 1);
						Cs[r][c] = rnd(y, activate(acc[(nt * 4 + i) / GEMM_TN][(nt * 4 + i) % GEMM_TN] + ld(bias, m), a.act));
					}
				}
			}
		}
		__syncthreads();
		for (int e = tid; e < 16 * wpt; e += NE_THREADS) {
			const int r = e / wpt, w = e - r * wpt;
			const int m = TC ? m0 + ch * 16 + r : m0 + r * TM + ch;
			const long long gw = tile * wpt + w;
			if (m < M && gw < a.cols) {
				const float* v = &Cs[r][w * pkk];
				float s = a.pool == 1 ? v[0] : 0.0f;
				for (int k = 0; k < pkk; ++k) {
					if (a.pool == 1) {
						if (v[k] != v[k] || v[k] > s) {
							s = v[k];
						}
					} else {
						s += v[k];
					}
				}
				if (a.pool != 1) {
					s *= scale;
				}
				const long long img = gw / PHW;
				st(y, img * (long long)M * PHW + (long long)m * PHW + (gw - img * PHW), s);
			}
		}
		__syncthreads();
	}
}

// POOL fuses a max or average pool (stride ≥ window, so that no pixel of
// the convolution is computed twice) into the store: the columns of a
// tile are the pixels of BN / (PK·PK) whole pooling windows, one window's
// PK·PK pixels side by side, and the epilogue writes the pooled output
// only. Each pixel is activated and rounded to the storage type first, and
// the window reduced in pool()'s order (ops.cu), so the result is the
// unfused convolution then pool bit for bit.
//
// TC selects the compute of the tile: false, each thread a TM × 8 sub-tile
// by float32 FMA; true, each warp a 16 × (8·NT) slab by TF32 tensor-core
// MMA (mma.sync m16n8k8, float32 accumulation), the operands rounded to
// TF32 as they leave shared memory. Loading the tiles and the store's
// bias and activation are the same.
template <class TW, class TI, class TO, int BM, int TM, bool DENSE, bool TC, bool POOL>
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
	// POOL: a tile holds wpt windows of pkk pixels; the loop runs over
	// ncols columns, BN a tile, of which each tile uses wpt · pkk.
	const int pkk = POOL ? (int)(a.PK * a.PK) : 1, wpt = POOL ? BN / pkk : 1;
	const long long ncols = POOL ? (a.cols + wpt - 1) / wpt * BN : a.cols;
	const long long PHW = a.POH * a.POW;

	for (long long col0 = (long long)blockIdx.x * BN; col0 < ncols; col0 += (long long)gridDim.x * BN) {
		long long pbase = 0, iy0 = 0, ix0 = 0;
		bool cvalid = false;
		if (!DENSE) {
			const long long col = col0 + bc;
			long long img = 0, oy = 0, ox = 0;
			if (POOL) {
				// Window gw's pixel (ky, kx) of the convolution.
				const int wi = bc / pkk, ki = bc - wi * pkk;
				const long long gw = col0 / BN * wpt + wi;
				cvalid = wi < wpt && gw < a.cols;
				img = gw / PHW;
				const long long pp = gw - img * PHW, opy = pp / a.POW, opx = pp - opy * a.POW;
				oy = opy * a.PS + ki / (int)a.PK;
				ox = opx * a.PS + ki % (int)a.PK;
			} else {
				cvalid = col < a.cols;
				img = col / OHW;
				const long long p = col - img * OHW;
				oy = p / OW;
				ox = p - oy * OW;
			}
			if (cvalid) {
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
			if (POOL) {
				store_pooled<TW, TO, BM, TM, TC>(a, acc, Bs, col0 / BN, m0, pkk, wpt);
				continue;
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

