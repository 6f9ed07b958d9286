package staging_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// loader loads genomes onto a real CPU device: each load allocates the
// genome's M_model bytes from the arena, and each Unload frees them. It
// records every load and unload, in order.
type loader struct {
	dev   *vram.CPUDevice
	sizes map[int]int64 // M_model by population index
	// hook, when set, runs at the start of each load.
	hook func(idx int)
	// loaded, when set, receives each index once its weights are on the
	// device.
	loaded chan int

	mu      sync.Mutex
	events  []string // "load 3", "unload 3"
	loads   map[int]int
	unloads map[int]int
	live    map[int]bool
}

type resident struct {
	l    *loader
	idx  int
	b    *vram.Block
	once sync.Once
}

func (r *resident) Unload() {
	r.once.Do(func() {
		r.l.dev.Free(r.b)
		r.l.mu.Lock()
		r.l.events = append(r.l.events, fmt.Sprint("unload ", r.idx))
		r.l.unloads[r.idx]++
		delete(r.l.live, r.idx)
		r.l.mu.Unlock()
	})
}

func newLoader(dev *vram.CPUDevice, items []staging.Item) *loader {
	l := &loader{dev: dev, sizes: map[int]int64{}, loads: map[int]int{}, unloads: map[int]int{}, live: map[int]bool{}}
	for _, it := range items {
		l.sizes[it.Index] = it.Model
	}
	return l
}

func (l *loader) load(idx int) (staging.Resident, error) {
	if l.hook != nil {
		l.hook(idx)
	}
	l.mu.Lock()
	l.events = append(l.events, fmt.Sprint("load ", idx))
	l.loads[idx]++
	l.mu.Unlock()
	b, err := l.dev.Alloc(l.sizes[idx])
	if err != nil {
		return nil, fmt.Errorf("genome #%d: %w", idx, err)
	}
	l.mu.Lock()
	l.live[idx] = true
	l.mu.Unlock()
	if l.loaded != nil {
		l.loaded <- idx
	}
	return &resident{l: l, idx: idx, b: b}, nil
}

// counts returns how many times genome idx was loaded and unloaded; loads
// of a prefetched chunk may still be running.
func (l *loader) counts(idx int) (loads, unloads int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loads[idx], l.unloads[idx]
}

func (l *loader) isLive(idx int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[idx]
}

func (l *loader) eventIndex(ev string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Index(l.events, ev)
}

func newDevice(t *testing.T, size int64) *vram.CPUDevice {
	t.Helper()
	dev, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// fixedBlock allocates n bytes that stay on the device (a validation cache,
// say) and returns the allocator's figures with it in place.
func fixedBlock(t *testing.T, dev *vram.CPUDevice, n int64) vram.Stats {
	t.Helper()
	b, err := dev.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(b) })
	return dev.Stats()
}

// mixed is 12 genomes of 1, 2 and 3 MiB of weights and 1 MiB of
// activations: with 6 MiB chunks they pack into 4 full chunks.
func mixed() []staging.Item {
	items := make([]staging.Item, 12)
	for i := range items {
		items[i] = staging.Item{Index: i, Model: int64(1+i%3) * MiB, Act: MiB}
	}
	return items
}

func stagedConfig(chunk int64, prefetch bool) staging.Config {
	cfg := staging.DefaultConfig()
	cfg.Adaptive = false
	cfg.ChunkBytes = chunk
	cfg.Prefetch = prefetch
	return cfg
}

func chunkModel(sizes map[int]int64, c *staging.Chunk) int64 {
	var s int64
	for _, idx := range c.Indexes {
		s += sizes[idx]
	}
	return s
}

