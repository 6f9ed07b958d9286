package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// `neateval run --workers 2` writes the results file a local run writes
// (but the seconds), and its summary counts the cluster's work.
func TestRunWorkers(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(12)
	cfg.Output.Results = filepath.Join(dir, "local.jsonl")
	if _, err := run.Run(context.Background(), run.Spec{Config: cfg, Logger: &nop}); err != nil {
		t.Fatal(err)
	}
	cfg.Output.Results = filepath.Join(dir, "cluster.jsonl")
	cfg.Cluster.Workers, cfg.Cluster.ItemGenomes = 2, 2
	s, err := run.Run(withTimeout(t, time.Minute), run.Spec{Config: cfg, Logger: &nop, Remote: cluster.OpenRemote})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := withoutSeconds(t, filepath.Join(dir, "cluster.jsonl")), withoutSeconds(t, filepath.Join(dir, "local.jsonl")); got != want {
		t.Errorf("results differ:\n%s\nwant\n%s", got, want)
	}
	if s.Remote == nil || s.Remote.Items < 3 || s.Remote.Workers < 1 {
		t.Errorf("summary's cluster stats = %+v", s.Remote)
	}
}

// withoutSeconds is a results file without its wall times.
func withoutSeconds(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.Index(l, `,"seconds":`); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// stalling scores like the evaluator it wraps, but its first call blocks
// until released: a worker caught mid-item.
type stalling struct {
	evaluator.Scorer
	once    sync.Once
	taken   chan struct{}
	release chan struct{}
}

func (s *stalling) Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]evaluator.Result) error) ([]evaluator.Result, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.taken)
		<-s.release
		return nil, context.Canceled
	}
	return s.Scorer.Evaluate(ctx, pop, onChunk)
}

// A worker whose connection drops mid-item (as a killed process's does):
// the item goes to another worker after AckWait; no genome is lost or
// counted twice, and the results equal a local evaluation's.
func TestWorkerKilledMidItem(t *testing.T) {
	f := newFixture(t, 12)
	want, err := f.evaluator().Evaluate(context.Background(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := cluster.Queue{AckWait: time.Second, MaxDeliver: 5}
	st := &stalling{Scorer: f.evaluator(), taken: make(chan struct{}), release: make(chan struct{})}
	victim, err := cluster.NewWorker(f.conn("victim"), cluster.WorkerOptions{Name: "victim", Identity: f.identity(), Scorer: st, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	vctx, vstop := context.WithCancel(context.Background())
	vdone := make(chan struct{})
	go func() { defer close(vdone); victim.Run(vctx) }()

	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 3})
	seen := map[int]int{}
	var got []evaluator.Result
	errc := make(chan error, 1)
	go func() {
		var err error
		got, err = c.Evaluate(withTimeout(t, time.Minute), f.pop, func(rs []evaluator.Result) error {
			for _, r := range rs {
				seen[r.Index]++
			}
			return nil
		})
		errc <- err
	}()
	<-st.taken
	victim.Conn().Close() // the kill: no ack, no nak, the connection gone
	vstop()
	close(st.release)
	<-vdone
	f.startWorker("survivor", cluster.WorkerOptions{Queue: q})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	sameResults(t, got, want)
	for i := range f.pop.Genomes {
		if seen[i] != 1 {
			t.Errorf("genome %d delivered %d times", i, seen[i])
		}
	}
}
