//go:build cudaemu && !cuda

package cuda

import (
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
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

// TestPopSharedLimit: genomes whose one 28×28 image needs more than a
// default block's 48 KiB of shared memory take the population path on a
// device that lets a block opt into 227 KiB, and not on one that allows
// only 48 KiB; the stats are the per-layer path's bit for bit. The
// emulated launch refuses dynamic shared memory beyond the kernel's limit:
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

	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := handPopulation(t, in, 10, [][]neat.Node{
		{handConv(1, 16, 3, 1, neat.PaddingDefault, 0), handPool(2, neat.OpMaxPool2D, 2, 2, 1), handConv(3, 8, 3, 1, neat.PaddingDefault, 2)},
		{handConv(1, 24, 3, 1, neat.PaddingDefault, 0), handConv(2, 8, 3, 2, 1, 1)},
	})
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		if p := sched.BuildPop(gr, 0, sched.PopSmemH200); p == nil || p.Frame*4 <= EmuSharedDefault || p.Shared() > EmuSharedOptin {
			t.Fatalf("genome %d: population program %+v, want a frame beyond 48 KiB", g.ID, p)
		}
	}
	ds := datasets.Synthetic(images(120), 1, 28, 28, 10, 41)
	o := evaluator.Options{EvalBatchSize: 10, Parallel: 4, CacheData: true}
	big, small := newEmuShared(t, EmuSharedOptin), newEmuShared(t, EmuSharedDefault)
	off := newT(t, evaluator.BackendOptions{Parallel: 4}).(*Backend)
	big.popWork, small.popWork, off.popWork = math.MaxInt64, math.MaxInt64, 0
	if big.Info().PopShared != EmuSharedOptin || small.Info().PopShared != EmuSharedDefault {
		t.Errorf("PopShared %d and %d", big.Info().PopShared, small.Info().PopShared)
	}
	got := evaltest.Evaluate(t, big, ds, pop, staging.DefaultConfig(), o)
	rest := evaltest.Evaluate(t, small, ds, pop, staging.DefaultConfig(), o)
	want := evaltest.Evaluate(t, off, ds, pop, staging.DefaultConfig(), o)
	if big.popForwards.Load() < int64(len(pop.Genomes)) || small.popForwards.Load() != 0 {
		t.Errorf("%d forwards on the population path with 227 KiB, %d with 48 KiB", big.popForwards.Load(), small.popForwards.Load())
	}
	for i := range want {
		for _, g := range []evaluator.Result{got[i], rest[i]} {
			w := want[i]
			if w.Err != nil || g.Err != nil || math.Float64bits(g.Accuracy) != math.Float64bits(w.Accuracy) || math.Float64bits(g.Loss) != math.Float64bits(w.Loss) {
				t.Errorf("genome %d: accuracy %v loss %v (%v), per-layer %v %v (%v)", w.GenomeID, g.Accuracy, g.Loss, g.Err, w.Accuracy, w.Loss, w.Err)
			}
		}
	}
}
