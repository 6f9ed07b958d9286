package staging_test

import (
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/staging"
)

var threshold = 0.8

const (
	KiB = int64(1) << 10
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

func uniform(n int, model, act int64) []staging.Item {
	items := make([]staging.Item, n)
	for i := range items {
		items[i] = staging.Item{Index: i, Model: model, Act: act}
	}
	return items
}

// TestSeedWorkedExample reproduces the seed's example: 10,000 genomes,
// population_gpu_chunk_bytes = 2_000_000_000 of chunk weights, an 80%
// threshold, on a 16 GiB card, and its POP line exactly: the seed writes
// the chunk budget in decimal GB (2.00) and the peak in binary GB (12.80).
func TestSeedWorkedExample(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.ChunkBytes = 2_000_000_000
	cfg.UsageThreshold = 0.80
	items := uniform(10000, 1*MiB, 300*MiB) // activations at eval_batch_size 25000
	// The seed leaves the validation cache out of the overhead "for the
	// estimate"; with it (MNIST's 10,000 images in float32) the ceiling drops
	// by 30 MiB.
	for _, tc := range []struct {
		fixed int64
		line  string
	}{
		{0, "POP | CPU staged | models≤2.00 GB peak≤12.80 GB (80% VRAM−overhead) | 1907 genomes/chunk"},
		{10000 * 784 * 4, "POP | CPU staged | models≤2.00 GB peak≤12.77 GB (80% VRAM−overhead) | 1907 genomes/chunk"},
	} {
		p, err := staging.NewPlan(cfg, items, 16*GiB, tc.fixed)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != staging.CPUStaged {
			t.Errorf("mode %s, want cpu_staged", p.Mode)
		}
		if got := p.Line(cfg, len(items)); got != tc.line {
			t.Errorf("line\n%s\nwant\n%s", got, tc.line)
		}
		if p.ModelBudget != 2_000_000_000 || p.PeakBudget != int64(threshold*float64(16*GiB))-tc.fixed {
			t.Errorf("budgets %d / %d", p.ModelBudget, p.PeakBudget)
		}
		if len(p.Chunks) != 6 || p.LowerBound != 6 || p.SlotChunks != 6 {
			t.Errorf("chunks %d, lower bound %d, by-largest %d; want 6, 6, 6", len(p.Chunks), p.LowerBound, p.SlotChunks)
		}
		seen := 0
		for _, c := range p.Chunks {
			if c.Model > p.ModelBudget || c.Peak > p.PeakBudget {
				t.Errorf("chunk over budget: %+v", c)
			}
			seen += len(c.Items)
		}
		if seen != len(items) {
			t.Errorf("%d genomes in chunks, want %d", seen, len(items))
		}
	}
}

func TestModeBoundary(t *testing.T) {
	cfg := staging.DefaultConfig()
	total := 1 * GiB
	half := total / 2
	// 100 genomes; models + one forward's activations exactly at 50%.
	act := half - 100*MiB/2
	items := uniform(100, MiB/2, act)
	p, err := staging.NewPlan(cfg, items, total, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != staging.GPUResident || len(p.Chunks) != 1 || len(p.Chunks[0].Items) != 100 {
		t.Fatalf("at the threshold: mode %s, %d chunks", p.Mode, len(p.Chunks))
	}
	items[3].Act++
	if p, _ = staging.NewPlan(cfg, items, total, 0); p.Mode != staging.CPUStaged {
		t.Errorf("one byte over: mode %s, want cpu_staged", p.Mode)
	}
	// fitness_eval_parallel forwards count their activations each.
	cfg.Parallel = 2
	items[3].Act--
	if p, _ = staging.NewPlan(cfg, items, total, 0); p.Mode != staging.CPUStaged {
		t.Errorf("two forwards in flight: mode %s, want cpu_staged", p.Mode)
	}
	// Adaptive off always stages.
	cfg = staging.DefaultConfig()
	cfg.Adaptive = false
	if p, _ = staging.NewPlan(cfg, uniform(3, KiB, KiB), total, 0); p.Mode != staging.CPUStaged {
		t.Errorf("adaptive off: mode %s, want cpu_staged", p.Mode)
	}
}

// TestPeakBudgetBinds: when activations are large, the peak ceiling and not
// the weight budget limits a chunk: n·M_model + min(n, P)·M_act ≤ ceiling.
func TestPeakBudgetBinds(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.ChunkBytes = 2_000_000_000
	cfg.Parallel = 4
	items := uniform(5000, 1*MiB, 3*GiB)
	p, err := staging.NewPlan(cfg, items, 16*GiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	ceiling := int64(threshold * float64(16*GiB))
	want := int((ceiling - 4*3*GiB) / MiB) // 0.8 GiB left for 1 MiB models
	if p.GenomesPerChunk != want || p.SlotsPerChunk(4) != want {
		t.Errorf("genomes per chunk %d (by-largest %d), want %d", p.GenomesPerChunk, p.SlotsPerChunk(4), want)
	}
	for _, c := range p.Chunks {
		if c.Peak > ceiling {
			t.Errorf("chunk peak %d over ceiling %d", c.Peak, ceiling)
		}
	}
}

// TestPackingMixedSizes: genomes of sizes varying 100× pack into far fewer
// chunks than slots sized by the largest, close to the lower bound.
func TestPackingMixedSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	items := make([]staging.Item, 3000)
	for i := range items {
		m := int64(10*KiB) + rng.Int64N(990*KiB)
		items[i] = staging.Item{Index: i, Model: m, Act: 4 * m}
	}
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 64 * MiB
	p, err := staging.NewPlan(cfg, items, 4*GiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode != staging.CPUStaged {
		t.Fatalf("mode %s", p.Mode)
	}
	t.Logf("mixed sizes: %d chunks, lower bound %d, by-largest slots %d", len(p.Chunks), p.LowerBound, p.SlotChunks)
	if len(p.Chunks) > p.LowerBound+1 {
		t.Errorf("%d chunks, lower bound %d", len(p.Chunks), p.LowerBound)
	}
	if len(p.Chunks) >= p.SlotChunks {
		t.Errorf("packing by size used %d chunks, by the largest %d", len(p.Chunks), p.SlotChunks)
	}
	seen := make([]bool, len(items))
	for k, c := range p.Chunks {
		if c.Model > p.ModelBudget {
			t.Errorf("chunk %d weights %d over %d", k, c.Model, p.ModelBudget)
		}
		for j, i := range c.Items {
			if seen[i] {
				t.Errorf("genome %d in two chunks", i)
			}
			seen[i] = true
			if j > 0 && c.Items[j-1] > i {
				t.Errorf("chunk %d not in population order", k)
			}
		}
	}
	for i, s := range seen {
		if !s {
			t.Errorf("genome %d in no chunk", i)
		}
	}
}

func TestOversizeEmptyAndOne(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 10 * MiB
	items := uniform(20, MiB, MiB)
	items[7] = staging.Item{Index: 7, Model: 40 * MiB, Act: MiB}
	p, err := staging.NewPlan(cfg, items, 512*MiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range p.Chunks {
		for _, i := range c.Items {
			if i == 7 {
				found = true
				if len(c.Items) != 1 || !c.Oversize {
					t.Errorf("oversize genome shares a chunk: %+v", c)
				}
			}
		}
	}
	if !found {
		t.Error("oversize genome in no chunk")
	}
	p, err = staging.NewPlan(cfg, nil, 512*MiB, 0)
	if err != nil || len(p.Chunks) != 0 {
		t.Errorf("empty population: %v, %d chunks", err, len(p.Chunks))
	}
	p, err = staging.NewPlan(cfg, uniform(1, MiB, MiB), 512*MiB, 0)
	if err != nil || len(p.Chunks) != 1 || p.Prefetch {
		t.Errorf("one genome: %v, %+v", err, p)
	}
}

func TestSingleBudget(t *testing.T) {
	cfg := staging.DefaultConfig()
	p, err := staging.NewPlan(cfg, uniform(100, 10*MiB, 10*MiB), 1*GiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !p.SingleBudget || p.ModelBudget != GiB/2 || p.PeakBudget != GiB/2 {
		t.Errorf("single budget %v %d %d, want 50%% of the device", p.SingleBudget, p.ModelBudget, p.PeakBudget)
	}
	// Fixed memory lowers it, down to the floor of 40%.
	p, _ = staging.NewPlan(cfg, uniform(100, 10*MiB, 10*MiB), 1*GiB, 400*MiB)
	if want := int64(threshold*float64(GiB)) - 400*MiB; p.PeakBudget != want {
		t.Errorf("with 400 MiB fixed: budget %d, want %d", p.PeakBudget, want)
	}
	p, _ = staging.NewPlan(cfg, uniform(100, 10*MiB, 10*MiB), 1*GiB, 500*MiB)
	if p.PeakBudget != int64(threshold/2*float64(GiB)) {
		t.Errorf("with 500 MiB fixed: budget %d, want the 40%% floor %d", p.PeakBudget, int64(threshold/2*float64(GiB)))
	}
}

func TestPrefetchNeedsRoom(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 100 * MiB
	items := uniform(50, 10*MiB, 10*MiB)
	p, _ := staging.NewPlan(cfg, items, 1*GiB, 0)
	if !p.Prefetch {
		t.Errorf("room for two chunks, no prefetch: %+v", p)
	}
	p, _ = staging.NewPlan(cfg, items, 1*GiB, 1*GiB*8/10-150*MiB)
	if p.Prefetch {
		t.Errorf("no room for two chunks, prefetch on")
	}
	cfg.Prefetch = false
	if p, _ = staging.NewPlan(cfg, items, 1*GiB, 0); p.Prefetch {
		t.Error("prefetch off in the config, on in the plan")
	}
}
