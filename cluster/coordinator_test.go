package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// Two workers score a population as one evaluator does: the same results,
// field by field, and each genome once.
func TestClusterEqualsLocal(t *testing.T) {
	f := newFixture(t, 24)
	want, err := f.evaluator().Evaluate(context.Background(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.startWorker("w1", cluster.WorkerOptions{})
	f.startWorker("w2", cluster.WorkerOptions{})
	c := f.coordinator(cluster.CoordinatorOptions{ItemGenomes: 3})
	seen := map[int]int{}
	got, err := c.Evaluate(withTimeout(t, time.Minute), f.pop, func(rs []evaluator.Result) error {
		for _, r := range rs {
			seen[r.Index]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, got, want)
	for i := range f.pop.Genomes {
		if seen[i] != 1 {
			t.Errorf("genome %d delivered %d times", i, seen[i])
		}
	}
}

// A coordinator with no worker says so within WorkerTimeout.
func TestNoWorker(t *testing.T) {
	f := newFixture(t, 4)
	c := f.coordinator(cluster.CoordinatorOptions{WorkerTimeout: 500 * time.Millisecond})
	_, err := c.Evaluate(withTimeout(t, 20*time.Second), f.pop, nil)
	var nw *cluster.NoWorkersError
	if !errors.As(err, &nw) {
		t.Fatalf("err = %v, want a *NoWorkersError", err)
	}
	if nw.Pending != 4 {
		t.Errorf("pending = %d, want 4", nw.Pending)
	}
}

// failing is a scorer that always fails.
type failing struct{}

func (failing) Evaluate(context.Context, *neat.Population, func([]evaluator.Result) error) ([]evaluator.Result, error) {
	return nil, errors.New("device lost")
}

// An item that fails on every worker: after MaxDeliver its genomes get
// error results naming the cause, and Evaluate returns.
func TestMaxDeliver(t *testing.T) {
	f := newFixture(t, 6)
	q := cluster.Queue{AckWait: 2 * time.Second, MaxDeliver: 3}
	f.startWorker("bad1", cluster.WorkerOptions{Scorer: failing{}, Queue: q})
	f.startWorker("bad2", cluster.WorkerOptions{Scorer: failing{}, Queue: q})
	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 3})
	got, err := c.Evaluate(withTimeout(t, 30*time.Second), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "device lost") {
			t.Errorf("genome %d: err = %v, want the cause", r.GenomeID, r.Err)
		}
	}
}

// A worker with another data set refuses the items (they go to the worker
// that fits), and one alone makes them fail with its reason.
func TestIdentityRefused(t *testing.T) {
	f := newFixture(t, 6)
	q := cluster.Queue{AckWait: 2 * time.Second, MaxDeliver: 2}
	other := f.identity()
	other.Dataset = "mnist test 10000"
	f.startWorker("other", cluster.WorkerOptions{Identity: other, Scorer: failing{}, Queue: q})
	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 3})
	got, err := c.Evaluate(withTimeout(t, 30*time.Second), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "refused by worker other: data set") {
			t.Errorf("genome %d: err = %v, want the refusal", r.GenomeID, r.Err)
		}
	}
}

// A worker whose data set has the run's name and size but other pixels
// (another normalisation, say) refuses the items: the identity carries
// the data's digest.
func TestOtherImagesRefused(t *testing.T) {
	f := newFixture(t, 4)
	q := cluster.Queue{AckWait: 2 * time.Second, MaxDeliver: 2}
	other := *f.ds
	other.Images = make([]float32, len(f.ds.Images))
	for i, v := range f.ds.Images {
		other.Images[i] = (v - 0.1307) / 0.3081
	}
	l, err := cluster.OpenLocal(f.cfg, &other, &nop)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f.startWorker("renormalised", l.Options())
	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 2})
	got, err := c.Evaluate(withTimeout(t, 30*time.Second), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "of other images (digest") {
			t.Errorf("genome %d: err = %v, want the refusal", r.GenomeID, r.Err)
		}
	}
}
