package cpu_test

import (
	"context"
	"math"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

func newCPU(t testing.TB, o evaluator.BackendOptions) evaluator.Backend {
	t.Helper()
	b, err := cpu.New(o)
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
