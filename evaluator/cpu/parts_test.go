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
// is whole tiles and at least one tile; a slice of one tile split by images
// (one part per thread, at most one per image); one part (threads in the
// kernels) when there are several tiles but fewer than threads.
func TestPartsSplit(t *testing.T) {
	for _, tc := range []struct {
		n, threads int
		want       [][3]int // images, first image (one tile), kernel threads
	}{
		{1, 2, [][3]int{{1, 0, 2}}},
		{2, 4, [][3]int{{1, 0, 1}, {1, 1, 1}}},
		{50, 2, [][3]int{{25, 0, 1}, {25, 25, 1}}},
		{7, 3, [][3]int{{2, 0, 1}, {2, 2, 1}, {3, 4, 1}}},
		{256, 2, [][3]int{{128, 0, 1}, {128, 128, 1}}},
		{257, 2, [][3]int{{256, 0, 1}, {256, 0, 1}}},
		{10000, 2, [][3]int{{5120, 0, 1}, {4880, 0, 1}}},
		{777, 3, [][3]int{{256, 0, 1}, {256, 0, 1}, {265, 0, 1}}},
		{600, 4, [][3]int{{600, 0, 4}}},
		{10000, 1, [][3]int{{10000, 0, 1}}},
	} {
		c := &Backend{threads: tc.threads}
		var got [][3]int
		for _, p := range c.parts(tc.n, 256) {
			got = append(got, [3]int{p.n, p.first, p.threads})
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parts(%d) on %d threads = %v, want %v", tc.n, tc.threads, got, tc.want)
		}
	}
}

// TestPartsSameResults runs slices of several tiles, of one tile and of
// two images on 1 to 3 threads, with the parts split and with threads
// inside the kernels, in both dtypes, with the data cached and streamed: the
// statistics are bit for bit those of one thread (which the conformance
// suite holds to the float64 reference), and the allocation stays within
// the footprint.
func TestPartsSameResults(t *testing.T) {
	for _, n := range []int{777, 50, 9, 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testPartsSameResults(t, n) })
	}
}

func testPartsSameResults(t *testing.T, n int) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(4, 6, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(n, 1, 12, 12, 10, 4)
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
						if parts := len(c.plan(g, ds.N, !cached).parts); split && parts != min(threads, n) {
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
						} else if !st.Equal(want[gi]) {
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
