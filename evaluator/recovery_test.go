package evaluator_test

import (
	"bytes"
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
	evaltest.Identical(t, big, got)
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
			evaltest.Identical(t, base, got)
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
