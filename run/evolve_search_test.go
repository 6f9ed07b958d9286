package run_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// searchRun runs `neateval evolve` on real MNIST with cfg's [evolve] keys
// for gens generations, scoring the best genome on the first 2000 test
// images, and returns its test accuracy.
func searchRun(t *testing.T, ec config.Evolve, gens int) float64 {
	t.Helper()
	cfg := config.Default()
	dir := t.TempDir()
	ec.Generations, ec.CheckpointDir, ec.Best = gens, filepath.Join(dir, "ck"), filepath.Join(dir, "best.json")
	cfg.Evolve = ec
	cfg.Dataset.Kind, cfg.Dataset.Limit = "mnist", 2000
	cfg.Eval.Threads = 2
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run.EvolveData(cfg); err != nil {
		t.Skipf("MNIST is not available: %v", err)
	}
	res, err := run.Evolve(context.Background(), run.EvolveSpec{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return res.Test.Accuracy
}

// TestDefaultSearchBeatsLegacy holds the default search to beating the
// search it replaced (neat.LegacyEvolveConfig on 2000 fixed validation
// images, fitness accuracy alone) on the same budget of images × genomes
// scored: 30 generations of 40 genomes on 200 images against 3 of 40 on
// 2000. It is a behaviour check, not a timing: both runs are seeded and
// give the same figures on every machine (default 0.438, legacy 0.249
// when written).
func TestDefaultSearchBeatsLegacy(t *testing.T) {
	if testing.Short() {
		t.Skip("two MNIST evolve runs: seconds")
	}
	def := config.Default().Evolve
	legacy := config.Default().Evolve
	legacy.EvolveConfig = neat.LegacyEvolveConfig()
	legacy.ValSize, legacy.ValBatch, legacy.LossWeight = 2000, 0, 0
	budget := def.PopulationSize * def.ValBatch * 30
	if got := legacy.PopulationSize * legacy.ValSize * 3; got != budget {
		t.Fatalf("budgets differ: %d and %d images × genomes", budget, got)
	}
	newAcc := searchRun(t, def, 30)
	oldAcc := searchRun(t, legacy, 3)
	t.Logf("test accuracy after %d images × genomes: default %.4f, legacy %.4f", budget, newAcc, oldAcc)
	if newAcc <= oldAcc+0.05 {
		t.Errorf("default search %.4f, legacy %.4f on the same budget: want the default ahead by > 0.05", newAcc, oldAcc)
	}
}
