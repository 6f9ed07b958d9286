//go:build cuda || cudaemu

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// PinnedLimit is the most page-locked host memory the backend keeps for
// its copies to the device (more only for a single larger request).
const PinnedLimit = 256 << 20

// Backend is the CUDA backend: a context on one GPU, its memory (Device),
// its streams and its kernels. It is safe for concurrent use; up to
// fitness_eval_parallel forwards run at once, each on a stream of its own.
type Backend struct {
	drv   driver
	w     *worker
	dev   *Device
	dtype vram.DType
	prec  sched.Precision
	// unfused turns off the pools fused into convolutions
	// (NEATEVAL_CUDA_FUSE=off, fuse.go); Footprint follows it.
	unfused bool
	pool    *pinnedPool
	// loads is the stream the weights are copied on; notify waits for
	// each copy's event and tells the host (Load).
	loads, notify stream
	info          Info

	// slots holds the idle forwards' streams; all of them were made when
	// the backend opened.
	slots chan *slot
	all   []*slot
	// busy is the device time of the forwards so far, in nanoseconds (from
	// each one's events).
	busy atomic.Int64
	// loadEvents are the events of unloaded models, for the next loads to
	// record their copies' ends with; on the worker only.
	loadEvents []event
	// popWork is the most FLOPs of a forward on the population path
	// (pop.go; 0: off); popQ is its queue. popSmem is the floats of
	// dynamic shared memory a block of pop_forward may have (Info.PopShared).
	popWork int64
	popSmem int64
	popQ    popQueue
	// popLaunches and popForwards count the population launches and the
	// forwards they scored.
	popLaunches, popForwards atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

var _ evaluator.Backend = (*Backend)(nil)

// Info describes the GPU a backend runs on.
type Info struct {
	Name   string // "NVIDIA H200"
	Index  int
	Total  int64  // bytes of device memory
	Free   int64  // bytes free when the backend opened
	Driver string // the driver's version, from NVML; else the CUDA API version
	// NVML says whether NVML (libnvidia-ml.so.1) was there; NVMLError why
	// not. OtherProcesses is the device memory that other processes held
	// when the backend opened, from NVML (−1 when unknown).
	NVML           bool
	NVMLError      string
	OtherProcesses int64
	// CC is the compute capability × 10 (90 for an H200), SMs the
	// multiprocessors (0 under the emulator).
	CC, SMs int
	// Modules says how the kernels were loaded, Kernels what the driver
	// says of each (none under the emulator).
	Modules []ModuleLoad
	Kernels []KernelAttrs
	// Streams is the forwards that can run at once: one stream, two events
	// and a pinned result buffer each, made when the backend opened.
	Streams int
	// PopShared is the bytes of dynamic shared memory a block of the
	// population kernel may have: what the device lets a block opt into,
	// less the kernel's static shared memory (227 KiB on sm_90).
	PopShared int
}

// slot is a forward's stream with its own events (before and after its
// work, for its device time), pinned result buffer and kernel argument
// scratch (used on the worker only). The scratch is an allocation of its
// own: cgo checks that memory passed to C holds no Go pointers, and it
// checks the whole allocation.
type slot struct {
	s          stream
	start, end event
	stats      *pinned
	args       *[sched.MaxArgs]uint64
}

// newBackend opens a backend over the driver that open returns; open runs
// on the worker and makes the context current there. Every driver object
// a forward needs is made here: the loads stream and its notify stream
// and, for each of the o.Parallel forwards (DefaultParallel when 0) that
// may run at once, a stream, two events and a pinned result buffer (a
// population launch runs on one of these). A failure to make one fails
// the open; CUDA_ERROR_OUT_OF_MEMORY then matches vram.ErrOutOfMemory.
func newBackend(o evaluator.BackendOptions, open func() (driver, Info, error)) (*Backend, error) {
	if err := o.Faults.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	prec, err := ParsePrecision(o.ComputePrecision)
	if err != nil {
		return nil, err
	}
	n := o.Parallel
	if n <= 0 {
		n = DefaultParallel
	}
	b := &Backend{dtype: o.DType, prec: prec, slots: make(chan *slot, n), popWork: popMaxWork(), unfused: fuseOff()}
	b.popQ.idle = make(chan struct{}, 1)
	w, err := startWorker(func() error {
		drv, info, err := open()
		if err != nil {
			return err
		}
		b.drv, b.info = drv, info
		if err := b.openOnWorker(n); err != nil {
			return errors.Join(err, drv.close())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.w = w
	src := &source{drv: b.drv, name: fmt.Sprintf("%s (cuda:%d)", b.info.Name, b.info.Index), total: b.info.Total}
	src.free.Store(b.info.Free)
	b.dev = &Device{w: w, src: src, alloc: vram.NewAllocator(src, vram.AllocatorOptions{Faults: o.Faults})}
	b.pool = newPinnedPool(w, b.drv, PinnedLimit)
	return b, nil
}

// openOnWorker reads the device's memory and makes the streams, events
// and result buffers of n forwards. On an error the caller closes the
// driver, which frees what was made.
func (b *Backend) openOnWorker(n int) error {
	free, total, err := b.drv.memInfo()
	if err != nil {
		return fmt.Errorf("cuda: cuMemGetInfo: %w", err)
	}
	b.info.Free, b.info.Total = free, total
	if b.loads, err = b.drv.newStream(); err != nil {
		return fmt.Errorf("cuda: the weights' stream: %w", err)
	}
	if b.notify, err = b.drv.newStream(); err != nil {
		return fmt.Errorf("cuda: the weights' notify stream: %w", err)
	}
	for i := range n {
		sl := &slot{args: new([sched.MaxArgs]uint64)}
		if err := b.newSlot(sl); err != nil {
			return fmt.Errorf("cuda: the stream of forward %d of %d: %w", i+1, n, err)
		}
		b.all = append(b.all, sl)
		b.slots <- sl
	}
	b.info.Streams = n
	return b.raisePopShared()
}

// raisePopShared raises the population kernels' dynamic shared memory to
// the device's most (driver.maxDynamicShared) and keeps the smaller of
// the two kernels' limits; on the worker.
func (b *Backend) raisePopShared() error {
	least := math.MaxInt
	for _, k := range sched.PopForwardKernels() {
		n, err := b.drv.maxDynamicShared(k)
		if err != nil {
			return fmt.Errorf("cuda: %s: %w", sched.Kernels[k], err)
		}
		least = min(least, n)
	}
	b.info.PopShared, b.popSmem = least, int64(least/4)
	return nil
}

// newSlot makes a slot's driver objects; on the worker.
func (b *Backend) newSlot(sl *slot) error {
	var err error
	if sl.s, err = b.drv.newStream(); err != nil {
		return err
	}
	if sl.start, err = b.drv.newEvent(); err != nil {
		return err
	}
	if sl.end, err = b.drv.newEvent(); err != nil {
		return err
	}
	p, err := b.drv.hostAlloc(statsAlloc)
	if err != nil {
		return err
	}
	sl.stats = &pinned{p: p, size: statsAlloc}
	return nil
}

// loadEvent returns an event for a model's copy: a freed one, or a new one
// (CUDA_ERROR_OUT_OF_MEMORY typed as vram's). On the worker.
func (b *Backend) loadEvent() (event, error) {
	if n := len(b.loadEvents); n > 0 {
		e := b.loadEvents[n-1]
		b.loadEvents = b.loadEvents[:n-1]
		return e, nil
	}
	return b.drv.newEvent()
}

// PreferredParallel is the fitness_eval_parallel this backend suggests: the
// forwards it opened streams for (evaluator.ParallelHint).
func (b *Backend) PreferredParallel() int { return b.info.Streams }

// DeviceTime is the device time of every forward so far, each measured by
// its stream's events from its first copy to its result's copy back.
// Forwards on different streams overlap, so it can exceed the wall time.
func (b *Backend) DeviceTime() time.Duration { return time.Duration(b.busy.Load()) }

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Device is the GPU's memory.
func (b *Backend) Device() vram.Device { return b.dev }

// DType is the storage element type.
func (b *Backend) DType() vram.DType { return b.dtype }

// Info describes the GPU.
func (b *Backend) Info() Info { return b.info }

// Footprint is exact: the weight block Load allocates and the arena a
// forward of b images allocates (internal/sched).
func (b *Backend) Footprint(g *neat.Graph, batch int, cachedData bool) evaluator.Footprint {
	m, a := sched.FootprintWith(g, b.dtype, batch, cachedData, b.schedOptions())
	return evaluator.Footprint{Model: m, Act: a}
}

// Close releases the streams, the pinned buffers, the device memory and
// the context. Blocks still live (a leak: a model not unloaded, data not
// released) are reported as an error, and released all the same.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		live := b.dev.alloc.Live()
		allocated := b.dev.alloc.Stats().Allocated
		b.closeErr = b.w.stop(func() error {
			var errs []error
			b.pool.close(true)
			for _, s := range b.all {
				errs = append(errs, b.drv.hostFree(s.stats.p), b.drv.destroyEvent(s.start),
					b.drv.destroyEvent(s.end), b.drv.destroyStream(s.s))
			}
			for _, e := range b.loadEvents {
				errs = append(errs, b.drv.destroyEvent(e))
			}
			errs = append(errs, b.drv.destroyStream(b.loads), b.drv.destroyStream(b.notify))
			b.dev.alloc.EmptyCache()
			// Destroying the context frees what is still allocated.
			errs = append(errs, b.drv.close())
			return errors.Join(errs...)
		})
		b.dev.src.errMu.Lock()
		b.closeErr = errors.Join(b.closeErr, b.dev.src.firstErr)
		b.dev.src.errMu.Unlock()
		if live > 0 {
			b.closeErr = errors.Join(b.closeErr, fmt.Errorf("cuda: closed with %d live blocks (%s) still allocated", live, vram.FormatBytes(allocated)))
		}
	})
	return b.closeErr
}

// getSlot takes an idle forward stream, waiting for one while all are in
// use (more forwards at once than the backend opened streams for).
func (b *Backend) getSlot(ctx context.Context) (*slot, error) {
	select {
	case s := <-b.slots:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// statsAlloc is the pinned buffer a forward's reduction lands in (one page;
// sched.StatsBytes of it are used).
const statsAlloc = 4096

func (b *Backend) putSlot(s *slot) { b.slots <- s }

// pollEvery is how often a wait for the device asks the stream itself: a
// fault in a kernel stops the driver's callbacks, and the poll turns it
// into an error instead of a hang.
const pollEvery = 100 * time.Millisecond

// wait blocks until done is closed or the stream reports a failure.
func (b *Backend) wait(done <-chan struct{}, s stream) error {
	select {
	case <-done:
		return nil
	default:
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-t.C:
			var fin bool
			err := b.w.do(func() error {
				var err error
				fin, err = b.drv.streamQuery(s)
				return err
			})
			if err != nil {
				return err
			}
			if fin {
				return nil
			}
		}
	}
}