// TestManagerLoadsEachGenomeOnce drives the lifecycle on a real device for
// two generations: every genome is loaded once per generation and unloaded,
// the weights of no other chunk are on the device while a chunk is
// evaluated (bar the next one, with prefetch), and UnloadChunk hands the
// allocator's cache back to the device.
func TestManagerLoadsEachGenomeOnce(t *testing.T) {
	for _, prefetch := range []bool{false, true} {
		t.Run(fmt.Sprintf("prefetch=%v", prefetch), func(t *testing.T) {
			dev := newDevice(t, 64*MiB)
			base := fixedBlock(t, dev, 4*MiB)
			items := mixed()
			m := staging.NewManager(stagedConfig(6*MiB, prefetch), dev, zerolog.Nop())
			for gen := range 2 {
				l := newLoader(dev, items)
				plan, err := m.PrepareForEval(items, base.Allocated, l.load)
				if err != nil {
					t.Fatal(err)
				}
				if plan.Mode != staging.CPUStaged || len(plan.Chunks) != 4 || plan.LowerBound != 4 || plan.Prefetch != prefetch {
					t.Fatalf("plan: mode %s, %d chunks (lower bound %d), prefetch %v", plan.Mode, len(plan.Chunks), plan.LowerBound, plan.Prefetch)
				}
				var prev *staging.Chunk
				n := 0
				for c := range m.IterEvalChunks(context.Background()) {
					n++
					if err := m.LoadChunk(context.Background(), c); err != nil {
						t.Fatal(err)
					}
					for _, idx := range c.Indexes {
						if r, err := c.Model(idx); err != nil || r == nil || !l.isLive(idx) {
							t.Errorf("gen %d chunk %d: genome #%d: %v, live %v", gen, c.Index, idx, err, l.isLive(idx))
						}
					}
					if prev != nil {
						for _, idx := range prev.Indexes {
							if l.isLive(idx) {
								t.Errorf("gen %d: genome #%d of chunk %d still on the device during chunk %d", gen, idx, prev.Index, c.Index)
							}
						}
					}
					if got := dev.Stats().Allocated; got < base.Allocated+chunkModel(l.sizes, c) {
						t.Errorf("chunk %d loaded: %d bytes allocated, want at least %d", c.Index, got, base.Allocated+chunkModel(l.sizes, c))
					}
					m.UnloadChunk(c)
					for _, idx := range c.Indexes {
						if _, err := c.Model(idx); err == nil {
							t.Errorf("genome #%d still handed out after UnloadChunk", idx)
						}
					}
					if !prefetch {
						// Nothing else is on the device: Allocated and
						// Reserved are back where they were, so the cache
						// was emptied.
						if st := dev.Stats(); st.Allocated != base.Allocated || st.Reserved != base.Reserved {
							t.Errorf("after unloading chunk %d: allocated %d reserved %d, want %d and %d",
								c.Index, st.Allocated, st.Reserved, base.Allocated, base.Reserved)
						}
					}
					prev = c
				}
				if n != 4 {
					t.Errorf("%d chunks yielded, want 4", n)
				}
				for _, it := range items {
					if n, u := l.counts(it.Index); n != 1 || u != 1 {
						t.Errorf("gen %d: genome #%d loaded %d and unloaded %d times, want once each", gen, it.Index, n, u)
					}
				}
				if st := dev.Stats(); st.Allocated != base.Allocated || st.Reserved != base.Reserved {
					t.Errorf("gen %d done: allocated %d reserved %d, want %d and %d", gen, st.Allocated, st.Reserved, base.Allocated, base.Reserved)
				}
				total, exposed := m.LoadTimes()
				if total <= 0 || exposed < 0 || exposed > total+time.Second {
					t.Errorf("load times: total %v, exposed %v", total, exposed)
				}
			}
		})
	}
}

