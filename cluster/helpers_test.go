package cluster_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// testConfig is a small run: a synthetic set and a generated population.
func testConfig(genomes int) *config.Config {
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 300
	cfg.Population.GenerateSize = genomes
	cfg.Eval.Threads = 1
	return cfg
}

// fixture is an in-process broker (no socket) and what a test scores.
type fixture struct {
	t   testing.TB
	b   *cluster.Broker
	cfg *config.Config
	ds  *datasets.Dataset
	pop *neat.Population
}

var nop = zerolog.Nop()

func newFixture(t testing.TB, genomes int) *fixture {
	t.Helper()
	b, err := cluster.StartBroker(cluster.BrokerOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	cfg := testConfig(genomes)
	ds, err := run.OpenDataset(cfg, &nop)
	if err != nil {
		t.Fatal(err)
	}
	pop, err := cfg.Population.Generate(neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}, ds.NumClasses)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, b: b, cfg: cfg, ds: ds, pop: pop}
}

func (f *fixture) conn(name string) *nats.Conn {
	f.t.Helper()
	nc, err := f.b.Connect(name)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(nc.Close)
	return nc
}

func (f *fixture) identity() cluster.Identity { return cluster.IdentityOf(f.cfg, f.ds) }

// evaluator is a real CPU evaluator on the fixture's data set.
func (f *fixture) evaluator() *evaluator.Evaluator { return f.local().Evaluator }

// local is a worker's real CPU scoring on the fixture's data set.
func (f *fixture) local() *cluster.Local {
	f.t.Helper()
	l, err := cluster.OpenLocal(f.cfg, f.ds, &nop)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(l.Close)
	return l
}

// startWorker runs a worker until the test ends (or stop is called).
func (f *fixture) startWorker(name string, o cluster.WorkerOptions) (stop func()) {
	f.t.Helper()
	o.Name = name
	if o.Identity == (cluster.Identity{}) {
		o.Identity = f.identity()
	}
	if o.Scorer == nil {
		l := f.local()
		o.Scorer, o.Sampler = l.Evaluator, l.Sample
	}
	w, err := cluster.NewWorker(f.conn(name), o)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	f.t.Cleanup(stop)
	return stop
}

func (f *fixture) coordinator(o cluster.CoordinatorOptions) *cluster.Coordinator {
	f.t.Helper()
	if o.Identity == (cluster.Identity{}) {
		o.Identity = f.identity()
	}
	c, err := cluster.NewCoordinator(f.conn("coordinator"), o)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// sameResults compares two evaluations field by field, but seconds and
// batch.
func sameResults(t *testing.T, got, want []evaluator.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	eq := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	for i := range want {
		g, w := got[i], want[i]
		if g.Index != w.Index || g.GenomeID != w.GenomeID || !eq(g.Fitness, w.Fitness) || !eq(g.Accuracy, w.Accuracy) ||
			!eq(g.Loss, w.Loss) || g.Images != w.Images || g.Params != w.Params || g.FLOPs != w.FLOPs ||
			(g.Err == nil) != (w.Err == nil) || (g.Err != nil && g.Err.Error() != w.Err.Error()) {
			t.Errorf("result %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
