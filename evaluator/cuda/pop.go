//go:build cuda || cudaemu

package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/vram"
)

// The population path: forwards of small genomes (one image's activations
// fit in a block's shared memory, sched.BuildPop) on a cached data set in
// exact float32 do not launch their layers one by one. Each waits in a
// queue; whoever next gets a stream takes the whole queue (up to
// sched.PopMaxBatch forwards, of any genomes and slices) and scores it
// with two launches: pop_forward, every block a tile of one genome's
// images through the whole genome in shared memory, and pop_reduce, one
// block per forward. The forwards in flight at once (fitness_eval_parallel)
// are what one launch can gather: while a launch runs, the next forwards
// queue up behind it.
//
// The kernels repeat the per-layer kernels' arithmetic, so a slice's stats
// are the same on either path (TestPopulationPath); the path taken never
// changes a result. By default a forward takes the path when its work is
// at most sched.PopMaxWork (small slices: where per-layer launches cost
// more than the interpreter's slower arithmetic); NEATEVAL_CUDA_POPULATION
// =off turns the path off, =all sends every forward whose genome fits (to
// compare the two paths' speed on a card).

// popEnv sets the population path: "off", "all" (every forward whose
// genome fits, whatever its work), or by default the forwards of at most
// sched.PopMaxWork FLOPs.
const popEnv = "NEATEVAL_CUDA_POPULATION"

// popMaxWork reads NEATEVAL_CUDA_POPULATION: the most FLOPs a forward on
// the population path may do, 0 for the path off.
func popMaxWork() int64 {
	switch os.Getenv(popEnv) {
	case "off":
		return 0
	case "all":
		return math.MaxInt64
	}
	return sched.PopMaxWork
}

// popReq is one forward waiting for, or in, a population launch.
type popReq struct {
	m      *model
	d      *data
	lo, hi int
	prog   *sched.PopProgram
	arena  int64 // the per-layer forward's arena: this request's share of the allocation
	st     evaluator.SliceStats
	err    error
	done   chan struct{}
}

// popQueue is the forwards waiting for a launch. One population launch is
// in flight at a time (busy): the forwards that arrive meanwhile wait, and
// the next launch takes them all; idle wakes a waiter when a launch ends.
type popQueue struct {
	mu      sync.Mutex
	pending []*popReq
	busy    bool
	idle    chan struct{}
}

func (q *popQueue) push(r *popReq) {
	q.mu.Lock()
	q.pending = append(q.pending, r)
	q.mu.Unlock()
}

// lead makes the caller the next launch's runner when none is in flight
// and forwards wait: it returns up to sched.PopMaxBatch of them, oldest
// first, and nil otherwise.
func (q *popQueue) lead() []*popReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy || len(q.pending) == 0 {
		return nil
	}
	q.busy = true
	n := min(len(q.pending), sched.PopMaxBatch)
	batch := q.pending[:n:n]
	q.pending = append([]*popReq(nil), q.pending[n:]...)
	return batch
}

// finish ends the runner's launch and wakes a waiter.
func (q *popQueue) finish() {
	q.mu.Lock()
	q.busy = false
	q.mu.Unlock()
	q.kick()
}

// kick wakes a waiter if forwards wait and no launch is in flight: every
// forward that leaves calls it, so a wake-up taken by a forward that was
// already done is never lost.
func (q *popQueue) kick() {
	q.mu.Lock()
	wake := !q.busy && len(q.pending) > 0
	q.mu.Unlock()
	if wake {
		select {
		case q.idle <- struct{}{}:
		default:
		}
	}
}

// remove takes r out of the queue, reporting whether it was still there.
func (q *popQueue) remove(r *popReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p == r {
			q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
			return true
		}
	}
	return false
}

// popProgram is the model's table for the population kernels, nil when the
// genome takes the per-layer path (too large, or TF32 products, which the
// population kernels do not have).
func (m *model) popProgram() *sched.PopProgram {
	m.popOnce.Do(func() {
		if m.b.popWork > 0 && m.b.prec == sched.FP32 {
			m.pop = sched.BuildPop(m.g, m.b.dtype, m.b.popSmem)
		}
	})
	return m.pop
}

