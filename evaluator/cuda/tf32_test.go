//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// The TF32 tolerance against the CPU backend's float32, per genome: the
// accuracy within tf32Acc (an image or two whose top logits are within
// TF32's rounding of each other may flip), the mean loss within tf32Loss
// relatively. Measured on the emulator (which rounds the operands exactly
// as cvt.rna.tf32 does): see TestTF32AgainstCPU's log and NOTES.md.
const (
	tf32Acc  = 0.02
	tf32Loss = 2e-3
)

// TestTF32AgainstCPU scores random populations with compute precision
// "tf32" (the products on the tensor cores' MMA, or its C++ twin) and
// compares with the CPU backend's float32, within the TF32 tolerance; it
// also checks that the TF32 path ran (some fitness differs from the
// float32 GPU run's).
func TestTF32AgainstCPU(t *testing.T) {
	var worstAcc, worstLoss float64
	differs := 0
	for _, tc := range []struct {
		dt   vram.DType
		in   neat.Input
		seed int64
		wide bool
	}{
		{vram.Float32, neat.Input{Channels: 1, Height: 28, Width: 28}, 31, false},
		{vram.Float32, neat.Input{Channels: 1, Height: 10, Width: 10}, 32, true},
		{vram.BFloat16, neat.Input{Channels: 2, Height: 8, Width: 8}, 33, true},
	} {
		t.Run(fmt.Sprintf("%v-%dx%dx%d-wide=%v", tc.dt, tc.in.Channels, tc.in.Height, tc.in.Width, tc.wide), func(t *testing.T) {
			cfg, n := neat.DefaultGenConfig(), 8
			if tc.wide {
				cfg, n = neat.WideGenConfig(), 3
			}
			pop := neat.Generate(tc.seed, n, tc.in, 10, cfg)
			ds := datasets.Synthetic(images(300), tc.in.Channels, tc.in.Height, tc.in.Width, 10, tc.seed)
			o := evaluator.Options{EvalBatchSize: 128, Parallel: 2, CacheData: true}
			want := evaltest.Evaluate(t, newCPU(t, tc.dt), ds, pop, staging.DefaultConfig(), o)
			fp32 := evaltest.Evaluate(t, newT(t, evaluator.BackendOptions{DType: tc.dt}), ds, pop, staging.DefaultConfig(), o)
			got := evaltest.Evaluate(t, newT(t, evaluator.BackendOptions{DType: tc.dt, ComputePrecision: "tf32"}), ds, pop, staging.DefaultConfig(), o)
			for i := range want {
				w, g := want[i], got[i]
				if (w.Err == nil) != (g.Err == nil) {
					t.Errorf("genome %d: error %v, CPU %v", w.GenomeID, g.Err, w.Err)
					continue
				}
				if w.Err != nil {
					continue
				}
				da := math.Abs(w.Accuracy - g.Accuracy)
				dl := math.Abs(w.Loss-g.Loss) / math.Max(math.Abs(w.Loss), 1e-3)
				worstAcc, worstLoss = max(worstAcc, da), max(worstLoss, dl)
				if da > tf32Acc || dl > tf32Loss {
					t.Errorf("genome %d: tf32 accuracy %v loss %v, CPU float32 %v and %v", w.GenomeID, g.Accuracy, g.Loss, w.Accuracy, w.Loss)
				}
				if g.Loss != fp32[i].Loss {
					differs++
				}
			}
		})
	}
	t.Logf("TF32 against the CPU's float32: max |Δaccuracy| %.4f, max relative Δloss %.2e (tolerance %v, %v); %d genomes' loss differs from the float32 GPU run's",
		worstAcc, worstLoss, tf32Acc, tf32Loss, differs)
	if differs == 0 {
		t.Error("no genome's fitness differs between fp32 and tf32: the TF32 kernels did not run")
	}
}

func TestParsePrecision(t *testing.T) {
	for s, ok := range map[string]bool{"": true, "fp32": true, "tf32": true, "bf16": false, "TF32": false} {
		if _, err := ParsePrecision(s); (err == nil) != ok {
			t.Errorf("ParsePrecision(%q): %v", s, err)
		}
	}
	if _, err := newBackend(evaluator.BackendOptions{ComputePrecision: "fp16"}, nil); err == nil {
		t.Error("a backend opened with compute precision fp16")
	}
}
