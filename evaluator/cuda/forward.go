//go:build cuda || cudaemu

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/vram"
)

// Forward runs images [lo, hi) through the model on a stream of its own:
// the arena is allocated, the slice's images copied in (when the data set
// is not cached), the schedule's kernels launched and the reduction's 32
// bytes copied back; then it waits for the stream's callback, frees the
// arena and returns the reduction. An arena that does not fit fails with
// vram's out-of-memory error before anything is enqueued. Every exit frees
// what it allocated, after the stream is done with it.
func (b *Backend) Forward(ctx context.Context, mm evaluator.Model, dd evaluator.Data, lo, hi int) (evaluator.SliceStats, error) {
	m, ok := mm.(*model)
	if !ok || m.b != b {
		return evaluator.SliceStats{}, fmt.Errorf("cuda: Forward given a %T model of another backend", mm)
	}
	d, ok := dd.(*data)
	if !ok || d.b != b {
		return evaluator.SliceStats{}, fmt.Errorf("cuda: Forward given a %T data set of another backend", dd)
	}
	if lo < 0 || hi > d.ds.N || lo >= hi {
		return evaluator.SliceStats{}, fmt.Errorf("cuda: slice [%d, %d) of %d images", lo, hi, d.ds.N)
	}
	if err := ctx.Err(); err != nil {
		return evaluator.SliceStats{}, err
	}
	gid := m.g.GenomeID
	n := hi - lo
	cached := d.block != nil
	prog, err := m.program(n, cached)
	if err != nil {
		return evaluator.SliceStats{}, err
	}
	if r := b.popFor(m, d, lo, hi, prog); r != nil {
		st, err := b.forwardPop(ctx, r)
		if err != nil {
			return evaluator.SliceStats{}, fmt.Errorf("genome %d: forward of %d images: %w", gid, n, err)
		}
		return st, nil
	}
	sl, err := b.getSlot(ctx)
	if err != nil {
		return evaluator.SliceStats{}, fmt.Errorf("genome %d: %w", gid, err)
	}
	defer b.putSlot(sl)

	// The slice's images and labels, staged in pinned memory.
	elem := int64(b.dtype.Size())
	inBytes := prog.InputBytes(m.g, b.dtype)
	var in *pinned
	if !cached {
		if in, err = b.pool.get(inBytes + int64(n)); err != nil {
			return evaluator.SliceStats{}, fmt.Errorf("genome %d: %w", gid, err)
		}
		defer b.pool.put(in)
		b.storeValues(in, 0, d.ds.Images[lo*d.imgSize:hi*d.imgSize])
		copy(unsafe.Slice((*byte)(unsafe.Add(in.p, inBytes)), n), d.ds.Labels[lo:hi])
	}
	stats := (*[4]uint64)(sl.stats.p)
	stats[3] = math.MaxUint64 // rows: overwritten by the reduction's copy

	done := make(chan struct{})
	var arena *vram.Block
	err = b.w.do(func() error {
		var err error
		if arena, err = b.dev.allocOnWorker(prog.ArenaBytes); err != nil {
			return err
		}
		var base [5]uint64
		base[sched.Arena] = arena.Addr
		base[sched.Weights] = m.addr()
		if cached {
			base[sched.Input] = d.block.Addr + uint64(int64(lo*d.imgSize)*elem)
			base[sched.Labels] = d.block.Addr + uint64(d.labOff) + uint64(lo)
		} else {
			base[sched.Input] = arena.Addr + uint64(prog.InputOff)
			base[sched.Labels] = arena.Addr + uint64(prog.LabelsOff)
		}
		if err := b.enqueue(sl, m, prog, base, in, inBytes, n, done); err != nil {
			err, arena = b.abandon(sl, arena, err), nil
			return err
		}
		return nil
	})
	if err != nil {
		return evaluator.SliceStats{}, fmt.Errorf("genome %d: forward of %d images: %w", gid, n, err)
	}
	// A failed wait is a failure of the stream's work: a fault in a kernel
	// leaves the context broken, so nothing will touch the arena again.
	werr := b.wait(done, sl.s)
	b.dev.Free(arena)
	if werr != nil {
		return evaluator.SliceStats{}, fmt.Errorf("genome %d: forward of %d images: %w", gid, n, werr)
	}
	b.addDeviceTime(sl)
	if int64(stats[3]) != int64(n) {
		return evaluator.SliceStats{}, fmt.Errorf("genome %d: the reduction reported %d rows for a slice of %d", gid, int64(stats[3]), n)
	}
	return evaluator.SliceStats{
		Images:    n,
		Correct:   int(stats[1]),
		LossSum:   evaluator.SumOf(math.Float64frombits(stats[0])),
		NonFinite: int(stats[2]),
	}, nil
}

// enqueue puts a forward's work on its stream, after the model's weights
// have landed; on the worker.
func (b *Backend) enqueue(sl *slot, m *model, prog *sched.Program, base [5]uint64, in *pinned, inBytes int64, n int, done chan struct{}) error {
	if m.block != nil {
		// The weights' copy, ordered on the device.
		if err := b.drv.streamWait(sl.s, m.copied); err != nil {
			return err
		}
	}
	if err := b.drv.record(sl.start, sl.s); err != nil {
		return err
	}
	if in != nil {
		if err := b.drv.htodAsync(devptr(base[sched.Input]), in.p, inBytes, sl.s); err != nil {
			return err
		}
		if err := b.drv.htodAsync(devptr(base[sched.Labels]), unsafe.Add(in.p, inBytes), int64(n), sl.s); err != nil {
			return err
		}
	}
	for i := range prog.Launches {
		l := &prog.Launches[i]
		for j := 0; j < l.NArgs; j++ {
			a := l.Args[j]
			sl.args[j] = base[a.Base] + uint64(a.V)
		}
		if err := b.drv.launch(l.Kernel, l.Grid, unsafe.Pointer(&sl.args[0]), l.NArgs, 0, sl.s); err != nil {
			return fmt.Errorf("launching %s: %w", sched.Kernels[l.Kernel], err)
		}
	}
	return b.enqueueEnd(sl, devptr(base[sched.Arena]+uint64(prog.StatsOff)), sched.StatsBytes, done)
}

// abandon frees the arena of work that failed to enqueue, once whatever
// was enqueued has finished (before the arena and the buffers are reused);
// on the worker.
func (b *Backend) abandon(sl *slot, arena *vram.Block, err error) error {
	err = errors.Join(err, b.drv.streamSync(sl.s))
	b.dev.Free(arena)
	return err
}

// enqueueEnd ends a stream's work: the stats' copy back into the slot's
// pinned buffer, the end event, and the host function that closes done.
func (b *Backend) enqueueEnd(sl *slot, stats devptr, n int64, done chan struct{}) error {
	if err := b.drv.dtohAsync(sl.stats.p, stats, n, sl.s); err != nil {
		return err
	}
	if err := b.drv.record(sl.end, sl.s); err != nil {
		return err
	}
	return b.drv.onDone(sl.s, func() { close(done) })
}

// addDeviceTime adds the time between a finished forward's events to
// DeviceTime. A failure to read it loses that figure only.
func (b *Backend) addDeviceTime(sl *slot) {
	_ = b.w.do(func() error {
		d, err := b.drv.elapsed(sl.start, sl.end)
		if err == nil {
			b.busy.Add(int64(d))
		}
		return nil
	})
}
