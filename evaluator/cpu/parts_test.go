package cpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// TestPartsSplit checks how a slice is cut among threads: each part's share
// is whole tiles and at least one tile; one part (threads in the kernels)
// when there are fewer tiles than threads.
func TestPartsSplit(t *testing.T) {
	for _, tc := range []struct {
		n, threads int
		want       [][2]int // images, kernel threads
	}{
		{1, 2, [][2]int{{1, 2}}},
		{256, 2, [][2]int{{256, 2}}},
		{257, 2, [][2]int{{256, 1}, {256, 1}}},
		{10000, 2, [][2]int{{5120, 1}, {4880, 1}}},
		{777, 3, [][2]int{{256, 1}, {256, 1}, {265, 1}}},
		{600, 4, [][2]int{{600, 4}}},
		{10000, 1, [][2]int{{10000, 1}}},
	} {
		c := &Backend{threads: tc.threads}
		var got [][2]int
		for _, p := range c.parts(tc.n, 256) {
			got = append(got, [2]int{p.n, p.threads})
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parts(%d) on %d threads = %v, want %v", tc.n, tc.threads, got, tc.want)
		}
	}
}

// TestPartsSameResults runs slices of several tiles on 1 to 3 threads, with
// the parts split and with threads inside the kernels, in both dtypes, with
// the data cached and streamed: the statistics are bit for bit those of
// one thread (which the conformance suite holds to the float64 reference),
// and the allocation stays within the footprint.
func TestPartsSameResults(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(4, 6, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(777, 1, 12, 12, 10, 4)
	ctx := context.Background()
	for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
		for _, cached := range []bool{true, false} {
			var want []evaluator.SliceStats
			for _, threads := range []int{1, 2, 3} {
				for _, split := range []bool{true, false} {
					prev := tileParallel
					tileParallel = split
					c, err := New(evaluator.BackendOptions{DType: dt, MemoryBytes: 256 << 20, Threads: threads})
					if err != nil {
						t.Fatal(err)
					}
					data, err := c.PrepareData(ds, cached)
					if err != nil {
						t.Fatal(err)
					}
					for gi, gen := range pop.Genomes {
						g, err := neat.Compile(gen, in, 10)
						if err != nil {
							t.Fatal(err)
						}
						m, err := c.Load(g)
						if err != nil {
							t.Fatal(err)
						}
						if parts := len(c.plan(g, ds.N, !cached).parts); split && parts != threads {
							t.Fatalf("threads=%d: %d parts", threads, parts)
						}
						base := c.dev.Stats().Allocated
						c.dev.ResetPeak()
						st, err := c.Forward(ctx, m, data, 0, ds.N)
						if err != nil {
							t.Fatal(err)
						}
						peak := c.dev.Stats().PeakAllocated - base
						if fp := c.Footprint(g, ds.N, cached); fp.Act < peak {
							t.Errorf("%v cached=%v threads=%d: genome %d allocated %d, footprint %d", dt, cached, threads, g.GenomeID, peak, fp.Act)
						}
						m.Unload()
						if threads == 1 && split {
							want = append(want, st)
						} else if st != want[gi] {
							t.Errorf("%v cached=%v threads=%d split=%v: genome %d: %+v, want %+v", dt, cached, threads, split, g.GenomeID, st, want[gi])
						}
					}
					data.Release()
					c.Close()
					tileParallel = prev
				}
			}
		}
	}
}
