//go:build cuda || cudaemu

package cuda

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// BenchmarkEvaluateMNIST scores a population file on the MNIST test set, the
// work PyTorch's reference does (bench/torch_ref.py): set
// NEATEVAL_BENCH_POP to the population JSON and NEATEVAL_MNIST_DIR to the
// folder of t10k-*-ubyte.gz; NEATEVAL_BENCH_BATCH (default 10000) and
// NEATEVAL_BENCH_PARALLEL (default 8) tune it, NEATEVAL_BENCH_LIMIT
// scores only the first images, and NEATEVAL_BENCH_PRECISION is the compute
// precision ("fp32", the default, or "tf32"). One warm-up evaluation runs
// first (module JIT, allocator, streams). It reports images·genomes/s and
// the achieved GFLOP/s (2 × multiply-adds of conv2d and dense), counting
// the valid genomes as torch_ref.py does, and the forwards' summed device
// time per evaluation (device-ms/op).
func BenchmarkEvaluateMNIST(b *testing.B) {
	popPath := os.Getenv("NEATEVAL_BENCH_POP")
	if popPath == "" || os.Getenv("NEATEVAL_MNIST_DIR") == "" {
		b.Skip("set NEATEVAL_BENCH_POP and NEATEVAL_MNIST_DIR")
	}
	batch := envInt(b, "NEATEVAL_BENCH_BATCH", 10000)
	par := envInt(b, "NEATEVAL_BENCH_PARALLEL", 8)
	limit := 0
	if os.Getenv("NEATEVAL_BENCH_LIMIT") != "" {
		limit = envInt(b, "NEATEVAL_BENCH_LIMIT", 0)
	}
	ds, err := datasets.Open(datasets.Spec{Kind: "mnist", Path: os.Getenv("NEATEVAL_MNIST_DIR"), Split: "test", Limit: limit})
	if err != nil {
		b.Fatal(err)
	}
	pop, err := neat.Load(popPath)
	if err != nil {
		b.Fatal(err)
	}
	var flops int64
	valid := 0
	for _, g := range pop.Genomes {
		if gr, err := neat.Compile(g, pop.Input, pop.NumClasses); err == nil {
			flops += gr.FLOPs * int64(ds.N)
			valid++
		}
	}
	be := newT(b, evaluator.BackendOptions{ComputePrecision: os.Getenv("NEATEVAL_BENCH_PRECISION")})
	e, err := evaluator.New(be, ds, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: batch, Parallel: par, CacheData: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	run := func() {
		rs, err := e.Evaluate(context.Background(), pop, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if r.Err != nil {
				b.Logf("genome %d: %v", r.GenomeID, r.Err)
			}
		}
	}
	run()
	cb := be.(*Backend)
	dev0 := cb.DeviceTime()
	b.ResetTimer()
	for range b.N {
		run()
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	// The forwards' device time, each from its stream's events: the
	// performance model's "device time" (docs/gpu-performance-model.md) is
	// the same sum; with parallel streams sharing the card each forward's
	// span also holds the others' kernels, so it is an upper bound.
	b.ReportMetric((cb.DeviceTime()-dev0).Seconds()*1e3/float64(b.N), "device-ms/op")
	b.ReportMetric(float64(valid*ds.N)/sec, "images·genomes/s")
	b.ReportMetric(float64(flops)/sec/1e9, "GFLOP/s")
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}
