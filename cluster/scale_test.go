package cluster_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// fakeCost scores without a device: a fitness from the genome id, after a
// short sleep. Only the scale simulation uses it; NATS is real.
type fakeCost struct {
	stall   bool // block on the first item until released (a worker to kill)
	once    sync.Once
	taken   chan struct{}
	release chan struct{}
}

func (s *fakeCost) Evaluate(ctx context.Context, pop *neat.Population, _ func([]evaluator.Result) error) ([]evaluator.Result, error) {
	if s.stall {
		first := false
		s.once.Do(func() { first = true })
		if first {
			close(s.taken)
			<-s.release
			return nil, context.Canceled
		}
	}
	time.Sleep(time.Duration(len(pop.Genomes)) * 50 * time.Microsecond)
	out := make([]evaluator.Result, len(pop.Genomes))
	for i, g := range pop.Genomes {
		f := float64(g.ID%1000) / 1000
		out[i] = evaluator.Result{Index: i, GenomeID: g.ID, Fitness: f, Accuracy: f, Images: 1}
	}
	return out, nil
}

// tinyGenomes are genomes of ~60 parameters (one 1×1 convolution of 2–4
// channels, a global pool, the dense head): the simulation is about items,
// workers and redeliveries; the weights' throughput is BenchmarkWorkersVsLocal's.
func tinyGenomes() neat.GenConfig {
	gc := neat.DefaultGenConfig()
	gc.MinConv, gc.MaxConv, gc.MinChannels, gc.MaxChannels, gc.Kernels = 1, 1, 2, 4, []int{1}
	gc.PHidden, gc.PFlatten, gc.PSkip, gc.PDangling, gc.PDownsample = 0, 0, 0, 0, 0
	return gc
}

// The scale simulation: NEATEVAL_CLUSTER_SIM genomes (100000; 5000 by
// default, none with -short) over 64
// in-process workers, a quarter of them killed mid-item (connection closed,
// no ack): every genome scored exactly once. Scoring is stubbed (fakeCost);
// the broker, the queue and the redeliveries are real. It reports the wall
// time and the redeliveries.
func TestScaleSimulation(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("NEATEVAL_CLUSTER_SIM"))
	if n <= 0 {
		if testing.Short() {
			t.Skip("set NEATEVAL_CLUSTER_SIM=100000 to run the scale simulation")
		}
		n = 5000 // a few seconds; NEATEVAL_CLUSTER_SIM=100000 for the whole simulation
	}
	f := newFixture(t, 1)
	f.pop = neat.Generate(1, n, f.pop.Input, f.pop.NumClasses, tinyGenomes())
	q := cluster.Queue{AckWait: time.Second, MaxDeliver: 10, Memory: true}
	const workers = 64
	var victims []*fakeCost
	var conns []func()
	for k := range workers {
		sc := &fakeCost{stall: k%4 == 0, taken: make(chan struct{}), release: make(chan struct{})}
		name := "w" + strconv.Itoa(k)
		nc := f.conn(name)
		w, err := cluster.NewWorker(nc, cluster.WorkerOptions{Name: name, Identity: f.identity(), Scorer: sc, Queue: q})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go w.Run(ctx)
		if sc.stall {
			victims = append(victims, sc)
			conns = append(conns, func() { nc.Close(); cancel() })
		}
	}
	c := f.coordinator(cluster.CoordinatorOptions{Queue: q, ItemGenomes: 50})
	seen := make([]int, n)
	start := time.Now()
	var killed atomic.Int64
	for k, v := range victims { // killed once it holds an item, at a random moment
		go func() {
			<-v.taken
			time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
			conns[k]()
			killed.Add(1)
			close(v.release)
		}()
	}
	st, err := c.Score(withTimeout(t, 20*time.Minute), cluster.Job{Pop: f.pop, Digest: neat.ContentDigest(f.pop), Run: "sha256:sim" + strconv.Itoa(n)},
		func(rs []evaluator.Result) error {
			if os.Getenv("NEATEVAL_CLUSTER_SIM_TRACE") != "" {
				t.Logf("%.1fs: %d results", time.Since(start).Seconds(), len(rs))
			}
			for _, r := range rs {
				seen[r.Index]++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range seen {
		if k != 1 {
			t.Errorf("genome %d scored %d times", i, k)
		}
	}
	t.Logf("%d genomes, %d workers (%d killed mid-item, of %d to kill): %d items, %d redeliveries, %.1fs",
		n, workers, killed.Load(), len(victims), st.Items, st.Redeliveries, time.Since(start).Seconds())
}
