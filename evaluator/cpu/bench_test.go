package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// BenchmarkEvaluate scores a whole generated population (the small and the
// wide preset) through Evaluate on the CPU backend, for each split of the
// two cores between parallel genomes and threads inside a forward (a part
// of whole tiles per thread, or threads inside every kernel call), with
// each genome's tile or the former fixed 256 images, and
// reports images·genomes/s and GFLOP/s (FLOPs as the population format
// counts them). It is the benchmark to profile the whole evaluation with:
//
//	go test -run '^$' -bench Evaluate -cpuprofile cpu.out ./evaluator/cpu/
//	go tool pprof -top cpu.test cpu.out
func BenchmarkEvaluate(b *testing.B) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	ds := datasets.Synthetic(1024, 1, 28, 28, 10, 1)
	for _, preset := range []struct {
		name string
		size int
		gc   neat.GenConfig
	}{
		{"small", 32, neat.DefaultGenConfig()},
		{"wide", 8, neat.WideGenConfig()},
	} {
		pop := neat.Generate(1, preset.size, in, 10, preset.gc)
		for _, c := range []struct {
			parallel, threads int
			split             string
			tile              int
		}{
			{1, 2, "parts", 0}, {1, 2, "kernels", 256}, {2, 1, "-", 0}, {1, 1, "-", 0}, {1, 1, "-", 256},
		} {
			tile := "auto"
			if c.tile > 0 {
				tile = fmt.Sprint(c.tile)
			}
			name := fmt.Sprintf("%s/parallel=%d/threads=%d/split=%s/tile=%s", preset.name, c.parallel, c.threads, c.split, tile)
			b.Run(name, func(b *testing.B) {
				defer cpu.SetTileParallel(cpu.SetTileParallel(c.split != "kernels"))
				defer cpu.SetTile(cpu.SetTile(c.tile))
				benchmarkEvaluate(b, pop, ds, c.parallel, c.parallel*c.threads)
			})
		}
	}
}

func benchmarkEvaluate(b *testing.B, pop *neat.Population, ds *datasets.Dataset, parallel, threads int) {
	be, err := cpu.New(evaluator.BackendOptions{
		DType: vram.Float32, MemoryBytes: 2 << 30, Threads: evaluator.ThreadsPerForward(threads, parallel),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	e, err := evaluator.New(be, ds, staging.DefaultConfig(), evaluator.Options{
		Parallel: parallel, Threads: threads, CacheData: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var flops float64
	for b.Loop() {
		rs, err := e.Evaluate(context.Background(), pop, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			flops += float64(r.FLOPs) * float64(r.Images)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(len(pop.Genomes)*ds.N*b.N)/sec, "img·genomes/s")
	b.ReportMetric(flops/sec/1e9, "GFLOP/s")
}
