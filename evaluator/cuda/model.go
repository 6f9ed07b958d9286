//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// model is a genome's weights on the device: one block, every tensor at the
// offset sched.WeightLayout gives, in the storage type.
type model struct {
	b     *Backend
	g     *neat.Graph
	block *vram.Block // nil for a graph without weights
	// copied is recorded on the loads stream after the copy of the
	// weights: a forward's stream waits for it on the device. ready is
	// closed (by a host function on the notify stream, which waits for
	// copied) when the copy has landed, for Unload and for the pinned
	// buffer's return.
	copied event
	ready  chan struct{}
	once   sync.Once

	mu    sync.Mutex
	progs [2]*sched.Program // the last schedules built, newest first

	// pop is the genome's table for the population kernels (nil: the
	// per-layer path), made once.
	popOnce sync.Once
	pop     *sched.PopProgram
}

func (m *model) Graph() *neat.Graph { return m.g }

func (m *model) Bytes() int64 {
	if m.block == nil {
		return 0
	}
	return m.block.Size
}

// Unload frees the weights once their copy has landed. The evaluator has
// finished every forward of the model by then.
func (m *model) Unload() {
	m.once.Do(func() {
		if m.block == nil {
			return
		}
		// A failed copy leaves the context broken; the block goes back to
		// the cache all the same. The event is free once the copy has
		// landed: every forward that waited on it has finished.
		_ = m.b.wait(m.ready, m.b.notify)
		m.b.dev.Free(m.block)
		_ = m.b.w.do(func() error {
			m.b.loadEvents = append(m.b.loadEvents, m.copied)
			return nil
		})
	})
}

func (m *model) addr() uint64 {
	if m.block == nil {
		return 0
	}
	return m.block.Addr
}

// program returns the schedule of a forward of n images, built once per
// (n, cached): a genome's slices are all one size but the last.
func (m *model) program(n int, cached bool) (*sched.Program, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.progs {
		if p != nil && p.N == n && p.Cached == cached {
			m.progs[0], m.progs[i] = p, m.progs[0]
			return p, nil
		}
	}
	p, err := sched.BuildWith(m.g, m.b.dtype, n, cached, m.b.schedOptions())
	if err != nil {
		return nil, err
	}
	m.progs[1], m.progs[0] = m.progs[0], p
	return p, nil
}

// Load converts the graph's weights to the storage type in a pinned buffer
// and copies them to a new block on the loads stream, then records the
// model's event there; it returns once the copy is enqueued. The loads
// stream holds copies and event records only: the host learns that a copy
// landed from the notify stream, which waits for the event. A forward's
// stream waits for the event on the device (no round trip through the
// host); while the copy is in flight the next chunk's genomes load and the
// current chunk computes.
func (b *Backend) Load(g *neat.Graph) (evaluator.Model, error) {
	m := &model{b: b, g: g, ready: make(chan struct{})}
	wOff, bOff, total := sched.WeightLayout(g)
	if total == 0 {
		close(m.ready)
		return m, nil
	}
	bytes := total * int64(b.dtype.Size())
	buf, err := b.pool.get(bytes)
	if err != nil {
		return nil, fmt.Errorf("genome %d: %w", g.GenomeID, err)
	}
	b.storeWeights(buf, g, wOff, bOff, total)
	err = b.w.do(func() error {
		blk, err := b.dev.allocOnWorker(bytes)
		if err != nil {
			return err
		}
		ev, err := b.loadEvent()
		if err != nil {
			b.dev.Free(blk)
			return err
		}
		if err := b.drv.htodAsync(devptr(blk.Addr), buf.p, bytes, b.loads); err != nil {
			b.loadEvents = append(b.loadEvents, ev)
			b.dev.Free(blk)
			return err
		}
		if err := b.drv.record(ev, b.loads); err != nil {
			err = errors.Join(err, b.drv.streamSync(b.loads))
			b.loadEvents = append(b.loadEvents, ev)
			b.dev.Free(blk)
			return err
		}
		m.copied = ev
		// The host hears of the copy on the notify stream, which waits for
		// the event: no host function sits on the loads stream, so the
		// next chunk's copies follow each other without a round trip
		// through the host.
		if err := b.drv.streamWait(b.notify, ev); err != nil {
			err = errors.Join(err, b.drv.streamSync(b.loads))
			b.loadEvents = append(b.loadEvents, ev)
			b.dev.Free(blk)
			return err
		}
		if err := b.drv.onDone(b.notify, func() {
			b.pool.put(buf)
			close(m.ready)
		}); err != nil {
			// The copy may be in flight: let it finish before the buffer
			// and the block are reused.
			err = errors.Join(err, b.drv.streamSync(b.loads))
			b.loadEvents = append(b.loadEvents, ev)
			b.dev.Free(blk)
			return err
		}
		m.block = blk
		return nil
	})
	if err != nil {
		b.pool.put(buf)
		return nil, fmt.Errorf("genome %d: loading %d weights: %w", g.GenomeID, total, err)
	}
	return m, nil
}

// storeWeights writes the graph's tensors into buf at their layout's
// offsets, in the storage type.
func (b *Backend) storeWeights(buf *pinned, g *neat.Graph, wOff, bOff []int64, total int64) {
	for i := range g.Steps {
		s := &g.Steps[i]
		if s.Weight == nil {
			continue
		}
		b.storeValues(buf, wOff[i], s.Weight.Data)
		b.storeValues(buf, bOff[i], s.Bias.Data)
	}
}

// storeValues writes v at element offset off of buf in the storage type.
func (b *Backend) storeValues(buf *pinned, off int64, v []float32) {
	if len(v) == 0 {
		return
	}
	if b.dtype == vram.BFloat16 {
		dst := unsafe.Slice((*uint16)(unsafe.Add(buf.p, off*2)), len(v))
		vram.F32ToBF16(dst, v)
		return
	}
	copy(unsafe.Slice((*float32)(unsafe.Add(buf.p, off*4)), len(v)), v)
}
