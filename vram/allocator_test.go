package vram

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

func newTestAllocator(t testing.TB, size int64) (*Allocator, *arena) {
	t.Helper()
	r, err := newArena("test", size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.close() })
	return NewAllocator(r, AllocatorOptions{}), r
}

// checkInvariants walks every segment of a and checks the bookkeeping
// against the figures and the arena.
func checkInvariants(t testing.TB, a *Allocator, r *arena) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	var allocated, requested, reserved int64
	inPool := map[*block]bool{}
	for _, p := range []*pool{&a.small, &a.large} {
		for i, blk := range p.free {
			if i > 0 && !less(p.free[i-1], blk) {
				t.Fatalf("pool not sorted at %d", i)
			}
			if blk.allocated {
				t.Fatalf("allocated block %#x in a free pool", blk.addr)
			}
			if (p == &a.small) != blk.seg.small {
				t.Fatalf("block %#x in the wrong pool", blk.addr)
			}
			inPool[blk] = true
		}
	}
	free := 0
	for seg := range a.segs {
		reserved += seg.size
		addr := seg.addr
		var prev *block
		for blk := seg.first; blk != nil; blk = blk.next {
			if blk.addr != addr || blk.seg != seg || blk.prev != prev {
				t.Fatalf("segment %#x: block list broken at %#x", seg.addr, blk.addr)
			}
			if blk.size < MinBlockSize || blk.size%MinBlockSize != 0 {
				t.Fatalf("block %#x has size %d", blk.addr, blk.size)
			}
			if blk.allocated {
				allocated += blk.size
				requested += blk.req
				if blk.user == nil || blk.user.alloc != blk || RoundSize(blk.req) != blk.size {
					t.Fatalf("live block %#x: user %v, req %d, size %d", blk.addr, blk.user, blk.req, blk.size)
				}
			} else {
				free++
				if !inPool[blk] {
					t.Fatalf("free block %#x not in its pool", blk.addr)
				}
				if prev != nil && !prev.allocated {
					t.Fatalf("adjacent free blocks %#x and %#x not coalesced", prev.addr, blk.addr)
				}
			}
			addr += uint64(blk.size)
			prev = blk
		}
		if addr != seg.addr+uint64(seg.size) {
			t.Fatalf("segment %#x: blocks cover %d of %d bytes", seg.addr, addr-seg.addr, seg.size)
		}
	}
	if free != len(inPool) {
		t.Fatalf("%d free blocks in segments, %d in pools", free, len(inPool))
	}
	st := a.st
	if st.Allocated != allocated || st.Requested != requested || st.Reserved != reserved ||
		st.Segments != int64(len(a.segs)) {
		t.Fatalf("figures %+v; walked allocated %d requested %d reserved %d segments %d",
			st, allocated, requested, reserved, len(a.segs))
	}
	if st.Reserved < st.Allocated || st.PeakAllocated < st.Allocated || st.PeakReserved < st.Reserved {
		t.Fatalf("figures inconsistent: %+v", st)
	}
	if _, rfree := r.MemInfo(); r.capacity-rfree != reserved {
		t.Fatalf("arena has %d reserved, allocator %d", r.capacity-rfree, reserved)
	}
}

// randomSize draws a request from small, mid (1-10 MiB) and large classes.
func randomSize(rng *rand.Rand) int64 {
	switch rng.IntN(10) {
	case 0, 1:
		return 1*mib + rng.Int64N(9*mib)
	case 2:
		return 10*mib + rng.Int64N(20*mib)
	default:
		return rng.Int64N(300 * kib)
	}
}

