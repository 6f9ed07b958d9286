package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// instant scores nothing: what is left of an item's time is the cluster's.
type instant struct{}

func (instant) Evaluate(_ context.Context, pop *neat.Population, _ func([]evaluator.Result) error) ([]evaluator.Result, error) {
	out := make([]evaluator.Result, len(pop.Genomes))
	for i, g := range pop.Genomes {
		out[i] = evaluator.Result{Index: i, GenomeID: g.ID, Fitness: 0.5, Accuracy: 0.5, Images: 1}
	}
	return out, nil
}

// BenchmarkItemOverhead is the cluster's cost per item, from the weights'
// store and the publish to the result's arrival after the ack: one genome
// per item, scored instantly by one worker.
func BenchmarkItemOverhead(b *testing.B) {
	f := newFixture(b, 64)
	w, _ := cluster.NewWorker(f.conn("w"), cluster.WorkerOptions{Name: "w", Identity: f.identity(), Scorer: instant{}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	c, _ := cluster.NewCoordinator(f.conn("c"), cluster.CoordinatorOptions{Identity: f.identity(), ItemGenomes: 1})
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Evaluate(ctx, f.pop, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*len(f.pop.Genomes))*1e3, "ms/item")
}

// BenchmarkObjectStore is the object store's weight throughput: a 16 MiB
// population put and got back in 1 MiB chunks (MB/s of put + get).
func BenchmarkObjectStore(b *testing.B) {
	br, err := cluster.StartBroker(cluster.BrokerOptions{Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Shutdown()
	nc, _ := br.Connect("b")
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "bench", Storage: jetstream.MemoryStorage})
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 16<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		meta := jetstream.ObjectMeta{Name: "w", Opts: &jetstream.ObjectMetaOptions{ChunkSize: 1 << 20}}
		if _, err := obs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		if _, err := obs.GetBytes(ctx, "w"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorkersVsLocal runs the default run (config.Default: the 64
// genomes of the small preset on the 10,000 MNIST test images) on the
// in-process cluster and through the local path (two threads) in each
// iteration, and reports cluster/local: the throughput ratio over the
// whole of run.Run, start and shutdown of the in-process cluster included
// (≥ 0.95 is the target), and cluster/local_summary, over the wall time
// the run_summary line reports. workers=2 is `--workers 2`, one thread
// each; workers=1 is one worker with both threads: the cluster's own cost,
// apart from how one-thread forwards compare with two-thread ones.
func BenchmarkWorkersVsLocal(b *testing.B) {
	for _, workers := range []int{2, 1} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { workersVsLocal(b, workers) })
	}
}

func workersVsLocal(b *testing.B, workers int) {
	dir := b.TempDir()
	var local, clustered, localRun, clusterRun time.Duration
	for b.Loop() {
		cfg := config.Default()
		cfg.Eval.Threads = 2
		cfg.Output.Results = filepath.Join(dir, "local.jsonl")
		start := time.Now()
		s, err := run.Run(context.Background(), run.Spec{Config: cfg, Logger: &nop})
		if err != nil {
			b.Fatal(err)
		}
		local += time.Since(start)
		localRun += s.Wall
		cfg.Cluster.Workers = workers
		if v := os.Getenv("NEATEVAL_BENCH_ITEM_GENOMES"); v != "" {
			cfg.Cluster.ItemGenomes, _ = strconv.Atoi(v)
		}
		cfg.Output.Results = filepath.Join(dir, "cluster.jsonl")
		start = time.Now()
		s, err = run.Run(context.Background(), run.Spec{Config: cfg, Logger: &nop, Remote: cluster.OpenRemote})
		if err != nil {
			b.Fatal(err)
		}
		clustered += time.Since(start)
		clusterRun += s.Wall
	}
	b.ReportMetric(local.Seconds()/clustered.Seconds(), "cluster/local")
	b.ReportMetric(localRun.Seconds()/clusterRun.Seconds(), "cluster/local_summary")
}
