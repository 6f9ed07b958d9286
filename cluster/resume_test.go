package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
)

// A coordinator stopped part way, and another started for the same run:
// the second takes the results delivered to the broker and scores only
// what is missing; every genome has its result once.
func TestCoordinatorResume(t *testing.T) {
	f := newFixture(t, 12)
	want, err := f.evaluator().Evaluate(context.Background(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.startWorker("w", cluster.WorkerOptions{})
	digest := neat.ContentDigest(f.pop)
	h := results.Header{Population: digest, Genomes: len(f.pop.Genomes), Dataset: f.ds.Identity(), Fitness: f.cfg.Eval.Fitness}
	job := cluster.Job{Pop: f.pop, Digest: digest, Run: h.RunID()}

	ctx, stop := context.WithCancel(withTimeout(t, time.Minute))
	first := f.coordinator(cluster.CoordinatorOptions{ItemGenomes: 2})
	_, err = first.Score(ctx, job, func([]evaluator.Result) error { stop(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first coordinator: %v, want cancelled", err)
	}

	got := make([]evaluator.Result, len(want))
	seen := map[int]int{}
	second := f.coordinator(cluster.CoordinatorOptions{ItemGenomes: 2})
	st, err := second.Score(withTimeout(t, time.Minute), job, func(rs []evaluator.Result) error {
		for _, r := range rs {
			got[r.Index] = r
			seen[r.Index]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Recovered < 1 {
		t.Errorf("recovered %d results, want the first coordinator's at least", st.Recovered)
	}
	sameResults(t, got, want)
	for i := range want {
		if seen[i] != 1 {
			t.Errorf("genome %d delivered %d times", i, seen[i])
		}
	}
}
