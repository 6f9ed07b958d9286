// ceiling measures the machine's practical fp32 peak with OpenBLAS's sgemm:
// C = A·B on n×n matrices, best of several repeats, printed as GFLOP/s.
// Build and run it with ceiling.sh (which sets OPENBLAS_CORETYPE).
//
// usage: ceiling [n] [repeats]
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2048;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 1 || reps < 1) {
		fprintf(stderr, "usage: ceiling [n >= 1] [repeats >= 1]\n");
		return 2;
	}
	size_t nn = (size_t)n * n;
	float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
	if (!a || !b || !c) {
		fprintf(stderr, "ceiling: out of memory for n=%d\n", n);
		return 1;
	}
	srand(1);
	for (size_t i = 0; i < nn; i++) {
		a[i] = (float)rand() / RAND_MAX - 0.5f;
		b[i] = (float)rand() / RAND_MAX - 0.5f;
		c[i] = 0;
	}
	// Warm up: thread pool, page faults, caches.
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	double flops = 2.0 * n * n * (double)n;
	printf("{\"n\": %d, \"repeats\": %d, \"best_seconds\": %.6f, \"gflops\": %.1f, \"config\": \"%s\"}\n",
	       n, reps, best, flops / best / 1e9, openblas_get_config());
	free(a);
	free(b);
	free(c);
	return 0;
}
