//go:build cuda || cudaemu

package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

func newT(t testing.TB, o evaluator.BackendOptions) evaluator.Backend {
	t.Helper()
	if o.MemoryBytes == 0 {
		o.MemoryBytes = testMemory
	}
	b := openTest(t, o)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// images is n, or a sixth of it (at least 40) under the emulator.
func images(n int) int {
	if emulated {
		return max(n/6, 40)
	}
	return n
}

func newCPU(t testing.TB, dt vram.DType) evaluator.Backend {
	t.Helper()
	b, err := cpu.New(evaluator.BackendOptions{DType: dt, MemoryBytes: 1 << 30, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformance is the backend conformance suite: hand-checked genomes,
// every op, activation, merge, stride and padding, random populations
// against a float64 reference, invariance to batch, parallelism, caching
// and staging, and non-finite logits.
func TestConformance(t *testing.T) { evaltest.Run(t, newT) }

// TestAgainstCPU scores random populations on both backends: float32 to
// the conformance tolerance; bfloat16 storage rounds at different points
// (the device sums in another order), so within the bound that bfloat16
// itself moves fitness.
func TestAgainstCPU(t *testing.T) {
	for _, tc := range []struct {
		dt   vram.DType
		in   neat.Input
		seed int64
		wide bool // 16 to 128 channels: the 64-row tiles, several row tiles
	}{
		{vram.Float32, neat.Input{Channels: 1, Height: 28, Width: 28}, 11, false},
		{vram.Float32, neat.Input{Channels: 3, Height: 16, Width: 16}, 12, false},
		{vram.Float32, neat.Input{Channels: 1, Height: 10, Width: 10}, 14, true},
		{vram.BFloat16, neat.Input{Channels: 1, Height: 28, Width: 28}, 13, false},
		{vram.BFloat16, neat.Input{Channels: 2, Height: 10, Width: 10}, 15, true},
	} {
		t.Run(fmt.Sprintf("%v-%dx%dx%d-wide=%v", tc.dt, tc.in.Channels, tc.in.Height, tc.in.Width, tc.wide), func(t *testing.T) {
			cfg, n := neat.DefaultGenConfig(), 12
			if tc.wide {
				cfg, n = neat.WideGenConfig(), 6
			}
			pop := neat.Generate(tc.seed, n, tc.in, 10, cfg)
			ds := datasets.Synthetic(images(300), tc.in.Channels, tc.in.Height, tc.in.Width, 10, tc.seed)
			o := evaluator.Options{EvalBatchSize: 128, Parallel: 3, CacheData: true}
			want := evaltest.Evaluate(t, newCPU(t, tc.dt), ds, pop, staging.DefaultConfig(), o)
			got := evaltest.Evaluate(t, newT(t, evaluator.BackendOptions{DType: tc.dt}), ds, pop, staging.DefaultConfig(), o)
			if tc.dt == vram.Float32 {
				evaltest.Same(t, want, got)
				return
			}
			for i := range want {
				w, g := want[i], got[i]
				if (w.Err == nil) != (g.Err == nil) {
					t.Errorf("genome %d: error %v, CPU %v", w.GenomeID, g.Err, w.Err)
					continue
				}
				if w.Err != nil {
					continue
				}
				if math.Abs(w.Accuracy-g.Accuracy) > 0.02 || math.Abs(w.Loss-g.Loss) > 0.01*math.Max(w.Loss, 1) {
					t.Errorf("genome %d: bfloat16 accuracy %v loss %v, CPU %v and %v", w.GenomeID, g.Accuracy, g.Loss, w.Accuracy, w.Loss)
				}
			}
		})
	}
}

// TestStagedVsResident runs a population in chunks of a small budget, the
// next chunk's weights copied while the current one computes, with the
// data set streamed from the host, and compares with a resident run with
// the data cached.
func TestStagedVsResident(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 20, Width: 20}
	pop := neat.Generate(21, 16, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images(200), 1, 20, 20, 10, 21)
	b := newT(t, evaluator.BackendOptions{})
	resident := evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(),
		evaluator.Options{EvalBatchSize: ds.N, Parallel: 2, CacheData: true})
	st := staging.DefaultConfig()
	st.Adaptive = false
	st.ChunkBytes = 32 << 10
	st.Prefetch = true
	e, err := evaluator.New(b, ds, st, evaluator.Options{EvalBatchSize: 64, Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	staged, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Manager().Plan().Chunks); n < 3 {
		t.Errorf("%d chunks; the budget should have made several", n)
	}
	evaltest.Same(t, resident, staged)
}

// TestMemoryModel checks that Footprint is what Load and Forward allocate:
// the peak the allocator measured equals the prediction.
func TestMemoryModel(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(31, 8, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images(120), 1, 28, 28, 10, 31)
	for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
		for _, cached := range []bool{true, false} {
			b := newT(t, evaluator.BackendOptions{DType: dt})
			dev := b.Device()
			d, err := b.PrepareData(ds, cached)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range pop.Genomes {
				gr, err := neat.Compile(g, in, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range []int{1, 37, ds.N} {
					base := dev.Stats().Allocated
					dev.ResetPeak()
					m, err := b.Load(gr)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := b.Forward(context.Background(), m, d, 0, n); err != nil {
						t.Fatal(err)
					}
					m.Unload()
					measured := dev.Stats().PeakAllocated - base
					fp := b.Footprint(gr, n, cached)
					if fp.Model+fp.Act != measured {
						t.Errorf("%v cached=%v genome %d batch %d: predicted %d+%d, measured %d", dt, cached, g.ID, n, fp.Model, fp.Act, measured)
					}
					if got := dev.Stats().Allocated; got != base {
						t.Errorf("genome %d batch %d: %d bytes still allocated after the forward and Unload", g.ID, n, got-base)
					}
				}
			}
			d.Release()
		}
	}
}

// fill takes the device's memory with plain allocations of the driver (as
// another process would) until cuMemAlloc fails, then frees allocations
// until at least leave bytes are free. It returns the function that frees
// the rest.
func fill(t *testing.T, b *Backend, leave int64) func() {
	t.Helper()
	b.dev.EmptyCache()
	type chunk struct {
		p    devptr
		size int64
	}
	var held []chunk
	err := b.w.do(func() error {
		for size := int64(1 << 30); size >= 1<<20; {
			p, err := b.drv.memAlloc(size)
			if err != nil {
				if !errors.Is(err, vram.ErrOutOfMemory) {
					return err
				}
				size /= 2
				continue
			}
			held = append(held, chunk{p, size})
		}
		// Give back the smallest first until leave bytes are free.
		for len(held) > 0 {
			free, _, err := b.drv.memInfo()
			if err != nil {
				return err
			}
			if free >= leave {
				break
			}
			c := held[len(held)-1]
			held = held[:len(held)-1]
			if err := b.drv.memFree(c.p); err != nil {
				return err
			}
		}
		// The last chunk freed may have been large: take the excess back in
		// smaller ones.
		for {
			free, _, err := b.drv.memInfo()
			if err != nil {
				return err
			}
			if free-leave < 1<<20 {
				break
			}
			size := int64(1) << (bits.Len64(uint64(free-leave)) - 1)
			p, err := b.drv.memAlloc(size)
			if errors.Is(err, vram.ErrOutOfMemory) {
				break
			}
			if err != nil {
				return err
			}
			held = append(held, chunk{p, size})
		}
		b.dev.src.refresh()
		return nil
	})
	if err != nil {
		t.Fatalf("filling the device: %v", err)
	}
	return func() {
		_ = b.w.do(func() error {
			for _, c := range held {
				_ = b.drv.memFree(c.p)
			}
			b.dev.src.refresh()
			return nil
		})
	}
}

// TestRealOOM fills the device until cuMemAlloc fails, leaving a quarter of
// what the largest genome needs at the starting batch, and evaluates: the
// arenas that do not fit fail in the driver, the controller halves the
// batch, and the results are the CPU backend's. On a GPU, run it with
// CUDA_MODULE_LOADING=EAGER (scripts/gpu-check.sh does): a kernel loaded at
// its first launch would need memory the filled device does not have (the
// launch then fails as an out-of-memory, and the controller shrinks all the
// same, but the test is about the allocations).
func TestRealOOM(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(41, 6, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(images(2000), 1, 28, 28, 10, 41)
	realOOM(t, pop, ds, 1, 2)
}

// realOOM evaluates pop on a device filled to leave its weights and, for
// each of parallel forwards at once, a quarter of what its largest genome
// needs at a batch of the whole data set, and compares with the CPU
// backend on threads threads.
func realOOM(t *testing.T, pop *neat.Population, ds *datasets.Dataset, parallel, threads int) {
	o := evaluator.Options{EvalBatchSize: ds.N, Parallel: parallel, CacheData: true}
	cpu, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 8 << 30, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	want := evaltest.Evaluate(t, cpu, ds, pop, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: ds.N, Parallel: 1, CacheData: true, Threads: threads})

	b := newT(t, evaluator.BackendOptions{Parallel: parallel}).(*Backend)
	var need, weights int64
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			continue // an invalid genome fails on both backends alike
		}
		fp := b.Footprint(gr, ds.N, true)
		need = max(need, fp.Model+fp.Act)
		weights += fp.Model
	}
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	o.Logger = &log
	e, err := evaluator.New(b, ds, staging.DefaultConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Room for every genome's weights (the population was planned
	// resident before the device filled) and a quarter of the largest
	// genome's need for each forward in flight.
	release := fill(t, b, weights+int64(parallel)*need/4)
	defer release()
	_, free := b.Device().MemInfo()
	t.Logf("largest genome needs %s at batch %d, the weights %s; %s left free", vram.FormatBytes(need), ds.N, vram.FormatBytes(weights), vram.FormatBytes(free))
	got, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	evaltest.Same(t, want, got)
	st := b.Device().Stats()
	if st.OOMs == 0 || st.InjectedOOMs != 0 {
		t.Errorf("stats %+v: want real out-of-memory errors and no injected ones", st)
	}
	if n := strings.Count(logs.String(), `"event":"batch_shrink"`); n == 0 {
		t.Errorf("no batch_shrink logged: %s", logs.String())
	}
	t.Logf("%d OOMs, final batches %v", st.OOMs, batches(got))
}

func batches(rs []evaluator.Result) []int {
	var b []int
	for _, r := range rs {
		b = append(b, r.Batch)
	}
	return b
}

// TestFarStrideAndPadding scores convolutions whose stride and padding lie
// far beyond the image (legal: the output is 1×1, mostly padding), which
// the kernels index in 64 bits, against the float64 reference.
func TestFarStrideAndPadding(t *testing.T) {
	in := neat.Input{Channels: 2, Height: 8, Width: 8}
	rng := uint32(1)
	rnd := func(n int, scale float32) *neat.Tensor {
		d := make([]float32, n)
		for i := range d {
			rng = rng*1664525 + 1013904223
			d[i] = (float32(rng>>8)/float32(1<<24)*2 - 1) * scale
		}
		return &neat.Tensor{Data: d}
	}
	var gs []*neat.Genome
	for i, c := range []struct{ k, stride, pad int }{
		{3, 1 << 20, 1500}, {3, 5000, 0}, {1, 1 << 30, 1 << 29}, {5, 3, 9},
	} {
		conv := neat.Node{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: 3, Kernel: c.k, Stride: c.stride, Padding: c.pad, Activation: neat.ActTanh}
		gap := neat.Node{ID: 2, Op: neat.OpGlobalAvgPool, Inputs: []int{1}, Padding: neat.PaddingDefault}
		g := &neat.Genome{ID: int64(i), Output: 3, Nodes: []neat.Node{conv, gap,
			{ID: 3, Op: neat.OpDense, Inputs: []int{2}, OutFeatures: 10, Padding: neat.PaddingDefault}}}
		w := rnd(3*2*c.k*c.k, 0.5)
		w.Shape = []int{3, 2, c.k, c.k}
		b := rnd(3, 0.5)
		b.Shape = []int{3}
		dw := rnd(10*3, 0.5)
		dw.Shape = []int{10, 3}
		db := rnd(10, 0.5)
		db.Shape = []int{10}
		g.Params = map[int]*neat.Params{1: {Weight: w, Bias: b}, 3: {Weight: dw, Bias: db}}
		gs = append(gs, g)
	}
	pop := &neat.Population{Input: in, NumClasses: 10, Genomes: gs}
	ds := datasets.Synthetic(40, 2, 8, 8, 10, 5)
	rs := evaltest.Evaluate(t, newT(t, evaluator.BackendOptions{}), ds, pop, staging.DefaultConfig(),
		evaluator.Options{EvalBatchSize: 16, Parallel: 2, CacheData: true})
	for i, r := range rs {
		if r.Err != nil {
			t.Errorf("genome %d: %v", i, r.Err)
		}
	}
	evaltest.CheckAgainstReference(t, pop, ds, rs)
}

// TestPopulationPath scores random populations with the population
// kernels (pop.cu) and with the per-layer kernels only: the stats are the
// same bit for bit (the kernels repeat the per-layer arithmetic), and
// float32 agrees with the CPU backend to the conformance tolerance. The
// population path must have scored most genomes, in launches of several.
func TestPopulationPath(t *testing.T) {
	for _, tc := range []struct {
		dt   vram.DType
		in   neat.Input
		seed int64
	}{
		{vram.Float32, neat.Input{Channels: 1, Height: 12, Width: 12}, 51},
		{vram.BFloat16, neat.Input{Channels: 2, Height: 9, Width: 9}, 52},
	} {
		t.Run(fmt.Sprintf("%v-%dx%dx%d", tc.dt, tc.in.Channels, tc.in.Height, tc.in.Width), func(t *testing.T) {
			pop := neat.Generate(tc.seed, 16, tc.in, 10, neat.DefaultGenConfig())
			ds := datasets.Synthetic(images(150), tc.in.Channels, tc.in.Height, tc.in.Width, 10, tc.seed)
			// Slices of 16, 16 and 8 images: tiles cut short.
			o := evaluator.Options{EvalBatchSize: 16, Parallel: 6, CacheData: true}
			on := newT(t, evaluator.BackendOptions{DType: tc.dt, Parallel: 6}).(*Backend)
			off := newT(t, evaluator.BackendOptions{DType: tc.dt, Parallel: 6}).(*Backend)
			on.popWork, off.popWork = math.MaxInt64, 0
			got := evaltest.Evaluate(t, on, ds, pop, staging.DefaultConfig(), o)
			want := evaltest.Evaluate(t, off, ds, pop, staging.DefaultConfig(), o)
			launches, forwards := on.popLaunches.Load(), on.popForwards.Load()
			t.Logf("%d forwards in %d population launches", forwards, launches)
			if forwards < int64(2*len(pop.Genomes)) || forwards <= launches || off.popLaunches.Load() != 0 {
				t.Errorf("%d forwards in %d population launches (%d with the path off): want most genomes, several a launch", forwards, launches, off.popLaunches.Load())
			}
			for i := range want {
				w, g := want[i], got[i]
				if (w.Err == nil) != (g.Err == nil) || g.Images != w.Images ||
					math.Float64bits(g.Accuracy) != math.Float64bits(w.Accuracy) || math.Float64bits(g.Loss) != math.Float64bits(w.Loss) {
					t.Errorf("genome %d: population path accuracy %v loss %v (%v), per-layer %v %v (%v)", w.GenomeID, g.Accuracy, g.Loss, g.Err, w.Accuracy, w.Loss, w.Err)
				}
			}
			if tc.dt == vram.Float32 {
				evaltest.Same(t, evaltest.Evaluate(t, newCPU(t, tc.dt), ds, pop, staging.DefaultConfig(), o), got)
			}
		})
	}
}
