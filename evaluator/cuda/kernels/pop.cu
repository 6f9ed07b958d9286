// pop.cu: the population kernels. One launch of pop_forward scores a
// slice of images for many genomes at once; pop_reduce then turns each
// genome's per-image records into its slice's Stats (two launches for a
// whole batch of genomes, instead of one launch per layer and genome).
//
// pop_forward is an interpreter: a table on the device lists, per genome
// of the batch (a request), its steps (PopStep's fields, built by
// evaluator/cuda/internal/sched, pop.go) and where its weights, images,
// labels and records are. Every block takes one tile of one request's
// images and keeps their activations in shared memory through the whole
// genome: the images are read once from device memory, every step reads
// and writes shared memory only, and only one record per image (its loss
// term and whether it was right or not finite) goes back. A genome whose
// activations of one image do not fit in POP_SMEM floats keeps the
// per-layer path.
//
// The tile is dynamic shared memory, H_TILE × H_FRAME floats, as large as
// the launch's sharedMemBytes: up to what the device lets a block opt into
// (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES; 227 KiB on sm_90), so
// that a genome whose one image needs more than the 48 KiB of a default
// block still takes this path.
//
// The arithmetic is the per-layer kernels' own, operation by operation, so
// the two paths give the same Stats bit for bit (beyond the sign of a
// zero): conv2d and dense sum their products in k order by fmaf from 0,
// then add the bias and activate; outputs stored as bfloat16 by the
// per-layer path are rounded to bfloat16 here; merges are float32; global
// average pooling adds in the 32 lanes' order of gap; the per-image loss
// term is reduce_logits' expression, and pop_reduce adds the terms in
// reduce_logits' order.
#include "common.cuh"

// A step is POP_FIELDS 8-byte fields: op, x and y (float offsets in an
// image's frame), C, H, W, K, S, P, OH, OW, M, w and b (element offsets in
// the weights), act, round (1: the output is rounded to bfloat16).
// Merges: x is the input, y the merged value, C the input's channels, M
// the channels written (pad: all of the merged value's), K the first
// channel (concat), H and W the map, OH = H, OW = W.
#define POP_FIELDS 16
enum { POP_CONV = 0, POP_DENSE = 1, POP_MAXPOOL = 2, POP_AVGPOOL = 3, POP_GAP = 4, POP_MERGE_PAD = 5, POP_MERGE_ADD = 6, POP_MERGE_CAT = 7 };

// A request's header: POP_HDR 8-byte fields (sched.Hdr… in pop.go).
#define POP_HDR 16
enum {
	H_STEPS = 0,   // the steps (device address)
	H_NSTEPS = 1,
	H_WEIGHTS = 2, // the model's weight block
	H_IMAGES = 3,  // the slice's first image, in the storage type
	H_LABELS = 4,  // the slice's first label
	H_N = 5,       // the slice's images
	H_TILE = 6,    // images a block holds
	H_FRAME = 7,   // floats of one image's frame
	H_INSIZE = 8,  // floats of one image
	H_INOFF = 9,   // the image's offset in the frame
	H_LOGITS = 10, // the logits' offset in the frame
	H_CLASSES = 11,
	H_LOSS = 12,  // double [n]: each image's loss term
	H_KIND = 13,  // unsigned char [n]: row_stats' ROW_…
	H_FIRST = 14, // the request's first block
	H_STATS = 15, // Stats (common.cuh)
};

struct PopArgs {
	const long long* hdr; // [nreq][POP_HDR]
	long long nreq;
};

NE_DEV float pop_round(float v, bool bf) { return bf ? __uint_as_float(((unsigned)f2bf(v)) << 16) : v; }

