package cpu

import (
	"testing"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// TestPlanNoOverlap checks the planner's one rule: buffers live at the same
// step never share bytes.
func TestPlanNoOverlap(t *testing.T) {
	bufs := []interval{
		{0, 3, 100, 0}, {0, 0, 300, 0}, {1, 2, 50, 0}, {1, 1, 400, 0},
		{2, 3, 70, 0}, {3, 3, 1000, 0}, {2, 2, 64, 0},
	}
	size := memPlan(bufs, nil)
	for i, a := range bufs {
		if a.off < 0 || a.off+a.size > size || a.off%planAlign != 0 {
			t.Errorf("buffer %d at [%d, %d) outside [0, %d) or unaligned", i, a.off, a.off+a.size, size)
		}
		for j, b := range bufs[:i] {
			if a.first <= b.last && b.first <= a.last && a.off < b.off+b.size && b.off < a.off+a.size {
				t.Errorf("buffers %d and %d overlap in time and space", i, j)
			}
		}
	}
}

// TestPlanNearLiveness measures the plan of generated genomes against the
// liveness peak (its lower bound) and against the sum of all buffers.
func TestPlanNearLiveness(t *testing.T) {
	c, err := New(evaluator.BackendOptions{MemoryBytes: 64 << 20, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	worst, sumRatio, n := 0.0, 0.0, 0
	for _, cfg := range []neat.GenConfig{neat.DefaultGenConfig(), neat.WideGenConfig()} {
		pop := neat.Generate(9, 60, in, 10, cfg)
		for _, g := range pop.Genomes {
			gr, err := neat.Compile(g, in, 10)
			if err != nil {
				t.Fatal(err)
			}
			const b = 256
			plan := c.plan(gr, b, true).size
			live := gr.PeakActivationBytes(b, 4, planAlign, func(g *neat.Graph, i, b int) int64 {
				return c.stepWorkspace(g, i, b) * 4
			}) + int64(b*in.Channels*in.Height*in.Width*4) // the streamed input
			if plan < live {
				t.Fatalf("genome %d: plan %d below the liveness peak %d", g.ID, plan, live)
			}
			r := float64(plan)/float64(live) - 1
			worst = max(worst, r)
			sumRatio += r
			n++
		}
	}
	t.Logf("forward block vs liveness peak over %d genomes: mean +%.2f%%, worst +%.2f%%", n, 100*sumRatio/float64(n), 100*worst)
	if worst > 0.25 {
		t.Errorf("worst plan %.0f%% over the liveness peak", worst*100)
	}
}

// TestBlockSizeIsPlanSize: Footprint's sizing (blockSize) is the size of
// the plan a forward lays out, for every slice size, thread count, dtype
// and data placement.
func TestBlockSizeIsPlanSize(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	for _, cfg := range []neat.GenConfig{neat.DefaultGenConfig(), neat.WideGenConfig()} {
		pop := neat.Generate(3, 60, in, 10, cfg)
		for _, threads := range []int{1, 2, 3} {
			for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
				c := &Backend{dtype: dt, threads: threads}
				for _, gen := range pop.Genomes {
					g, err := neat.Compile(gen, in, 10)
					if err != nil {
						t.Fatal(err)
					}
					for _, n := range []int{1, 2, 7, 25, 50, 200, 777, 1025} {
						for _, streamed := range []bool{false, true} {
							if got, want := c.blockSize(g, n, streamed), c.plan(g, n, streamed).size; got != want {
								t.Fatalf("genome %d, %d threads, %v, %d images, streamed %v: blockSize %d, plan %d",
									gen.ID, threads, dt, n, streamed, got, want)
							}
						}
					}
				}
			}
		}
	}
}