func TestAllocatorRandomInvariants(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, r := newTestAllocator(t, 96*mib)
			rng := rand.New(rand.NewPCG(seed, 7))
			type live struct {
				b   *Block
				tag byte
			}
			var blocks []live
			view := func(b *Block) []byte { return r.mem[b.Addr : b.Addr+uint64(b.Size)] }
			ooms := 0
			for op := range 2000 {
				if len(blocks) > 0 && rng.IntN(5) < 2 {
					i := rng.IntN(len(blocks))
					l := blocks[i]
					if v := view(l.b); len(v) > 0 && (v[0] != l.tag || v[len(v)-1] != l.tag) {
						t.Fatalf("op %d: block %#x overwritten", op, l.b.Addr)
					}
					a.Free(l.b)
					blocks[i] = blocks[len(blocks)-1]
					blocks = blocks[:len(blocks)-1]
				} else if rng.IntN(50) == 0 {
					a.EmptyCache()
				} else {
					size := randomSize(rng)
					b, err := a.Alloc(size)
					if err != nil {
						var oe *OOMError
						if !errors.As(err, &oe) || !errors.Is(err, ErrOutOfMemory) || oe.Requested != size {
							t.Fatalf("op %d: Alloc(%d): %v", op, size, err)
						}
						ooms++
					} else {
						tag := byte(op)
						if v := view(b); len(v) > 0 {
							v[0], v[len(v)-1] = tag, tag
						}
						blocks = append(blocks, live{b, tag})
					}
				}
				checkInvariants(t, a, r)
			}
			for _, l := range blocks {
				a.Free(l.b)
			}
			checkInvariants(t, a, r)
			st := a.Stats()
			if st.Allocated != 0 || st.Requested != 0 || st.Allocs != st.Frees || int(st.OOMs) != ooms {
				t.Fatalf("after freeing everything: %+v (ooms seen %d)", st, ooms)
			}
			a.EmptyCache()
			st = a.Stats()
			if st.Reserved != 0 || st.Segments != 0 || st.Cached != 0 {
				t.Fatalf("after EmptyCache: %+v", st)
			}
			if _, free := r.MemInfo(); free != r.capacity {
				t.Fatalf("arena has %d of %d free after EmptyCache", free, r.capacity)
			}
			if len(r.free) != 1 {
				t.Fatalf("arena extents not coalesced: %v", r.free)
			}
			t.Logf("seed %d: %d allocs, %d OOMs, %d cache hits, %d flushes", seed, st.Allocs, st.OOMs, st.CacheHits, st.CacheFlushes)
		})
	}
}

func TestAllocatorReusesCache(t *testing.T) {
	a, r := newTestAllocator(t, 32*mib)
	b1, err := a.Alloc(100 * kib)
	if err != nil {
		t.Fatal(err)
	}
	addr := b1.Addr
	a.Free(b1)
	b2, err := a.Alloc(90 * kib)
	if err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if b2.Addr != addr || st.CacheHits != 1 || st.Segments != 1 || st.Reserved != smallSegment {
		t.Fatalf("second allocation at %#x (first %#x), stats %+v", b2.Addr, addr, st)
	}
	if st.Allocated != RoundSize(90*kib) || st.Requested != 90*kib || st.Cached != smallSegment-st.Allocated {
		t.Fatalf("stats %+v", st)
	}
	a.Free(b2)
	checkInvariants(t, a, r)
}

func TestAllocatorSegmentPolicy(t *testing.T) {
	tests := []struct {
		name     string
		arena    int64
		size     int64
		reserved int64
	}{
		{"small request takes a 2 MiB segment", 64 * mib, 4 * kib, 2 * mib},
		{"request of exactly 1 MiB is small", 64 * mib, 1 * mib, 2 * mib},
		{"mid request takes a 20 MiB segment", 2 << 30, 3 * mib, 20 * mib},
		{"mid request is rounded to 2 MiB on a small device", 1 << 30, 3 * mib, 4 * mib},
		{"large request is rounded to 2 MiB", 2 << 30, 11*mib + 1, 12 * mib},
		{"large request on a small device", 64 * mib, 11*mib + 1, 12 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, r := newTestAllocator(t, tt.arena)
			b, err := a.Alloc(tt.size)
			if err != nil {
				t.Fatal(err)
			}
			if st := a.Stats(); st.Reserved != tt.reserved || st.Allocated != RoundSize(tt.size) {
				t.Fatalf("reserved %d allocated %d, want %d and %d", st.Reserved, st.Allocated, tt.reserved, RoundSize(tt.size))
			}
			a.Free(b)
			checkInvariants(t, a, r)
		})
	}
}