// pop_step runs one step for the nt images of the tile; frames are F
// floats apart.
template <class T>
NE_DEV void pop_step(const long long* s, float* sm, long long nt, long long F, const T* w) {
	const int op = (int)s[0];
	const long long xo = s[1], yo = s[2], C = s[3], H = s[4], W = s[5], K = s[6], S = s[7], P = s[8];
	const long long OH = s[9], OW = s[10], M = s[11], wo = s[12], bo = s[13], act = s[14];
	const bool bf = s[15] != 0;
	const long long ohw = OH * OW, per = M * ohw, hw = H * W;
	for (long long i = threadIdx.x; i < nt * per; i += NE_THREADS) {
		const long long t = i / per, r = i - t * per;
		const float* x = sm + t * F + xo;
		float* y = sm + t * F + yo;
		switch (op) {
		case POP_CONV: {
			const long long m = r / ohw, p = r - m * ohw;
			const long long oy = p / OW, ox = p - oy * OW;
			const long long iy0 = oy * S - P, ix0 = ox * S - P;
			const long long kd = C * K * K;
			const T* wm = w + wo + m * kd;
			float acc = 0.0f;
			long long k = 0;
			for (long long c = 0; c < C; ++c) {
				for (long long kh = 0; kh < K; ++kh) {
					const long long iy = iy0 + kh;
					for (long long kw = 0; kw < K; ++kw, ++k) {
						const long long ix = ix0 + kw;
						float v = 0.0f;
						if ((unsigned long long)iy < (unsigned long long)H && (unsigned long long)ix < (unsigned long long)W) {
							v = x[c * hw + iy * W + ix];
						}
						acc = fmaf(ld(wm, k), v, acc);
					}
				}
			}
			y[r] = pop_round(activate(acc + ld(w, bo + m), act), bf);
			break;
		}
		case POP_DENSE: {
			const T* wm = w + wo + r * C;
			float acc = 0.0f;
			for (long long k = 0; k < C; ++k) {
				acc = fmaf(ld(wm, k), x[k], acc);
			}
			y[r] = pop_round(activate(acc + ld(w, bo + r), act), bf);
			break;
		}
		case POP_MAXPOOL:
		case POP_AVGPOOL: {
			const bool mx = op == POP_MAXPOOL;
			const long long c = r / ohw, p = r - c * ohw;
			const long long oy = p / OW, ox = p - oy * OW;
			const long long base = c * hw + oy * S * W + ox * S;
			float acc = mx ? x[base] : 0.0f;
			for (long long ky = 0; ky < K; ++ky) {
				for (long long kx = 0; kx < K; ++kx) {
					const float v = x[base + ky * W + kx];
					if (mx) {
						if (v != v || v > acc) {
							acc = v;
						}
					} else {
						acc += v;
					}
				}
			}
			if (!mx) {
				acc *= 1.0f / (float)(K * K);
			}
			y[r] = pop_round(acc, bf);
			break;
		}
		case POP_GAP: {
			// gap's order: 32 lanes each add every 32nd pixel, then the
			// lanes' sums are added in lane order.
			float tot = 0.0f;
			for (long long l = 0; l < 32; ++l) {
				float part = 0.0f;
				for (long long j = l; j < hw; j += 32) {
					part += x[r * hw + j];
				}
				tot += part;
			}
			y[r] = pop_round(tot / (float)hw, bf);
			break;
		}
		case POP_MERGE_PAD:
			y[r] = r < C * hw ? x[r] : 0.0f;
			break;
		case POP_MERGE_ADD:
			y[r] += x[r];
			break;
		case POP_MERGE_CAT:
			y[K * hw + r] = x[r];
			break;
		}
	}
}

// pop_forward: block b runs tile b − H_FIRST of the request whose blocks
// hold b (the requests' first blocks ascend).
template <class T>
NE_DEV void pop_forward(const PopArgs& a) {
	NE_DYN_SHARED(float, sm);
	long long lo = 0, hi = a.nreq - 1;
	const long long b = blockIdx.x;
	while (lo < hi) {
		const long long mid = (lo + hi + 1) / 2;
		if (a.hdr[mid * POP_HDR + H_FIRST] <= b) {
			lo = mid;
		} else {
			hi = mid - 1;
		}
	}
	const long long* h = a.hdr + lo * POP_HDR;
	const long long n = h[H_N], tile = h[H_TILE], F = h[H_FRAME];
	const long long img0 = (b - h[H_FIRST]) * tile;
	const long long nt = (tile < n - img0 ? tile : n - img0);
	if (nt <= 0) {
		return; // the whole block, before any barrier
	}
	const T* images = (const T*)h[H_IMAGES];
	const T* w = (const T*)h[H_WEIGHTS];
	const long long insz = h[H_INSIZE], inoff = h[H_INOFF];
	for (long long e = threadIdx.x; e < nt * insz; e += NE_THREADS) {
		const long long t = e / insz;
		sm[t * F + inoff + (e - t * insz)] = ld(images, img0 * insz + e);
	}
	__syncthreads();
	const long long* steps = (const long long*)h[H_STEPS];
	for (long long i = 0; i < h[H_NSTEPS]; ++i) {
		pop_step<T>(steps + i * POP_FIELDS, sm, nt, F, w);
		__syncthreads();
	}
	// reduce_logits' work for one row, by one thread per image.
	const int C = (int)h[H_CLASSES];
	for (long long t = threadIdx.x; t < nt; t += NE_THREADS) {
		const long long img = img0 + t;
		const RowStats st = row_stats(sm + t * F + h[H_LOGITS], C, ((const unsigned char*)h[H_LABELS])[img]);
		((unsigned char*)h[H_KIND])[img] = (unsigned char)st.kind;
		((double*)h[H_LOSS])[img] = st.loss;
	}
}

#define POP_ENTRY(tc, T)                                                                          \
	extern "C" __global__ void __launch_bounds__(NE_THREADS) pop_forward_##tc(const PopArgs a) { \
		pop_forward<T>(a);                                                                      \
	}                                                                                           \
	NE_REGISTER(pop_forward_##tc, PopArgs)

POP_ENTRY(f, float)
POP_ENTRY(h, bf16_t)

// pop_reduce: block r adds request r's records as reduce_logits adds its
// rows (thread t: rows t, t + 256, …; then a fixed tree), so a slice's
// Stats are those of the per-layer path.
extern "C" __global__ void __launch_bounds__(NE_THREADS) pop_reduce(const PopArgs a) {
	const long long* h = a.hdr + (long long)blockIdx.x * POP_HDR;
	const long long n = h[H_N];
	const double* lv = (const double*)h[H_LOSS];
	const unsigned char* kind = (const unsigned char*)h[H_KIND];
	double loss = 0.0;
	long long corr = 0, nf = 0;
	for (long long r = threadIdx.x; r < n; r += NE_THREADS) {
		if (kind[r] == ROW_NONFINITE) {
			++nf;
			continue;
		}
		if (kind[r] == ROW_RIGHT) {
			++corr;
		}
		loss += lv[r];
	}
	block_stats(loss, corr, nf, n, (void*)h[H_STATS]);
}
NE_REGISTER(pop_reduce, PopArgs)
