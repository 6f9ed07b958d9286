package evaluator_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

func newCPU(t testing.TB, o evaluator.BackendOptions) evaluator.Backend {
	t.Helper()
	b, err := evaluator.NewCPU(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestCPUConformance(t *testing.T) { evaltest.Run(t, newCPU) }

// TestMemoryModel checks the footprint the planner and the controller rely
// on against what the arena's allocator really measured: the predicted peak
// is within 10% of the measured one and never below it.
func TestMemoryModel(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(11, 16, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(300, 1, 28, 28, 10, 1)
	for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
		for _, cached := range []bool{true, false} {
			b := newCPU(t, evaluator.BackendOptions{DType: dt, MemoryBytes: 1 << 30, Threads: 1})
			dev := b.Device()
			data, err := b.PrepareData(ds, cached)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for _, g := range pop.Genomes {
				gr, err := neat.Compile(g, in, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, batch := range []int{1, 17, 64, 300} {
					base := dev.Stats().Allocated
					dev.ResetPeak()
					m, err := b.Load(gr)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := b.Forward(context.Background(), m, data, 0, batch); err != nil {
						t.Fatal(err)
					}
					measured := dev.Stats().PeakAllocated - base
					m.Unload()
					fp := b.Footprint(gr, batch, cached)
					pred := fp.Model + fp.Act
					if pred < measured {
						t.Errorf("%v cached=%v genome %d batch %d: predicted %d < measured %d", dt, cached, g.ID, batch, pred, measured)
					}
					if rel := float64(pred-measured) / float64(measured); rel > worst {
						worst = rel
					}
				}
			}
			data.Release()
			if worst > 0.10 {
				t.Errorf("%v cached=%v: worst over-prediction %.1f%%, want ≤ 10%%", dt, cached, worst*100)
			}
			t.Logf("%v cached=%v: worst over-prediction %.2f%%", dt, cached, worst*100)
		}
	}
}

// TestBFloat16CloseToFloat32 reports how far bfloat16 storage moves fitness.
func TestBFloat16CloseToFloat32(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 14, Width: 14}
	pop := neat.Generate(5, 12, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(200, 1, 14, 14, 10, 3)
	o := evaluator.Options{EvalBatchSize: 64, CacheData: true}
	f32 := evaltest.Evaluate(t, newCPU(t, evaluator.BackendOptions{MemoryBytes: 256 << 20}), ds, pop, staging.DefaultConfig(), o)
	bf := evaltest.Evaluate(t, newCPU(t, evaluator.BackendOptions{DType: vram.BFloat16, MemoryBytes: 256 << 20}), ds, pop, staging.DefaultConfig(), o)
	var maxAcc, maxLoss float64
	for i := range f32 {
		if f32[i].Err != nil || bf[i].Err != nil {
			t.Fatalf("genome %d: %v / %v", f32[i].GenomeID, f32[i].Err, bf[i].Err)
		}
		maxAcc = math.Max(maxAcc, math.Abs(f32[i].Accuracy-bf[i].Accuracy))
		maxLoss = math.Max(maxLoss, math.Abs(f32[i].Loss-bf[i].Loss)/f32[i].Loss)
	}
	t.Logf("bfloat16 vs float32 over %d genomes × %d images: max |Δaccuracy| %.4f, max relative Δloss %.4f", len(f32), ds.N, maxAcc, maxLoss)
	if maxAcc > 0.05 || maxLoss > 0.02 {
		t.Errorf("bfloat16 too far from float32: Δaccuracy %.4f, Δloss %.4f", maxAcc, maxLoss)
	}
}

// TestOOMRecovery runs a batch size that cannot fit a small arena: the run
// completes with the results of a device that fits, and the log shows the
// halvings.
func TestOOMRecovery(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(3, 6, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(2000, 1, 28, 28, 10, 2)
	big := evaltest.Evaluate(t, newCPU(t, evaluator.BackendOptions{MemoryBytes: 2 << 30}), ds, pop, staging.DefaultConfig(),
		evaluator.Options{EvalBatchSize: 45000, CacheData: true})
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	small := newCPU(t, evaluator.BackendOptions{MemoryBytes: 24 << 20})
	got := evaltest.Evaluate(t, small, ds, pop, staging.DefaultConfig(),
		evaluator.Options{EvalBatchSize: 45000, CacheData: true, Logger: &log})
	evaltest.Same(t, big, got)
	shrinks := strings.Count(logs.String(), `"event":"batch_shrink"`)
	if shrinks == 0 {
		t.Errorf("no batch_shrink in the log of a run that cannot fit: %s", logs.String())
	}
	if st := small.Device().Stats(); st.OOMs == 0 {
		t.Errorf("the arena never ran out (stats %+v)", st)
	}
	t.Logf("%d halvings, %d OOMs", shrinks, small.Device().Stats().OOMs)
}

// TestFaultInjection injects out-of-memory failures into the arena's
// allocator at rates up to 30%: every genome still gets the fitness of a run
// without them, none is lost, and every injected failure shows in the log
// as one halving, one retry at the smallest batch, or one load retried.
func TestFaultInjection(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(21, 12, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(400, 1, 12, 12, 10, 4)
	st := staging.DefaultConfig()
	st.Adaptive, st.ChunkBytes = false, 32<<10 // several chunks: loads fail too
	o := evaluator.Options{EvalBatchSize: 64, Parallel: 2, Threads: 2, CacheData: true}
	base := evaltest.Evaluate(t, newCPU(t, evaluator.BackendOptions{MemoryBytes: 64 << 20}), ds, pop, st, o)
	for _, rate := range []float64{0.1, 0.2, 0.3} {
		for _, seed := range []uint64{1, 2} {
			var logs bytes.Buffer
			log := zerolog.New(&logs)
			o.Logger = &log
			b := newCPU(t, evaluator.BackendOptions{MemoryBytes: 64 << 20, Faults: vram.FaultOptions{Rate: rate, Seed: seed}})
			got := evaltest.Evaluate(t, b, ds, pop, st, o)
			for _, r := range got {
				if r.Err != nil {
					t.Errorf("rate %.1f seed %d: genome %d lost: %v", rate, seed, r.GenomeID, r.Err)
				}
			}
			evaltest.Same(t, base, got)
			shrinks := strings.Count(logs.String(), `"event":"batch_shrink"`)
			oomShrinks := strings.Count(logs.String(), `"reason":"oom"`) - strings.Count(logs.String(), `"event":"batch_retry"`)
			retries := strings.Count(logs.String(), `"event":"batch_retry"`)
			loads := strings.Count(logs.String(), `"event":"load_oom"`)
			injected := b.Device().Stats().InjectedOOMs
			if int64(oomShrinks+retries+loads) != injected {
				t.Errorf("rate %.1f seed %d: %d injected failures, log shows %d halvings + %d retries + %d load retries",
					rate, seed, injected, oomShrinks, retries, loads)
			}
			t.Logf("rate %.1f seed %d: %d injected OOMs → %d halvings (%d for OOM), %d retries at batch 1, %d load retries; all %d genomes scored",
				rate, seed, injected, shrinks, oomShrinks, retries, loads, len(got))
		}
	}
}