// TestPrefetchOverlaps: with prefetch, chunk i+1's weights are loaded onto
// the device while chunk i's are still there; without it (by the config,
// or because the plan has no room for two chunks), chunk i+1 is not touched
// until chunk i is unloaded.
func TestPrefetchOverlaps(t *testing.T) {
	dev := newDevice(t, 64*MiB)
	base := fixedBlock(t, dev, 4*MiB)
	items := mixed()
	l := newLoader(dev, items)
	l.loaded = make(chan int, len(items))
	m := staging.NewManager(stagedConfig(6*MiB, true), dev, zerolog.Nop())
	plan, err := m.PrepareForEval(items, base.Allocated, l.load)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Prefetch {
		t.Fatal("plan without prefetch")
	}
	ctx := context.Background()
	var chunks []*staging.Chunk
	for c := range m.IterEvalChunks(ctx) {
		chunks = append(chunks, c)
	}
	c0, c1 := chunks[0], chunks[1]
	if err := m.LoadChunk(ctx, c0); err != nil {
		t.Fatal(err)
	}
	// Chunk 0 is in hand; chunk 1 loads in the background.
	want := map[int]bool{}
	for _, idx := range append(slices.Clone(c0.Indexes), c1.Indexes...) {
		want[idx] = true
	}
	timeout := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case idx := <-l.loaded:
			delete(want, idx)
		case <-timeout:
			t.Fatalf("chunk 1 not prefetched while chunk 0 is loaded; still missing %v", want)
		}
	}
	if got, both := dev.Stats().Allocated, base.Allocated+chunkModel(l.sizes, c0)+chunkModel(l.sizes, c1); got != both {
		t.Errorf("during chunk 0: %d bytes allocated, want chunks 0 and 1 together: %d", got, both)
	}
	if peak := plan.Chunks[0].Peak + plan.Chunks[1].Model; peak > plan.PeakPredicted || plan.PeakPredicted > plan.PeakBudget {
		t.Errorf("predicted peak %d: below chunk 0 + chunk 1 weights %d, or above the budget %d", plan.PeakPredicted, peak, plan.PeakBudget)
	}
	m.UnloadChunk(c0)
	first := l.eventIndex(fmt.Sprint("load ", c1.Indexes[0]))
	unload := l.eventIndex(fmt.Sprint("unload ", c0.Indexes[0]))
	if first < 0 || unload < 0 || first > unload {
		t.Errorf("chunk 1's first load is event %d, chunk 0's first unload %d: no overlap", first, unload)
	}
	// Chunk 1 is not loaded again.
	if err := m.LoadChunk(ctx, c1); err != nil {
		t.Fatal(err)
	}
	for _, idx := range c1.Indexes {
		if n, _ := l.counts(idx); n != 1 {
			t.Errorf("genome #%d loaded %d times", idx, n)
		}
	}
	for _, c := range chunks[1:] {
		if c != c1 {
			m.LoadChunk(ctx, c)
		}
		m.UnloadChunk(c)
	}
	if st := dev.Stats(); st.Allocated != base.Allocated {
		t.Errorf("at the end: %d bytes allocated, want %d", st.Allocated, base.Allocated)
	}
}

func TestNoPrefetch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prefetch bool
		fixed    int64 // leaves a peak budget with room for one chunk, not two
	}{
		{"off in the config", false, 4 * MiB},
		{"no room in the plan", true, 40 * MiB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := newDevice(t, 64*MiB)
			base := fixedBlock(t, dev, tc.fixed)
			items := mixed()
			l := newLoader(dev, items)
			m := staging.NewManager(stagedConfig(6*MiB, tc.prefetch), dev, zerolog.Nop())
			plan, err := m.PrepareForEval(items, base.Allocated, l.load)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Prefetch || len(plan.Chunks) != 4 {
				t.Fatalf("plan: prefetch %v, %d chunks", plan.Prefetch, len(plan.Chunks))
			}
			var prev *staging.Chunk
			for c := range m.IterEvalChunks(context.Background()) {
				if err := m.LoadChunk(context.Background(), c); err != nil {
					t.Fatal(err)
				}
				if got, want := dev.Stats().Allocated, base.Allocated+chunkModel(l.sizes, c); got != want {
					t.Errorf("chunk %d: %d bytes allocated, want this chunk's alone: %d", c.Index, got, want)
				}
				if prev != nil {
					last := l.eventIndex(fmt.Sprint("unload ", prev.Indexes[len(prev.Indexes)-1]))
					first := l.eventIndex(fmt.Sprint("load ", c.Indexes[0]))
					if last < 0 || first < last {
						t.Errorf("chunk %d loaded (event %d) before chunk %d was unloaded (event %d)", c.Index, first, prev.Index, last)
					}
				}
				m.UnloadChunk(c)
				prev = c
			}
		})
	}
}