// popFor returns the request of a forward that takes the population path,
// nil for one that does not.
func (b *Backend) popFor(m *model, d *data, lo, hi int, prog *sched.Program) *popReq {
	if d.block == nil {
		return nil
	}
	p := m.popProgram()
	if p == nil || m.g.FLOPs > b.popWork/int64(hi-lo) || !p.PopFits(hi-lo, prog.ArenaBytes) {
		return nil
	}
	return &popReq{m: m, d: d, lo: lo, hi: hi, prog: p, arena: prog.ArenaBytes, done: make(chan struct{})}
}

// forwardPop queues r and waits for its launch, running the next launch
// itself (with every forward then waiting) whenever none is in flight.
func (b *Backend) forwardPop(ctx context.Context, r *popReq) (evaluator.SliceStats, error) {
	q := &b.popQ
	q.push(r)
	defer q.kick()
	for {
		if batch := q.lead(); batch != nil {
			// Slots are always given back: waiting for one ignores ctx, so
			// that the batch's forwards are all answered.
			sl, _ := b.getSlot(context.Background())
			b.runPop(sl, batch)
			b.putSlot(sl)
			q.finish()
		}
		select {
		case <-r.done:
			return r.st, r.err
		default:
		}
		select {
		case <-r.done:
			return r.st, r.err
		case <-q.idle:
		case <-ctx.Done():
			if q.remove(r) {
				return evaluator.SliceStats{}, ctx.Err()
			}
			<-r.done
			return r.st, r.err
		}
	}
}

// runPop scores batch with one launch of each population kernel on sl's
// stream, and fills in and releases every request.
func (b *Backend) runPop(sl *slot, batch []*popReq) {
	err := b.launchPop(sl, batch)
	for i, r := range batch {
		if err != nil {
			r.err = err
		} else {
			r.st, r.err = popStats(sl, i, r)
		}
		close(r.done)
	}
}