func TestAllocatorCoalescesAndFragmentation(t *testing.T) {
	a, r := newTestAllocator(t, 16*mib)
	var bs [4]*Block
	for i := range bs {
		b, err := a.Alloc(512 * kib)
		if err != nil {
			t.Fatal(err)
		}
		bs[i] = b
	}
	if st := a.Stats(); st.Segments != 1 || st.Cached != 0 || st.Fragmentation != 0 {
		t.Fatalf("four 512 KiB blocks should fill one 2 MiB segment: %+v", st)
	}
	// Free the first and the third: two separate 512 KiB holes.
	a.Free(bs[0])
	a.Free(bs[2])
	checkInvariants(t, a, r)
	st := a.Stats()
	if st.Cached != 1*mib || st.LargestFree != 512*kib || st.Fragmentation != 0.5 {
		t.Fatalf("two holes: cached %d largest %d fragmentation %v", st.Cached, st.LargestFree, st.Fragmentation)
	}
	// A 1 MiB request cannot use the holes: a new segment.
	big, err := a.Alloc(1 * mib)
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Segments != 2 {
		t.Fatalf("segments %d, want 2", st.Segments)
	}
	a.Free(big)
	// Freeing the second joins three blocks into 1.5 MiB.
	a.Free(bs[1])
	checkInvariants(t, a, r)
	if st := a.Stats(); st.LargestFree != 2*mib {
		// the new segment is a free 2 MiB block now
		t.Fatalf("largest free %d, want 2 MiB", st.LargestFree)
	}
	a.Free(bs[3])
	checkInvariants(t, a, r)
	st = a.Stats()
	if st.Cached != 4*mib || st.LargestFree != 2*mib || st.Fragmentation != 0.5 {
		t.Fatalf("two whole free segments: %+v", st)
	}
	if len(a.small.free) != 2 {
		t.Fatalf("small pool has %d free blocks, want 2 whole segments", len(a.small.free))
	}
	a.EmptyCache()
	if st := a.Stats(); st.Reserved != 0 || st.Fragmentation != 0 {
		t.Fatalf("after EmptyCache: %+v", st)
	}
}

func TestEmptyCacheKeepsLiveBlocks(t *testing.T) {
	a, r := newTestAllocator(t, 128*mib)
	small, _ := a.Alloc(64 * kib)
	large, _ := a.Alloc(12 * mib)
	tmp, _ := a.Alloc(16 * mib)
	if small == nil || large == nil || tmp == nil {
		t.Fatal("allocation failed")
	}
	r.mem[small.Addr] = 1
	r.mem[large.Addr+uint64(large.Size)-1] = 2
	a.Free(tmp)
	before := a.Stats()
	a.EmptyCache()
	after := a.Stats()
	checkInvariants(t, a, r)
	if after.Reserved != before.Reserved-16*mib || after.Allocated != before.Allocated || after.Segments != 2 {
		t.Fatalf("EmptyCache released %d bytes, want the 16 MiB segment only: before %+v after %+v",
			before.Reserved-after.Reserved, before, after)
	}
	if r.mem[small.Addr] != 1 || r.mem[large.Addr+uint64(large.Size)-1] != 2 {
		t.Fatal("EmptyCache touched live memory")
	}
	a.Free(small)
	a.Free(large)
}

func TestAllocatorFlushesCacheAndRetries(t *testing.T) {
	a, r := newTestAllocator(t, 24*mib)
	b, err := a.Alloc(12 * mib)
	if err != nil {
		t.Fatal(err)
	}
	a.Free(b) // 12 MiB cached, 12 MiB free in the arena
	b, err = a.Alloc(16 * mib)
	if err != nil {
		t.Fatalf("16 MiB should fit once the cache is released: %v", err)
	}
	st := a.Stats()
	if st.CacheFlushes != 1 || st.OOMs != 0 || st.Reserved != 16*mib {
		t.Fatalf("stats %+v", st)
	}
	// Now nothing is cached: a request that cannot fit fails without a flush.
	_, err = a.Alloc(16 * mib)
	var oe *OOMError
	if !errors.As(err, &oe) || oe.Requested != 16*mib || oe.Free != 8*mib || oe.Total != 24*mib ||
		oe.Allocated != 16*mib || oe.Injected {
		t.Fatalf("got %v (%+v)", err, oe)
	}
	if st := a.Stats(); st.CacheFlushes != 1 || st.OOMs != 1 {
		t.Fatalf("stats %+v", st)
	}
	a.Free(b)
	checkInvariants(t, a, r)
}