// TestResidentLoadsAtPrepare: in gpu_resident mode every genome is on the
// device when PrepareForEval returns, and LoadChunk loads nothing more.
func TestResidentLoadsAtPrepare(t *testing.T) {
	dev := newDevice(t, 64*MiB)
	base := fixedBlock(t, dev, 4*MiB)
	items := uniform(10, MiB, MiB)
	l := newLoader(dev, items)
	m := staging.NewManager(staging.DefaultConfig(), dev, zerolog.Nop())
	plan, err := m.PrepareForEval(items, base.Allocated, l.load)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Mode != staging.GPUResident || len(plan.Chunks) != 1 {
		t.Fatalf("mode %s, %d chunks", plan.Mode, len(plan.Chunks))
	}
	if got, want := dev.Stats().Allocated, base.Allocated+10*MiB; got != want || len(l.loads) != 10 {
		t.Fatalf("after PrepareForEval: %d bytes allocated and %d genomes loaded, want %d and 10", got, len(l.loads), want)
	}
	if _, exposed := m.LoadTimes(); exposed <= 0 {
		t.Errorf("the resident load is not counted as exposed load time")
	}
	for c := range m.IterEvalChunks(context.Background()) {
		if err := m.LoadChunk(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if len(c.Indexes) != 10 {
			t.Errorf("resident chunk of %d genomes", len(c.Indexes))
		}
		m.UnloadChunk(c)
	}
	for _, it := range items {
		if n, u := l.counts(it.Index); n != 1 || u != 1 {
			t.Errorf("genome #%d loaded %d, unloaded %d times", it.Index, n, u)
		}
	}
	if st := dev.Stats(); st.Allocated != base.Allocated || st.Reserved != base.Reserved {
		t.Errorf("allocated %d reserved %d, want %d and %d", st.Allocated, st.Reserved, base.Allocated, base.Reserved)
	}
}

// TestLoadOOM: memory the plan was not told about (another process's, say)
// makes one genome's load run out of the arena for real. Its error reaches
// the caller through Chunk.Model and matches vram.ErrOutOfMemory; the
// genomes after it in the chunk still load.
func TestLoadOOM(t *testing.T) {
	dev := newDevice(t, 32*MiB)
	base := fixedBlock(t, dev, 25*MiB) // not counted in the plan's fixed memory
	items := []staging.Item{
		{Index: 0, Model: 2 * MiB, Act: MiB},
		{Index: 1, Model: 5 * MiB, Act: MiB},
		{Index: 2, Model: 2 * MiB, Act: MiB},
		{Index: 3, Model: 2 * MiB, Act: MiB},
	}
	l := newLoader(dev, items)
	m := staging.NewManager(stagedConfig(16*MiB, true), dev, zerolog.Nop())
	plan, err := m.PrepareForEval(items, 0, l.load)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Chunks) != 1 {
		t.Fatalf("%d chunks, want 1", len(plan.Chunks))
	}
	for c := range m.IterEvalChunks(context.Background()) {
		if err := m.LoadChunk(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		_, err := c.Model(1)
		var oom *vram.OOMError
		if !errors.Is(err, vram.ErrOutOfMemory) || !staging.IsOOM(err) || !errors.As(err, &oom) || oom.Injected {
			t.Errorf("genome #1: %v, want the arena's out-of-memory", err)
		}
		for _, idx := range []int{0, 2, 3} {
			if r, err := c.Model(idx); err != nil || r == nil || !l.isLive(idx) {
				t.Errorf("genome #%d: %v", idx, err)
			}
		}
		m.UnloadChunk(c)
	}
	if st := dev.Stats(); st.Allocated != base.Allocated || st.OOMs != 1 {
		t.Errorf("allocated %d (want %d), %d OOMs (want 1)", st.Allocated, base.Allocated, st.OOMs)
	}
}

// TestCancelDuringIteration: a cancelled context ends the iteration; the
// chunk prefetched ahead of the one in hand is unloaded, and later chunks
// are never loaded.
func TestCancelDuringIteration(t *testing.T) {
	dev := newDevice(t, 64*MiB)
	base := fixedBlock(t, dev, 4*MiB)
	items := mixed()
	l := newLoader(dev, items)
	l.loaded = make(chan int, len(items))
	m := staging.NewManager(stagedConfig(6*MiB, true), dev, zerolog.Nop())
	plan, err := m.PrepareForEval(items, base.Allocated, l.load)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var yielded []int
	for c := range m.IterEvalChunks(ctx) {
		yielded = append(yielded, c.Index)
		if err := m.LoadChunk(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Wait until chunk 1 is prefetched, then stop.
		for range len(c.Indexes) + len(plan.Chunks[1].Items) {
			<-l.loaded
		}
		cancel()
		m.UnloadChunk(c)
	}
	if !slices.Equal(yielded, []int{0}) {
		t.Errorf("chunks yielded %v, want [0]", yielded)
	}
	if st := dev.Stats(); st.Allocated != base.Allocated || st.Reserved != base.Reserved {
		t.Errorf("after the cancelled loop: allocated %d reserved %d, want %d and %d (the prefetched chunk left on the device?)",
			st.Allocated, st.Reserved, base.Allocated, base.Reserved)
	}
	if len(l.live) != 0 {
		t.Errorf("genomes left on the device: %v", l.live)
	}
	if len(l.loads) != len(plan.Chunks[0].Items)+len(plan.Chunks[1].Items) {
		t.Errorf("%d genomes loaded, want chunks 0 and 1 only", len(l.loads))
	}

	// A break out of the loop does the same.
	l = newLoader(dev, items)
	l.loaded = make(chan int, len(items))
	if _, err := m.PrepareForEval(items, base.Allocated, l.load); err != nil {
		t.Fatal(err)
	}
	for c := range m.IterEvalChunks(context.Background()) {
		m.LoadChunk(context.Background(), c)
		for range len(c.Indexes) + len(plan.Chunks[1].Items) {
			<-l.loaded
		}
		m.UnloadChunk(c)
		break
	}
	if st := dev.Stats(); st.Allocated != base.Allocated {
		t.Errorf("after a break: allocated %d, want %d", st.Allocated, base.Allocated)
	}
}

func TestManagerEmptyAndOne(t *testing.T) {
	dev := newDevice(t, 64*MiB)
	for _, tc := range []struct {
		name  string
		cfg   staging.Config
		items []staging.Item
	}{
		{"empty resident", staging.DefaultConfig(), nil},
		{"empty staged", stagedConfig(6*MiB, true), nil},
		{"one resident", staging.DefaultConfig(), uniform(1, 3*MiB, MiB)},
		{"one staged", stagedConfig(6*MiB, true), uniform(1, 3*MiB, MiB)},
		{"one larger than a chunk", stagedConfig(2*MiB, true), uniform(1, 3*MiB, MiB)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoader(dev, tc.items)
			m := staging.NewManager(tc.cfg, dev, zerolog.Nop())
			plan, err := m.PrepareForEval(tc.items, 0, l.load)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Prefetch || len(plan.Chunks) != len(tc.items) {
				t.Errorf("plan: prefetch %v, %d chunks", plan.Prefetch, len(plan.Chunks))
			}
			n := 0
			for c := range m.IterEvalChunks(context.Background()) {
				n++
				if err := m.LoadChunk(context.Background(), c); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Model(0); err != nil {
					t.Error(err)
				}
				m.UnloadChunk(c)
			}
			if n != len(tc.items) || len(l.loads) != len(tc.items) || len(l.unloads) != len(tc.items) {
				t.Errorf("%d chunks, %d loads, %d unloads; want %d each", n, len(l.loads), len(l.unloads), len(tc.items))
			}
			if st := dev.Stats(); st.Allocated != 0 {
				t.Errorf("%d bytes left allocated", st.Allocated)
			}
		})
	}
}
