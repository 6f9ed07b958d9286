package cluster_test

import (
	"runtime"
	"testing"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
)

// Local workers each take their own GPU (eval.device + k) and their share
// of the CPU threads; the run's config is left as it was.
func TestLocalWorkerConfig(t *testing.T) {
	tests := []struct {
		name                   string
		workers, device, total int
		wantThreads            int
	}{
		{"three workers from device 1", 3, 1, 7, 2},
		{"more workers than threads", 4, 0, 2, 1},
		{"all cores", 2, 0, 0, max(1, runtime.NumCPU()/2)},
	}
	for _, tt := range tests {
		cfg := config.Default()
		cfg.Eval.Backend, cfg.Eval.Device, cfg.Eval.Threads = "cuda", tt.device, tt.total
		cfg.Cluster.Workers = tt.workers
		for k := range tt.workers {
			wc := cluster.LocalWorkerConfig(cfg, k)
			o, err := wc.BackendOptions(nil)
			if err != nil {
				t.Fatal(err)
			}
			if o.DeviceIndex != tt.device+k || wc.Eval.Threads != tt.wantThreads {
				t.Errorf("%s: worker %d: device %d, threads %d; want device %d, threads %d",
					tt.name, k, o.DeviceIndex, wc.Eval.Threads, tt.device+k, tt.wantThreads)
			}
		}
		if cfg.Eval.Device != tt.device || cfg.Eval.Threads != tt.total {
			t.Errorf("%s: the run's config changed: device %d, threads %d", tt.name, cfg.Eval.Device, cfg.Eval.Threads)
		}
	}
}

// On the CPU the device index is ignored: a local worker past device 0
// opens and scores as worker 0 does.
func TestLocalWorkerCPUIgnoresDevice(t *testing.T) {
	f := newFixture(t, 4)
	f.cfg.Cluster.Workers, f.cfg.Eval.Device = 2, 3
	l, err := cluster.OpenLocal(cluster.LocalWorkerConfig(f.cfg, 1), f.ds, &nop)
	if err != nil {
		t.Fatalf("a CPU worker on device index 4: %v", err)
	}
	defer l.Close()
	got, err := l.Evaluate(t.Context(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cfg.Eval.Device = 0
	want, err := f.evaluator().Evaluate(t.Context(), f.pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, got, want)
}
