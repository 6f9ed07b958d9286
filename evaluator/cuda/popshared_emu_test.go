//go:build cudaemu && !cuda

package cuda

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/staging"
)

// newEmuShared is a backend over an emulated device that lets a block opt
// into optin bytes of shared memory.
func newEmuShared(t *testing.T, optin int) *Backend {
	t.Helper()
	b, err := newBackend(evaluator.BackendOptions{MemoryBytes: testMemory, Parallel: 4}, func() (driver, Info, error) {
		d, info, err := openEmu(testMemory)
		if d != nil {
			d.sharedOptin = optin
		}
		return d, info, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// TestPopSharedLimit: largeFrames' genomes keep the per-layer path on a
// device that lets a block have only 48 KiB (TestPopLargeFrames: they take
// the population path with 227 KiB). The emulated launch refuses dynamic shared memory beyond the kernel's limit:
// 48 KiB before maxDynamicShared raises it, the device's after.
func TestPopSharedLimit(t *testing.T) {
	d, _, err := openEmu(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	k := sched.PopForwardKernels()[0]
	var args [2]uint64
	if err := d.launch(k, [2]uint32{1, 1}, unsafe.Pointer(&args[0]), 2, EmuSharedDefault+4, 0); err == nil || !strings.Contains(err.Error(), "dynamic shared memory") {
		t.Errorf("a launch with %d bytes of shared memory before raising the limit: %v", EmuSharedDefault+4, err)
	}
	if n, err := d.maxDynamicShared(k); err != nil || n != EmuSharedOptin {
		t.Errorf("maxDynamicShared: %d, %v", n, err)
	}
	if err := d.launch(k, [2]uint32{1, 1}, unsafe.Pointer(&args[0]), 2, EmuSharedOptin+4, 0); err == nil {
		t.Errorf("a launch with %d bytes of shared memory beyond the opt-in: no error", EmuSharedOptin+4)
	}

	pop, ds, _ := largeFrames(t)
	o := evaluator.Options{EvalBatchSize: 10, Parallel: 4, CacheData: true}
	small, off := newEmuShared(t, EmuSharedDefault), newT(t, evaluator.BackendOptions{Parallel: 4}).(*Backend)
	small.popWork, off.popWork = math.MaxInt64, 0
	if small.Info().PopShared != EmuSharedDefault || off.Info().PopShared != EmuSharedOptin {
		t.Errorf("PopShared %d and %d", small.Info().PopShared, off.Info().PopShared)
	}
	got := evaltest.Evaluate(t, small, ds, pop, staging.DefaultConfig(), o)
	want := evaltest.Evaluate(t, off, ds, pop, staging.DefaultConfig(), o)
	if small.popForwards.Load() != 0 {
		t.Errorf("%d forwards on the population path with 48 KiB", small.popForwards.Load())
	}
	sameStats(t, want, got)
}
