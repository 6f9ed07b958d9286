package evaluator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// BenchmarkPrefetch scores a staged generation (a mix of wide and small
// genomes, several per chunk) with and without prefetch, and reports
// genomes/s and the share of the wall time spent loading weights: in all
// (load-%) and exposed, with no evaluation overlapping it (exposed-load-%).
//
//	go test -run '^$' -bench Prefetch ./evaluator/
func BenchmarkPrefetch(b *testing.B) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	wide := neat.Generate(2, 12, in, 10, neat.WideGenConfig())
	small := neat.Generate(1, 36, in, 10, neat.DefaultGenConfig())
	pop := &neat.Population{Input: in, NumClasses: 10}
	for i, g := range wide.Genomes {
		pop.Genomes = append(pop.Genomes, small.Genomes[i*3:i*3+3]...)
		pop.Genomes = append(pop.Genomes, g)
	}
	// With 64 images the forwards dominate; with 4 the loads weigh more.
	for _, images := range []int{64, 4} {
		ds := datasets.Synthetic(images, 1, 28, 28, 10, 1)
		for _, prefetch := range []bool{false, true} {
			benchmarkPrefetch(b, fmt.Sprintf("images=%d/prefetch=%v", images, prefetch), pop, ds, prefetch)
		}
	}
}

func benchmarkPrefetch(b *testing.B, name string, pop *neat.Population, ds *datasets.Dataset, prefetch bool) {
	b.Run(name, func(b *testing.B) {
		be, err := cpu.New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 512 << 20, Threads: 2})
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		st := staging.DefaultConfig()
		st.Adaptive = false
		st.ChunkBytes = 4 << 20
		st.Prefetch = prefetch
		e, err := evaluator.New(be, ds, st, evaluator.Options{EvalBatchSize: ds.N, Parallel: 1, Threads: 2, CacheData: true})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		var wall, load, exposed time.Duration
		b.ResetTimer()
		for b.Loop() {
			start := time.Now()
			if _, err := e.Evaluate(context.Background(), pop, nil); err != nil {
				b.Fatal(err)
			}
			wall += time.Since(start)
			l, x := e.Manager().LoadTimes()
			load += l
			exposed += x
		}
		if p := e.Manager().Plan(); p.Prefetch != prefetch {
			b.Fatalf("plan prefetch %v, want %v (%d chunks)", p.Prefetch, prefetch, len(p.Chunks))
		}
		b.ReportMetric(float64(len(pop.Genomes))*float64(b.N)/wall.Seconds(), "genomes/s")
		b.ReportMetric(100*load.Seconds()/wall.Seconds(), "load-%")
		b.ReportMetric(100*exposed.Seconds()/wall.Seconds(), "exposed-load-%")
		b.ReportMetric(float64(len(e.Manager().Plan().Chunks)), "chunks")
	})
}
