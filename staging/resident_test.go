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
