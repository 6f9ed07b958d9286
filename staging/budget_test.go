package staging_test

import (
	"testing"

	"github.com/neateval/neateval/staging"
)

// TestResidentUnderCeiling: a population within the resident threshold is
// still staged when fixed memory leaves the peak ceiling below it, so that a
// resident generation never plans past vram_usage_threshold.
func TestResidentUnderCeiling(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.ChunkBytes = 64 * MiB
	items := uniform(100, 2*MiB, 200*MiB) // 400 MiB: under 50% of 1 GiB
	for _, tc := range []struct {
		fixed int64
		mode  staging.Mode
	}{
		{0, staging.GPUResident},
		{419 * MiB, staging.GPUResident}, // ceiling 819.2 − 419 = 400.2 MiB
		{420 * MiB, staging.CPUStaged},   // 399.2 MiB < 400 MiB
	} {
		p, err := staging.NewPlan(cfg, items, GiB, tc.fixed)
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode != tc.mode {
			t.Errorf("fixed %d MiB: mode %s, want %s", tc.fixed/MiB, p.Mode, tc.mode)
		}
		if p.PeakPredicted > p.PeakBudget {
			t.Errorf("fixed %d MiB: predicted peak %d over the budget %d", tc.fixed/MiB, p.PeakPredicted, p.PeakBudget)
		}
	}
}

// TestPrefetchUnderSingleBudget: with the single budget, chunks are packed
// to 40–50% of the device, and the next chunk's weights may still load
// beside one when the ceiling (80% − fixed) has room: activations dominate.
func TestPrefetchUnderSingleBudget(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	p, err := staging.NewPlan(cfg, uniform(500, MiB, 300*MiB), GiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !p.SingleBudget || len(p.Chunks) != 3 || p.GenomesPerChunk != 212 {
		t.Fatalf("single budget %v, %d chunks of up to %d genomes; want 3 of up to 212", p.SingleBudget, len(p.Chunks), p.GenomesPerChunk)
	}
	if !p.Prefetch || p.Prefetched() != 2 {
		t.Errorf("prefetch %v, %d chunks prefetched; want both later chunks", p.Prefetch, p.Prefetched())
	}
	ceiling := int64(threshold * float64(GiB))
	if want := p.Chunks[0].Peak + p.Chunks[1].Model; p.PeakPredicted != want || want > ceiling {
		t.Errorf("predicted peak %d, want %d under the ceiling %d", p.PeakPredicted, want, ceiling)
	}
}

// TestPrefetchPerPair: a genome whose peak is over the ceiling on its own
// keeps the next chunk from loading beside it, and nothing else: its own
// weights still load while the small chunk before it is evaluated.
func TestPrefetchPerPair(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 10 * MiB
	items := uniform(40, MiB, MiB)
	items[25] = staging.Item{Index: 25, Model: 300 * MiB, Act: 200 * MiB} // over the 409.6 MiB ceiling alone
	p, err := staging.NewPlan(cfg, items, 512*MiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := -1
	for k, c := range p.Chunks {
		if len(c.Items) == 1 && c.Items[0] == 25 {
			big = k
		}
	}
	if big < 1 || big+1 >= len(p.Chunks) || !p.Chunks[big].Oversize {
		t.Fatalf("the big genome's chunk is %d of %d: want an oversize chunk in the middle", big, len(p.Chunks))
	}
	for k, c := range p.Chunks {
		want := k > 0 && k != big+1
		if c.Prefetched != want {
			t.Errorf("chunk %d prefetched %v, want %v", k, c.Prefetched, want)
		}
	}
	if !p.Prefetch {
		t.Error("one oversize genome turned prefetch off for every chunk")
	}
}

// TestPackWhenActivationsBind: with two forwards in flight, genomes whose
// weights and activations take over half the peak budget cannot share a
// chunk; the lower bound counts them, and packing in decreasing
// activations reaches it, where packing by weights alone would leave them
// in 39 chunks of their own beside 7 full ones (46).
func TestPackWhenActivationsBind(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 64 * MiB
	cfg.Parallel = 2
	var items []staging.Item
	for i := range 440 {
		it := staging.Item{Index: i, Model: MiB, Act: 10 * MiB}
		if i%11 == 5 {
			it = staging.Item{Index: i, Model: 100 * KiB, Act: 500 * MiB}
		}
		items = append(items, it)
	}
	p, err := staging.NewPlan(cfg, items, GiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.LowerBound != 40 || len(p.Chunks) != 40 {
		t.Errorf("%d chunks, lower bound %d; want 40 and 40", len(p.Chunks), p.LowerBound)
	}
	for k, c := range p.Chunks {
		if c.Model > p.ModelBudget || c.Peak > p.PeakBudget {
			t.Errorf("chunk %d: weights %d, peak %d over the budgets", k, c.Model, c.Peak)
		}
	}
}

// TestLowerBoundWithOversize: an oversize genome takes one chunk however
// large it is; its weights do not count against the others'.
func TestLowerBoundWithOversize(t *testing.T) {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = 10 * MiB
	items := uniform(20, MiB, MiB)
	items[7] = staging.Item{Index: 7, Model: 40 * MiB, Act: MiB}
	p, err := staging.NewPlan(cfg, items, 512*MiB, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 1 chunk for the 40 MiB genome, ⌈19 MiB / 10 MiB⌉ for the rest (not
	// ⌈59 / 10⌉ = 6).
	if p.LowerBound != 3 || len(p.Chunks) != 3 {
		t.Errorf("%d chunks, lower bound %d; want 3 and 3", len(p.Chunks), p.LowerBound)
	}
}
