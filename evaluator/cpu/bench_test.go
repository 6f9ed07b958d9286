package cpu_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

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

// BenchmarkSmallSets scores 200 genomes of the small preset on small
// validation sets, as NEAT loops do (minibatch fitness, evolve.val_size),
// and on 2,000 images, alternating in one run, and reports each one's
// images·genomes/s and the ratio of the 100-image throughput to the
// 2,000-image one: how much a fixed cost per genome weighs (the goal is a
// ratio of at least one half).
//
//	go test -run '^$' -bench SmallSets -benchtime 3x ./evaluator/cpu/
func BenchmarkSmallSets(b *testing.B) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(9, 200, in, 10, neat.DefaultGenConfig())
	sizes := []int{20, 100, 2000}
	evs := make([]*evaluator.Evaluator, len(sizes))
	for i, n := range sizes {
		be, err := cpu.New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 2 << 30, Threads: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		e, err := evaluator.New(be, datasets.Synthetic(n, 1, 28, 28, 10, 1), staging.DefaultConfig(), evaluator.Options{Threads: 2, CacheData: true})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		evs[i] = e
	}
	rates := make([]float64, len(sizes))
	for b.Loop() {
		for i, e := range evs {
			start := time.Now()
			if _, err := e.Evaluate(context.Background(), pop, nil); err != nil {
				b.Fatal(err)
			}
			rates[i] += float64(sizes[i]*len(pop.Genomes)) / time.Since(start).Seconds()
		}
	}
	for i, n := range sizes {
		b.ReportMetric(rates[i]/float64(b.N), fmt.Sprintf("img·genomes/s@%d", n))
	}
	b.ReportMetric(rates[1]/rates[2], "ratio_100_vs_2000")
}