// launchPop runs batch's launch and waits for its stats.
func (b *Backend) launchPop(sl *slot, batch []*popReq) error {
	ps, ns := make([]*sched.PopProgram, len(batch)), make([]int, len(batch))
	var share int64
	for i, r := range batch {
		ps[i], ns[i] = r.prog, r.hi-r.lo
		share += r.arena
	}
	lay := sched.LayPop(ps, ns)
	buf, err := b.pool.get(lay.Upload)
	if err != nil {
		return err
	}
	defer b.pool.put(buf)
	stats := unsafe.Slice((*uint64)(sl.stats.p), 4*len(batch))
	for i := range batch {
		stats[4*i+3] = math.MaxUint64 // rows: overwritten by the stats' copy
	}
	done := make(chan struct{})
	var arena *vram.Block
	err = b.w.do(func() error {
		var err error
		// The forwards' arenas, in one block: the memory model's figure
		// (sched.PopFits: the launch needs no more).
		if arena, err = b.dev.allocOnWorker(share); err != nil {
			return err
		}
		first := b.popTable(buf, arena.Addr, lay, batch)
		if err := b.enqueuePop(sl, batch, buf, arena.Addr, lay, first, done); err != nil {
			err, arena = b.abandon(sl, arena, err), nil
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("a population launch of %d forwards: %w", len(batch), err)
	}
	werr := b.wait(done, sl.s)
	b.dev.Free(arena)
	if werr != nil {
		return fmt.Errorf("a population launch of %d forwards: %w", len(batch), werr)
	}
	b.addDeviceTime(sl)
	b.popLaunches.Add(1)
	b.popForwards.Add(int64(len(batch)))
	return nil
}

// popTable writes the headers and the steps into buf, and returns the
// launch's blocks.
func (b *Backend) popTable(buf *pinned, base uint64, lay sched.PopLayout, batch []*popReq) int64 {
	words := unsafe.Slice((*int64)(buf.p), lay.Upload/8)
	elem := int64(b.dtype.Size())
	var first int64
	for i, r := range batch {
		p, d := r.prog, r.d
		h := words[int64(i)*sched.PopHdr:][:sched.PopHdr]
		h[sched.HdrSteps] = int64(base) + lay.Steps[i]
		h[sched.HdrNSteps] = int64(p.NSteps())
		h[sched.HdrWeights] = int64(r.m.addr())
		h[sched.HdrImages] = int64(d.block.Addr) + int64(r.lo*d.imgSize)*elem
		h[sched.HdrLabels] = int64(d.block.Addr) + d.labOff + int64(r.lo)
		h[sched.HdrN] = int64(r.hi - r.lo)
		h[sched.HdrTile] = p.Tile
		h[sched.HdrFrame] = p.Frame
		h[sched.HdrInSize] = p.InSize
		h[sched.HdrInOff] = p.InOff
		h[sched.HdrLogits] = p.Logits
		h[sched.HdrClasses] = p.Classes
		h[sched.HdrLoss] = int64(base) + lay.Loss[i]
		h[sched.HdrKind] = int64(base) + lay.Kind[i]
		h[sched.HdrFirst] = first
		h[sched.HdrStats] = int64(base) + lay.Stats + int64(i)*sched.StatsBytes
		copy(words[lay.Steps[i]/8:], p.Steps)
		first += p.Blocks(r.hi - r.lo)
	}
	return first
}

// enqueuePop puts the launch on sl's stream after every model's weights
// have landed (events, on the device); on the worker.
func (b *Backend) enqueuePop(sl *slot, batch []*popReq, buf *pinned, base uint64, lay sched.PopLayout, blocks int64, done chan struct{}) error {
	for _, r := range batch {
		if r.m.block != nil {
			if err := b.drv.streamWait(sl.s, r.m.copied); err != nil {
				return err
			}
		}
	}
	if err := b.drv.record(sl.start, sl.s); err != nil {
		return err
	}
	if err := b.drv.htodAsync(devptr(base), buf.p, lay.Upload, sl.s); err != nil {
		return err
	}
	sl.args[0], sl.args[1] = base+uint64(lay.Headers), uint64(len(batch))
	k := batch[0].prog.Kernel
	if blocks > math.MaxInt32 {
		return fmt.Errorf("%d blocks: beyond a grid's width", blocks)
	}
	var shared int64
	for _, r := range batch {
		shared = max(shared, r.prog.Shared())
	}
	if err := b.drv.launch(k, [2]uint32{uint32(blocks), 1}, unsafe.Pointer(&sl.args[0]), 2, int(shared), sl.s); err != nil {
		return fmt.Errorf("launching %s: %w", sched.Kernels[k], err)
	}
	red := sched.PopReduce()
	if err := b.drv.launch(red, [2]uint32{uint32(len(batch)), 1}, unsafe.Pointer(&sl.args[0]), 2, 0, sl.s); err != nil {
		return fmt.Errorf("launching %s: %w", sched.Kernels[red], err)
	}
	return b.enqueueEnd(sl, devptr(base+uint64(lay.Stats)), int64(len(batch))*sched.StatsBytes, done)
}

// popStats reads request i's stats from the slot's result buffer.
func popStats(sl *slot, i int, r *popReq) (evaluator.SliceStats, error) {
	st := unsafe.Slice((*uint64)(sl.stats.p), 4*(i+1))[4*i:]
	n := r.hi - r.lo
	if int64(st[3]) != int64(n) {
		return evaluator.SliceStats{}, fmt.Errorf("the population reduction reported %d rows for a slice of %d", int64(st[3]), n)
	}
	return evaluator.SliceStats{Images: n, Correct: int(st[1]), LossSum: evaluator.SumOf(math.Float64frombits(st[0])), NonFinite: int(st[2])}, nil
}
