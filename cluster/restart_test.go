package cluster_test

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/evaluator"
)

// The broker restarted on its file store during a run: clients reconnect
// and the run completes with every genome's result.
func TestBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a broker on a loopback socket, restarted: -short skips it")
	}
	f := newFixture(t, 12)
	want, err := f.evaluator().Evaluate(context.Background(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	b, err := cluster.StartBroker(cluster.BrokerOptions{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(b.ClientURL())
	port, _ := strconv.Atoi(u.Port())
	var mu sync.Mutex
	restart := func() {
		mu.Lock()
		defer mu.Unlock()
		b.Shutdown()
		nb, err := cluster.StartBroker(cluster.BrokerOptions{StoreDir: store, Port: port})
		if err != nil {
			t.Error(err)
			return
		}
		b = nb
	}
	t.Cleanup(func() { mu.Lock(); b.Shutdown(); mu.Unlock() })
	cc := &config.ClusterConfig{}
	q := cluster.Queue{AckWait: 2 * time.Second, MaxDeliver: 10}
	wc, err := cluster.Connect(b.ClientURL(), "worker", cc)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w, _ := cluster.NewWorker(wc, cluster.WorkerOptions{Name: "w", Identity: f.identity(), Scorer: f.evaluator(), Queue: q})
	wctx, wstop := context.WithCancel(context.Background())
	defer wstop()
	go w.Run(wctx)
	nc, err := cluster.Connect(b.ClientURL(), "coordinator", cc)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, err := cluster.NewCoordinator(nc, cluster.CoordinatorOptions{Identity: f.identity(), Queue: q, ItemGenomes: 2})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	got, err := c.Evaluate(withTimeout(t, time.Minute), f.pop, func([]evaluator.Result) error {
		once.Do(func() { go restart() })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, got, want)
}
