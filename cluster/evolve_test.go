package cluster_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/run"
)

// evolveConfig is a short `neateval evolve` run in dir whose generations
// are scored on samples of the validation set (evolve.val_batch), the
// path a cluster must reproduce draw for draw.
func evolveConfig(dir string) *config.Config {
	cfg := testConfig(0)
	cfg.Dataset.SyntheticSize = 400
	ec := &cfg.Evolve
	ec.Generations, ec.PopulationSize, ec.ValSize, ec.ValBatch = 3, 10, 200, 80
	ec.CheckpointDir, ec.Best = filepath.Join(dir, "ckpt"), filepath.Join(dir, "best.json")
	return cfg
}

// `neateval evolve --workers 2` is the run `neateval evolve` makes: the
// same checkpoints, generation for generation, and the same best genome,
// fitness and test score. The workers draw each generation's sample from
// their own copy of the validation set, and the coordinator applies the
// penalised evolve fitness to the metrics they return.
func TestEvolveWorkers(t *testing.T) {
	local, remote := t.TempDir(), t.TempDir()
	lr, err := run.Evolve(withTimeout(t, 2*time.Minute), run.EvolveSpec{Config: evolveConfig(local), Logger: &nop})
	if err != nil {
		t.Fatal(err)
	}
	cfg := evolveConfig(remote)
	cfg.Cluster.Workers, cfg.Cluster.ItemGenomes = 2, 3
	var logs bytes.Buffer
	log := zerolog.New(zerolog.SyncWriter(&logs)) // the workers log from their goroutines
	rr, err := run.Evolve(withTimeout(t, 2*time.Minute), run.EvolveSpec{Config: cfg, Logger: &log, Remote: cluster.OpenRemote})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `"event":"`+cluster.EventItemDone+`"`); n < 3 {
		t.Errorf("%d items done by the workers in 3 generations of 10 genomes, items of 3: want ≥ 3", n)
	}
	if lr.Best.ID != rr.Best.ID || lr.Fitness != rr.Fitness || lr.Generation != rr.Generation ||
		lr.Test.Accuracy != rr.Test.Accuracy || lr.Test.Loss != rr.Test.Loss {
		t.Errorf("cluster run's best: genome %d fitness %v (gen %d), test %v/%v; local: genome %d fitness %v (gen %d), test %v/%v",
			rr.Best.ID, rr.Fitness, rr.Generation, rr.Test.Accuracy, rr.Test.Loss,
			lr.Best.ID, lr.Fitness, lr.Generation, lr.Test.Accuracy, lr.Test.Loss)
	}
	files, err := filepath.Glob(filepath.Join(local, "ckpt", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no checkpoint files (%v)", err)
	}
	for _, f := range append(files, filepath.Join(local, "best.json")) {
		rel, _ := filepath.Rel(local, f)
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(remote, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs between the local and the cluster run", rel)
		}
	}
}

// A generation's items carry their sample: a worker scores them on the
// images it draws, as an evaluator on that subset does here, and a worker
// that cannot draw samples refuses them.
func TestSampled(t *testing.T) {
	f := newFixture(t, 6)
	s := cluster.Sample{Size: 50, Seed: 7}
	idx, _ := f.ds.Sample(s.Size, s.Seed)
	ev, err := evaluator.New(f.local().Evaluator.Backend(), f.ds.Subset(idx, "sub"), f.cfg.StagingConfig(), f.cfg.EvaluatorOptions(&nop))
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	want, err := ev.Evaluate(context.Background(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := cluster.Queue{AckWait: 2 * time.Second, MaxDeliver: 2}
	stop := f.startWorker("sampler", cluster.WorkerOptions{Queue: q})
	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 2})
	got, err := c.Sampled(&s, nil).Evaluate(withTimeout(t, 30*time.Second), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Err != nil || g.Images != s.Size || g.Fitness != w.Fitness || g.Loss != w.Loss {
			t.Errorf("genome %d: %d images, fitness %v loss %v err %v; want %d images, %v %v", g.GenomeID, g.Images, g.Fitness, g.Loss, g.Err, s.Size, w.Fitness, w.Loss)
		}
	}
	stop()
	f.startWorker("whole", cluster.WorkerOptions{Scorer: f.evaluator(), Queue: q})
	s.Seed++
	got, err = c.Sampled(&s, nil).Evaluate(withTimeout(t, 30*time.Second), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "refused by worker whole: this worker scores whole data sets") {
			t.Errorf("genome %d: err = %v, want the refusal", r.GenomeID, r.Err)
		}
	}
}
