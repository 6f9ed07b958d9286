package staging

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/vram"
)

// Resident is one genome's weights on the device.
type Resident interface {
	Unload()
}

// LoadFunc copies the weights of the genome at a population index to the
// device.
type LoadFunc func(index int) (Resident, error)

// Manager is the PopulationVRAMManager: it decides where the population's
// weights live and moves them through the device chunk by chunk. Drive it
// as the seed's lifecycle does:
//
//	plan, err := m.PrepareForEval(items, fixed, load)
//	for c := range m.IterEvalChunks(ctx) {
//		m.LoadChunk(ctx, c)
//		... evaluate the genomes of c ...
//		m.UnloadChunk(c)
//	}
//
// A Manager serves one generation at a time; call PrepareForEval again for
// the next.
type Manager struct {
	cfg Config
	dev vram.Device
	log zerolog.Logger

	plan   *Plan
	items  []Item
	load   LoadFunc
	chunks []*Chunk

	mu       sync.Mutex
	loadWait time.Duration // time LoadChunk spent waiting for weights
	loadTime time.Duration // time spent loading, overlapped or not
}

// NewManager creates a manager for a device.
func NewManager(cfg Config, dev vram.Device, log zerolog.Logger) *Manager {
	return &Manager{cfg: cfg, dev: dev, log: log}
}

// Chunk is a set of genomes that are on the device together.
type Chunk struct {
	Index int
	Plan  ChunkPlan
	// Indexes are the population indexes of the chunk's genomes, in order.
	Indexes []int

	models   map[int]Resident
	errs     map[int]error
	started  bool
	unloaded bool
	done     chan struct{} // closed when the chunk's load has finished
	// Wait is how long PrepareForEval and LoadChunk waited for this chunk's
	// weights: the load time that no evaluation overlapped.
	Wait time.Duration
}

// Model returns the loaded weights of the genome at a population index, or
// the error its load failed with.
func (c *Chunk) Model(index int) (Resident, error) {
	if err, ok := c.errs[index]; ok {
		return nil, err
	}
	r, ok := c.models[index]
	if !ok {
		return nil, fmt.Errorf("staging: genome #%d is not in chunk %d", index, c.Index)
	}
	return r, nil
}

// PrepareForEval plans the generation: the mode, the budgets and the chunks
// for these items on the device, with fixed bytes (the validation cache, the
// graph reserve, anything else allocated) counted as taken. In gpu_resident
// mode it loads every genome now. It logs the POP line.
func (m *Manager) PrepareForEval(items []Item, fixed int64, load LoadFunc) (*Plan, error) {
	total, _ := m.dev.MemInfo()
	plan, err := NewPlan(m.cfg, items, total, fixed+m.cfg.GraphReserve)
	if err != nil {
		return nil, err
	}
	m.plan, m.items, m.load = plan, items, load
	m.chunks = make([]*Chunk, len(plan.Chunks))
	for i, cp := range plan.Chunks {
		c := &Chunk{Index: i, Plan: cp, done: make(chan struct{})}
		for _, k := range cp.Items {
			c.Indexes = append(c.Indexes, items[k].Index)
		}
		m.chunks[i] = c
	}
	m.loadWait, m.loadTime = 0, 0
	logPlan(m.log, plan, m.cfg, len(items))
	if plan.Mode == GPUResident && len(m.chunks) == 1 {
		// Nothing is evaluated while the resident population loads: all of
		// it is exposed load time.
		c, start := m.chunks[0], time.Now()
		m.startLoad(c)
		<-c.done
		c.Wait = time.Since(start)
		m.mu.Lock()
		m.loadWait += c.Wait
		m.mu.Unlock()
	}
	return plan, nil
}

// IterEvalChunks yields the planned chunks in order, until ctx is done. The
// caller loads, evaluates and unloads each; with prefetch, loading chunk i
// starts the load of chunk i+1 in the background. When the loop ends early
// (a break, a return, ctx cancelled), a chunk that prefetch loaded ahead of
// the one in hand is unloaded here; the chunk in hand stays the caller's to
// unload.
func (m *Manager) IterEvalChunks(ctx context.Context) iter.Seq[*Chunk] {
	return func(yield func(*Chunk) bool) {
		next := 0
		defer func() {
			for _, c := range m.chunks[next:] {
				if m.isStarted(c) && !c.unloaded {
					m.UnloadChunk(c)
				}
			}
		}()
		for _, c := range m.chunks {
			if ctx.Err() != nil {
				return
			}
			next = c.Index + 1
			if !yield(c) {
				return
			}
		}
	}
}

func (m *Manager) isStarted(c *Chunk) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return c.started
}

// LoadChunk puts the chunk's weights on the device, waiting for a prefetch
// in flight, and starts prefetching the next chunk. A genome whose weights
// do not fit gets its load error in the chunk (Chunk.Model), and the others
// load.
func (m *Manager) LoadChunk(ctx context.Context, c *Chunk) error {
	start := time.Now()
	m.startLoad(c)
	select {
	case <-c.done:
	case <-ctx.Done():
		<-c.done // a load in flight finishes; the caller unloads
		return ctx.Err()
	}
	wait := time.Since(start)
	c.Wait += wait
	m.mu.Lock()
	m.loadWait += wait
	m.mu.Unlock()
	if c.Index+1 < len(m.chunks) && m.chunks[c.Index+1].Plan.Prefetched {
		m.startLoad(m.chunks[c.Index+1])
	}
	return nil
}

// startLoad begins loading a chunk once; loads run on their own goroutine.
func (m *Manager) startLoad(c *Chunk) {
	m.mu.Lock()
	if c.started {
		m.mu.Unlock()
		return
	}
	c.started = true
	m.mu.Unlock()
	go func() {
		t := time.Now()
		models, errs := make(map[int]Resident, len(c.Indexes)), map[int]error{}
		for _, idx := range c.Indexes {
			r, err := m.load(idx)
			if err != nil {
				errs[idx] = err
				continue
			}
			models[idx] = r
		}
		c.models, c.errs = models, errs
		m.mu.Lock()
		m.loadTime += time.Since(t)
		m.mu.Unlock()
		close(c.done)
	}()
}

// UnloadChunk frees the chunk's weights and returns the allocator's cached
// blocks to the device. It waits for a load in flight first; unloading a
// chunk twice, or one never loaded, is harmless.
func (m *Manager) UnloadChunk(c *Chunk) {
	if m.isStarted(c) {
		<-c.done
	}
	for _, r := range c.models {
		r.Unload()
	}
	c.models = nil
	c.unloaded = true
	m.dev.EmptyCache()
}

// Plan is the current generation's plan.
func (m *Manager) Plan() *Plan { return m.plan }

// LoadTimes are the time spent loading weights in this generation, and the
// part of it that no evaluation overlapped (LoadChunk waiting).
func (m *Manager) LoadTimes() (total, exposed time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadTime, m.loadWait
}

// IsOOM says whether a load error was an out-of-memory.
func IsOOM(err error) bool { return errors.Is(err, vram.ErrOutOfMemory) }