func TestAllocatorMisusePanics(t *testing.T) {
	a, _ := newTestAllocator(t, 8*mib)
	other, _ := newTestAllocator(t, 8*mib)
	mustPanic := func(name, want string, f func()) {
		t.Helper()
		defer func() {
			p := recover()
			msg, _ := p.(string)
			if !strings.HasPrefix(msg, "vram: ") || !strings.Contains(msg, want) {
				t.Errorf("%s: panic %q, want one with %q", name, p, want)
			}
		}()
		f()
	}
	b, _ := a.Alloc(100)
	a.Free(b)
	mustPanic("double free", "double free", func() { a.Free(b) })
	mustPanic("foreign block", "did not hand out", func() { a.Free(&Block{Addr: 0, Size: 100}) })
	c, _ := other.Alloc(100)
	mustPanic("other allocator's block", "did not hand out", func() { a.Free(c) })
	other.Free(c)
	if _, err := a.Alloc(-1); err == nil || errors.Is(err, ErrOutOfMemory) {
		t.Errorf("Alloc(-1): %v, want a plain error", err)
	}
}

func TestAllocatorConcurrent(t *testing.T) {
	a, r := newTestAllocator(t, 256*mib)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			var mine []*Block
			for range 400 {
				if len(mine) > 0 && rng.IntN(2) == 0 {
					i := rng.IntN(len(mine))
					a.Free(mine[i])
					mine = append(mine[:i], mine[i+1:]...)
					continue
				}
				if b, err := a.Alloc(randomSize(rng) / 4); err == nil {
					mine = append(mine, b)
				}
			}
			for _, b := range mine {
				a.Free(b)
			}
		})
	}
	wg.Wait()
	checkInvariants(t, a, r)
	if st := a.Stats(); st.Allocated != 0 || st.Allocs != st.Frees {
		t.Fatalf("after concurrent use: %+v", st)
	}
}

func TestArenaReleaseCoalesces(t *testing.T) {
	r, err := newArena("test", 10*mib)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	var offs []uint64
	for range 5 {
		off, err := r.Reserve(2 * mib)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	var oe *OOMError
	if _, err := r.Reserve(512); !errors.As(err, &oe) || oe.Free != 0 || oe.Total != 10*mib {
		t.Fatalf("full arena: %v", err)
	}
	for _, i := range []int{1, 3, 2, 0, 4} {
		r.Release(offs[i], 2*mib)
	}
	if len(r.free) != 1 || r.free[0] != (extent{0, r.span}) {
		t.Fatalf("extents %v", r.free)
	}
	defer func() {
		if p := recover(); p == nil || !strings.HasPrefix(fmt.Sprint(p), "vram: ") {
			t.Fatalf("releasing a free range: panic %v", p)
		}
	}()
	r.Release(offs[0], 2*mib)
}

// TestArenaIsABudget: like a GPU, the arena fits a segment whenever enough
// bytes are free, however the free bytes lie.
func TestArenaIsABudget(t *testing.T) {
	r, err := newArena("test", 10*mib)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if r.span < 2*r.capacity {
		t.Skipf("the arena got %d bytes of address space for %d: no room to place segments freely", r.span, r.capacity)
	}
	a, _ := r.Reserve(4 * mib)
	b, _ := r.Reserve(2 * mib)
	c, err := r.Reserve(4 * mib)
	if err != nil {
		t.Fatal(err)
	}
	r.Release(a, 4*mib)
	r.Release(c, 4*mib)
	if r.largestFree() != 8*mib {
		t.Fatalf("largest free %d, want 8 MiB", r.largestFree())
	}
	d, err := r.Reserve(8 * mib)
	if err != nil {
		t.Fatalf("8 MiB free in two pieces: %v", err)
	}
	if _, err := r.Reserve(512); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("over budget: %v", err)
	}
	r.Release(b, 2*mib)
	r.Release(d, 8*mib)
	if total, free := r.MemInfo(); total != 10*mib || free != 10*mib {
		t.Fatalf("MemInfo %d/%d", free, total)
	}
}

