//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"testing"
	"time"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// TestSmoke is the first run on a new card (scripts/gpu-smoke.sh, under
// 90 s): the backend opens, its modules' loads (cubin or PTX, and how
// long) and each kernel's registers, shared and local memory are logged;
// one evaluation is checked against the CPU backend; an impossible
// cuMemAlloc comes back as the typed out-of-memory, through the driver and
// through the device's allocator, and the backend computes as before after
// it.
func TestSmoke(t *testing.T) {
	t0 := time.Now()
	b := newT(t, evaluator.BackendOptions{}).(*Backend)
	logInfo(t, b.Info(), time.Since(t0))
	checkCubin(t, b.Info())

	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(5, 3, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images(256), 1, 28, 28, 10, 5)
	o := evaluator.Options{EvalBatchSize: ds.N, Parallel: 2, CacheData: true}
	want := evaltest.Evaluate(t, newCPU(t, vram.Float32), ds, pop, staging.DefaultConfig(), o)
	evaltest.Same(t, want, evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(), o))

	huge := b.Info().Total + 1<<40
	var err error
	_ = b.w.do(func() error {
		var p devptr
		if p, err = b.drv.memAlloc(huge); err == nil {
			err = errors.Join(errors.New("it succeeded"), b.drv.memFree(p))
		}
		return nil
	})
	if !errors.Is(err, vram.ErrOutOfMemory) {
		t.Fatalf("cuMemAlloc(%s): %v, want an error matching vram.ErrOutOfMemory", vram.FormatBytes(huge), err)
	}
	t.Logf("cuMemAlloc(%s): %v", vram.FormatBytes(huge), err)
	_, err = b.Device().Alloc(huge)
	var oom *vram.OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("Device().Alloc(%s): %v, want a *vram.OOMError", vram.FormatBytes(huge), err)
	}
	evaltest.Same(t, want, evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(), o))
	t.Logf("device time of the forwards: %v", b.DeviceTime())
}

// logInfo logs what the backend says of its device and kernels; a kernel
// whose registers are not what ptxas gave it in the committed sm_90 cubin
// is logged too (the driver compiled the PTX, or another ptxas made the
// cubin).
func logInfo(t *testing.T, i Info, open time.Duration) {
	t.Helper()
	t.Logf("%s (cc %d, %d multiprocessors, %s): %d streams, opened in %v", i.Name, i.CC, i.SMs, i.Driver, i.Streams, open.Round(time.Millisecond))
	for _, m := range i.Modules {
		t.Logf("module %-5s %-16s %8.1f ms %s", m.Name, m.Image, float64(m.Took.Microseconds())/1000, m.Fallback)
	}
	for _, k := range i.Kernels {
		t.Logf("kernel %-22s %3d registers %6d B shared %4d B local %2d blocks/SM", k.Name, k.Registers, k.Shared, k.Local, k.BlocksPerSM)
	}
}

// checkCubin: on an sm_90 card the committed cubins must be what loaded,
// and the driver must report for each kernel the registers, shared and
// local memory that resources.sm_90.txt (ptxas) says.
func checkCubin(t *testing.T, i Info) {
	t.Helper()
	if i.CC != 90 || forcePTX() {
		return
	}
	for _, m := range i.Modules {
		if m.Image != "sm_90 cubin" {
			t.Errorf("module %s: loaded %s on an sm_90 card (%s)", m.Name, m.Image, m.Fallback)
		}
	}
	res, err := kernels.Resources()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range i.Kernels {
		r := res[k.Name]
		// The driver's shared size leaves out the 1 KiB the system reserves.
		if k.Registers != r.Registers || k.Local != r.Local || k.Shared > r.Shared {
			t.Errorf("kernel %s: the driver says %d registers, %d B local, %d B shared; ptxas said %d, %d, %d",
				k.Name, k.Registers, k.Local, k.Shared, r.Registers, r.Local, r.Shared)
		}
	}
}