// BenchmarkForwardFixedCost is one small genome's forward of 8 images
// (one tile), over and over: what a forward costs beyond its arithmetic
// (planning, the block's allocation, the workspace, packing the weights,
// the tile loop), the per-genome fixed cost of small validation sets.
//
//	go test -run '^$' -bench ForwardFixedCost -benchmem -cpuprofile fixed.out ./evaluator/cpu/
func BenchmarkForwardFixedCost(b *testing.B) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(9, 1, in, 10, neat.DefaultGenConfig())
	g, err := neat.Compile(pop.Genomes[0], in, 10)
	if err != nil {
		b.Fatal(err)
	}
	be, err := cpu.New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 1 << 30, Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ds := datasets.Synthetic(8, 1, 28, 28, 10, 1)
	d, err := be.PrepareData(ds, true)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Release()
	m, err := be.Load(g)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Unload()
	b.ReportMetric(float64(g.FLOPs)*8/1e3, "kFLOP/forward")
	for b.Loop() {
		if _, err := be.Forward(context.Background(), m, d, 0, 8); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenomeFixedCost splits what scoring one small genome on a small
// validation set costs, per genome, over 200 genomes of the small preset
// (seed 9) on 50 images: compiling it (every weight checked), the memory
// model's sizing (the three Footprints the evaluator asks for: the
// planner's batch, 1 and 1,025 images), loading it (its weights' block in
// the arena),
// its forward on one thread and on two (one tile: its images split between
// two parts, or, as before, the kernels sharing each call's images), and the
// whole Evaluate, one genome at a time on two
// threads or two genomes at a time on one thread each. Each reports
// µs/genome.
//
//	go test -run '^$' -bench GenomeFixedCost -benchmem ./evaluator/cpu/
func BenchmarkGenomeFixedCost(b *testing.B) {
	const n, images = 200, 50
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(9, n, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images, 1, 28, 28, 10, 1)
	graphs := make([]*neat.Graph, n)
	for i, gen := range pop.Genomes {
		g, err := neat.Compile(gen, in, 10)
		if err != nil {
			b.Fatal(err)
		}
		graphs[i] = g
	}
	// Wall time moves with the machine's load; the process's CPU time
	// (user and system, all threads) much less: both are reported.
	var cpu0 time.Duration
	perGenome := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/genome")
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*n), "cpu-µs/genome")
	}
	loop := func(b *testing.B, body func()) {
		cpu0 = cpuTime()
		for b.Loop() {
			body()
		}
		perGenome(b)
	}
	newBackend := func(b *testing.B, threads int) *cpu.Backend {
		be, err := cpu.New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 2 << 30, Threads: threads})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { be.Close() })
		return be
	}
	b.Run("compile", func(b *testing.B) {
		loop(b, func() {
			for _, gen := range pop.Genomes {
				if _, err := neat.Compile(gen, in, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("footprint", func(b *testing.B) {
		be := newBackend(b, 2)
		loop(b, func() {
			for _, g := range graphs {
				be.Footprint(g, images, true)
				be.Footprint(g, 1, true)
				be.Footprint(g, 1025, true)
			}
		})
	})
	b.Run("load", func(b *testing.B) {
		be := newBackend(b, 2)
		loop(b, func() {
			for _, g := range graphs {
				m, err := be.Load(g)
				if err != nil {
					b.Fatal(err)
				}
				m.Unload()
			}
		})
	})
	for _, c := range []struct {
		threads int
		split   string
	}{{1, "-"}, {2, "parts"}, {2, "kernels"}} {
		b.Run(fmt.Sprintf("forward/threads=%d/split=%s", c.threads, c.split), func(b *testing.B) {
			defer cpu.SetTileParallel(cpu.SetTileParallel(c.split != "kernels"))
			be := newBackend(b, c.threads)
			d, err := be.PrepareData(ds, true)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Release()
			ms := make([]evaluator.Model, n)
			for i, g := range graphs {
				if ms[i], err = be.Load(g); err != nil {
					b.Fatal(err)
				}
				defer ms[i].Unload()
			}
			loop(b, func() {
				for _, m := range ms {
					if _, err := be.Forward(context.Background(), m, d, 0, images); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
	for _, c := range []struct{ parallel, threads int }{{1, 2}, {2, 1}} {
		b.Run(fmt.Sprintf("evaluate/parallel=%d/threads=%d", c.parallel, c.threads), func(b *testing.B) {
			be := newBackend(b, c.threads)
			e, err := evaluator.New(be, ds, staging.DefaultConfig(), evaluator.Options{
				Parallel: c.parallel, Threads: c.parallel * c.threads, CacheData: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			loop(b, func() {
				if _, err := e.Evaluate(context.Background(), pop, nil); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkOneTileSplit compares, in one run, the two ways two threads
// share a forward of one tile (50 images of a small genome): its images
// split between two parts, each through every step on one thread (the
// default), and every kernel call sharing its images between the threads
// (before). The two alternate genome by genome, so that a machine whose
// load changes slows both alike; it reports each one's µs/genome and
// kernels÷parts.
//
//	go test -run '^$' -bench OneTileSplit -benchtime 5x ./evaluator/cpu/
func BenchmarkOneTileSplit(b *testing.B) {
	const n, images = 200, 50
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(9, n, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images, 1, 28, 28, 10, 1)
	type variant struct {
		be *cpu.Backend
		d  evaluator.Data
		ms []evaluator.Model
		t  time.Duration
	}
	vs := make([]*variant, 2)
	for i, split := range []bool{true, false} {
		be, err := cpu.New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 2 << 30, Threads: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		v := &variant{be: be}
		if v.d, err = be.PrepareData(ds, true); err != nil {
			b.Fatal(err)
		}
		defer v.d.Release()
		prev := cpu.SetTileParallel(split)
		for _, gen := range pop.Genomes {
			g, err := neat.Compile(gen, in, 10)
			if err != nil {
				b.Fatal(err)
			}
			m, err := be.Load(g)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Unload()
			// The first forward plans the split; the model keeps the plan.
			if _, err := be.Forward(context.Background(), m, v.d, 0, images); err != nil {
				b.Fatal(err)
			}
			v.ms = append(v.ms, m)
		}
		cpu.SetTileParallel(prev)
		vs[i] = v
	}
	for b.Loop() {
		for i := range n {
			for _, v := range vs {
				start := time.Now()
				if _, err := v.be.Forward(context.Background(), v.ms[i], v.d, 0, images); err != nil {
					b.Fatal(err)
				}
				v.t += time.Since(start)
			}
		}
	}
	per := func(v *variant) float64 { return float64(v.t.Microseconds()) / float64(b.N*n) }
	b.ReportMetric(per(vs[0]), "µs/genome(parts)")
	b.ReportMetric(per(vs[1]), "µs/genome(kernels)")
	b.ReportMetric(per(vs[1])/per(vs[0]), "kernels/parts")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