// TestAllocatorKeepsLargeSegmentsWhole: a small request is not cut from a
// much larger cached segment, so a later request of that size finds it.
func TestAllocatorKeepsLargeSegmentsWhole(t *testing.T) {
	t.Run("room on the device", func(t *testing.T) {
		a, r := newTestAllocator(t, 64*mib)
		big, _ := a.Alloc(40 * mib)
		a.Free(big)
		small, err := a.Alloc(10 * mib)
		if err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.Segments != 2 || st.Reserved != 50*mib || st.CacheHits != 0 {
			t.Fatalf("10 MiB should take a segment of its own: %+v", st)
		}
		big, err = a.Alloc(40 * mib)
		if err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.CacheHits != 1 || st.Segments != 2 {
			t.Fatalf("40 MiB should reuse the cached segment: %+v", st)
		}
		a.Free(big)
		a.Free(small)
		checkInvariants(t, a, r)
	})
	t.Run("device full", func(t *testing.T) {
		a, r := newTestAllocator(t, 48*mib)
		big, _ := a.Alloc(40 * mib)
		a.Free(big)
		small, err := a.Alloc(10 * mib)
		if err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.Segments != 1 || st.Reserved != 10*mib || st.CacheFlushes != 0 {
			t.Fatalf("the cached 40 MiB should make way for 10 MiB: %+v", st)
		}
		a.Free(small)
		checkInvariants(t, a, r)
	})
	t.Run("close fits are reused", func(t *testing.T) {
		a, r := newTestAllocator(t, 64*mib)
		b, _ := a.Alloc(40 * mib)
		a.Free(b)
		b, _ = a.Alloc(36 * mib) // rest 4 MiB: an eighth of 40 MiB or less
		if st := a.Stats(); st.CacheHits != 1 || st.Segments != 1 {
			t.Fatalf("stats %+v", st)
		}
		a.Free(b)
		checkInvariants(t, a, r)
	})
}

// TestAllocatorPrefersWholeSegments: a request that fits both the rest of a
// segment holding a live block and a whole cached segment of about its size
// takes the whole one, so the first can become whole again.
func TestAllocatorPrefersWholeSegments(t *testing.T) {
	a, r := newTestAllocator(t, 64*mib)
	live, _ := a.Alloc(16*mib + 512*kib) // an 18 MiB segment with 1.5 MiB left
	tmp, _ := a.Alloc(1800 * kib)        // a 2 MiB segment
	a.Free(tmp)
	b, err := a.Alloc(1400 * kib)
	if err != nil {
		t.Fatal(err)
	}
	if b.Addr != tmp.Addr {
		t.Fatalf("1.4 MiB went to %#x, want the whole 2 MiB segment at %#x", b.Addr, tmp.Addr)
	}
	a.Free(live)
	if st := a.Stats(); st.LargestFree != 18*mib {
		t.Fatalf("the 18 MiB segment should be whole again: %+v", st)
	}
	a.Free(b)
	checkInvariants(t, a, r)
}

// BenchmarkAllocFree is a forward's steady state: its buffers come from
// the cache.
func BenchmarkAllocFree(b *testing.B) {
	a, _ := newTestAllocator(b, 256*mib)
	sizes := []int64{64 * kib, 3 * mib, 12 * mib, 700 * kib}
	bs := make([]*Block, len(sizes))
	b.ReportAllocs()
	for b.Loop() {
		for i, s := range sizes {
			blk, err := a.Alloc(s)
			if err != nil {
				b.Fatal(err)
			}
			bs[i] = blk
		}
		for _, blk := range bs {
			a.Free(blk)
		}
	}
}
