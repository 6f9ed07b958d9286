package run_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/tfevents"
)

// readEvents reads the one event file of dir.
func readEvents(t *testing.T, dir string) *tfevents.Log {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if len(files) != 1 {
		t.Fatalf("%d event files in %s", len(files), dir)
	}
	l, err := tfevents.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTensorBoard runs a scoring run and an evolve run with
// output.tb_logdir and reads their scalars back.
func TestTensorBoard(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 300
	cfg.Population.GenerateSize = 4
	cfg.VRAM.MemoryBytes = 12 << 20 // small: the batch shrinks
	cfg.Output.Results = filepath.Join(dir, "r.jsonl")
	cfg.Output.TBLogdir = filepath.Join(dir, "run")
	if _, err := run.Run(context.Background(), run.Spec{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	l := readEvents(t, cfg.Output.TBLogdir)
	thr, peak, batch := l.Scalars(tfevents.TagThroughput), l.Scalars(tfevents.TagPeakPredictedBytes), l.Scalars(tfevents.TagBatchSize)
	if len(thr) != 1 || thr[0].Value <= 0 || len(peak) != 1 || peak[0].Value <= 0 {
		t.Errorf("throughput %v, predicted peak %v", thr, peak)
	}
	if len(batch) < 2 || batch[0].Value != 300 {
		t.Errorf("batch sizes %v: want the start (300) and its changes", batch)
	}

	cfg.Evolve.Generations, cfg.Evolve.PopulationSize, cfg.Evolve.ValSize = 3, 6, 100
	cfg.Evolve.CheckpointDir, cfg.Evolve.Best = filepath.Join(dir, "ck"), filepath.Join(dir, "best.json")
	cfg.VRAM.MemoryBytes = 0
	cfg.Output.TBLogdir = filepath.Join(dir, "evolve")
	if _, err := run.Evolve(context.Background(), run.EvolveSpec{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	l = readEvents(t, cfg.Output.TBLogdir)
	for _, tag := range []string{tfevents.TagBestFitness, tfevents.TagMeanFitness, tfevents.TagMedianFitness, tfevents.TagSpecies,
		tfevents.TagBestParams, tfevents.TagBestFLOPs, tfevents.TagEvaluated, tfevents.TagFailed} {
		ps := l.Scalars(tag)
		if len(ps) != 3 || ps[2].Step != 2 {
			t.Errorf("%s: %v, want one point per generation", tag, ps)
		}
	}
}
