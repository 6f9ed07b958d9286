package vram

import (
	"errors"
	"fmt"
	"sync"
)

// Source is the raw memory a caching Allocator takes segments from: the CPU
// device's arena, or cudaMalloc on a GPU. Its methods are called with the
// allocator's lock held, so a Source serves one allocator at a time.
type Source interface {
	// Name says which device this is, for errors and logs.
	Name() string
	// Reserve takes a segment of exactly size bytes from the device, or
	// returns an error matching ErrOutOfMemory.
	Reserve(size int64) (addr uint64, err error)
	// Release returns a segment Reserve handed out.
	Release(addr uint64, size int64)
	// MemInfo is the device's capacity and what is free on it now.
	MemInfo() (total, free int64)
}

// The allocator's size policy, after PyTorch's CUDA caching allocator
// (c10/cuda/CUDACachingAllocator.cpp).
const (
	// MinBlockSize is the rounding of every request: sizes are rounded up to
	// a multiple of it, and a block is only split when the rest is at least
	// this large.
	MinBlockSize int64 = 512
	// SmallSize is the largest request served from the small pool.
	SmallSize int64 = 1 << 20
	// smallSegment is the segment the small pool reserves at a time.
	smallSegment int64 = 2 << 20
	// largeSegment is the segment reserved for a large request under
	// minLargeAlloc, so that several of them share it, on a device of at
	// least minShareTotal.
	largeSegment  int64 = 20 << 20
	minLargeAlloc int64 = 10 << 20
	minShareTotal int64 = 64 * largeSegment
	// roundLarge is the granularity of the other large segments.
	roundLarge int64 = 2 << 20
)

// RoundSize is the size the allocator gives a request of n bytes: n rounded
// up to a multiple of MinBlockSize (a request of 0 bytes gets MinBlockSize).
func RoundSize(n int64) int64 {
	if n <= 0 {
		return MinBlockSize
	}
	return (n + MinBlockSize - 1) / MinBlockSize * MinBlockSize
}

// AllocatorOptions configure an Allocator. The zero value is a plain caching
// allocator.
type AllocatorOptions struct {
	// Faults makes chosen allocations fail with an injected OOMError.
	Faults FaultOptions
}

// Allocator is a caching allocator over a Source, in the spirit of PyTorch's
// CUDA caching allocator. Requests are rounded up to MinBlockSize and served
// from one of two pools: small (up to SmallSize) and large. Each pool holds
// segments reserved from the source and the free blocks split from them;
// a request takes the best-fitting free block (the smallest that holds it,
// lowest address on ties), splitting off the rest, and a freed block is
// merged with free neighbours and kept for reuse: Reserved stays at least
// Allocated, and the source is only asked again when no cached block fits.
//
// A request is not cut from a whole cached segment when more than an eighth
// of it (and over 2 MiB) would be left over: the allocator reserves a
// segment of the request's size instead, releasing the large one first when
// the device is full. A buffer in a segment cut for a larger one pins it,
// and the next request of that larger size finds no room; PyTorch has the
// same trouble (its max_split_size_mb and expandable segments address it).
//
// Segments: the small pool reserves 2 MiB at a time; a large request under
// 10 MiB reserves a 20 MiB segment that later ones of its kind share; a
// larger one reserves its size rounded up to 2 MiB (the CUDA driver's
// granularity). Unlike PyTorch, the shared 20 MiB segments are only used on
// devices of at least 1.25 GiB (64 of them): on a small device one such
// segment is a large share of the memory, and a buffer pinning it makes a
// smaller batch need more memory than a larger one. There, and whenever the
// 20 MiB segment does not fit, a mid-sized request is rounded to 2 MiB like
// a large one. And large blocks are split whenever the rest is at least
// MinBlockSize (PyTorch keeps up to 1 MiB of slack in the block), so
// Allocated is exactly the sum of rounded requests.
//
// When the source cannot give a segment, the allocator releases every
// cached segment that holds no live block (EmptyCache) and tries once more;
// if that fails too the request fails with an *OOMError.
//
// An Allocator is safe for concurrent use. Freeing a block twice, or a
// block it did not hand out, is a programmer error and panics.
type Allocator struct {
	src    Source
	faults faults
	share  bool // mid-sized requests share 20 MiB segments

	mu    sync.Mutex
	small pool
	large pool
	segs  map[*segment]struct{}
	calls int64 // Alloc calls so far, for fault injection
	st    Stats
	spare []*block // recycled bookkeeping
}

// segment is a region reserved from the source.
type segment struct {
	addr  uint64
	size  int64
	small bool
	owner *Allocator
	first *block // the block at addr; it lives as long as the segment
}

// block is a piece of a segment, free or handed out. The blocks of a
// segment form a list by address (prev, next) that covers it exactly.
type block struct {
	addr       uint64
	size       int64 // rounded
	req        int64 // what the caller asked for, while allocated
	seg        *segment
	prev, next *block
	allocated  bool
	user       *Block // the Block handed out for it, while allocated
}

// NewAllocator returns an allocator over src. It panics if opts.Faults is
// invalid (see FaultOptions.Validate).
func NewAllocator(src Source, opts AllocatorOptions) *Allocator {
	if err := opts.Faults.Validate(); err != nil {
		panic("vram: NewAllocator: " + err.Error())
	}
	total, _ := src.MemInfo()
	return &Allocator{src: src, faults: newFaults(opts.Faults), share: total >= minShareTotal,
		segs: map[*segment]struct{}{}}
}

// Alloc returns a block of at least size bytes. It fails with an *OOMError
// (matching ErrOutOfMemory) when the device cannot hold it even after the
// cache is released, or when fault injection picks this call. A negative
// size is an error. The block's contents are undefined.
func (a *Allocator) Alloc(size int64) (*Block, error) {
	if size < 0 {
		return nil, fmt.Errorf("vram: %s: Alloc(%d): negative size", a.src.Name(), size)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	if a.faults.fail(a.calls) {
		// Fail as the device would: the cache is released to retry, and the
		// retry fails.
		if a.releasableLocked() {
			a.emptyCacheLocked()
			a.st.CacheFlushes++
		}
		a.st.OOMs++
		a.st.InjectedOOMs++
		return nil, a.oomLocked(size, true)
	}
	rounded := RoundSize(size)
	p := &a.large
	if rounded <= SmallSize {
		p = &a.small
	}
	blk, err := a.take(p, rounded)
	if err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			a.st.OOMs++
			return nil, a.oomLocked(size, false)
		}
		return nil, fmt.Errorf("vram: %s: reserving memory for %s: %w", a.src.Name(), FormatBytes(size), err)
	}
	if rest := blk.size - rounded; rest >= MinBlockSize {
		tail := a.newBlock()
		*tail = block{addr: blk.addr + uint64(rounded), size: rest, seg: blk.seg, prev: blk, next: blk.next}
		if blk.next != nil {
			blk.next.prev = tail
		}
		blk.next = tail
		blk.size = rounded
		p.insert(tail)
	}
	b := &Block{Addr: blk.addr, Size: size, alloc: blk}
	blk.allocated, blk.req, blk.user = true, size, b
	a.st.Allocs++
	a.st.Allocated += blk.size
	a.st.Requested += size
	a.st.PeakAllocated = max(a.st.PeakAllocated, a.st.Allocated)
	return b, nil
}

// take returns a free block of at least rounded bytes for pool p, out of
// the pool: a cached one when one fits well, else a new segment.
func (a *Allocator) take(p *pool, rounded int64) (*block, error) {
	small := p == &a.small
	blk := p.bestFit(rounded)
	if blk == nil {
		return a.reserve(small, rounded)
	}
	if !small && !whole(blk) {
		// The best fit lies beside a live block. A whole cached segment of
		// about the right size is better: it leaves this one to become whole
		// again when its neighbour goes.
		for _, w := range p.free[p.index(blk)+1:] {
			if oversized(w.size, rounded) {
				break
			}
			if whole(w) {
				blk = w
				break
			}
		}
	}
	if small || !whole(blk) || !oversized(blk.size, rounded) {
		p.remove(blk)
		a.st.CacheHits++
		return blk, nil
	}
	// The best fit is a whole cached segment much larger than the request:
	// splitting it would pin it with a smaller buffer (and perhaps another
	// in its rest), and a later request of its own size would find no room:
	// the caching allocator's classic fragmentation. Take a segment of the
	// request's size instead, releasing this one if the device is full.
	fresh, err := a.grow(false, rounded)
	if err == nil || !errors.Is(err, ErrOutOfMemory) {
		return fresh, err
	}
	p.remove(blk)
	a.releaseLocked(blk)
	return a.reserve(false, rounded)
}

// reserve takes a new segment for a request of rounded bytes, releasing the
// cache and trying once more if the source is full.
func (a *Allocator) reserve(small bool, rounded int64) (*block, error) {
	blk, err := a.grow(small, rounded)
	if err != nil && errors.Is(err, ErrOutOfMemory) && a.releasableLocked() {
		a.emptyCacheLocked()
		a.st.CacheFlushes++
		blk, err = a.grow(small, rounded)
	}
	return blk, err
}

// whole says whether a free block is a whole segment.
func whole(blk *block) bool { return blk.prev == nil && blk.next == nil }

// grow reserves a segment for a request of rounded bytes and returns it as
// one free block (not in the pool).
func (a *Allocator) grow(small bool, rounded int64) (*block, error) {
	var sizes [2]int64
	switch {
	case small:
		sizes[0] = smallSegment
	case rounded < minLargeAlloc && a.share:
		sizes[0], sizes[1] = largeSegment, roundUp(rounded, roundLarge)
	default:
		sizes[0] = roundUp(rounded, roundLarge)
	}
	var err error
	for _, size := range sizes {
		if size == 0 {
			break
		}
		var addr uint64
		addr, err = a.src.Reserve(size)
		if err != nil {
			if errors.Is(err, ErrOutOfMemory) {
				continue
			}
			return nil, err
		}
		seg := &segment{addr: addr, size: size, small: small, owner: a}
		a.segs[seg] = struct{}{}
		a.st.Segments++
		a.st.Reserved += size
		a.st.PeakReserved = max(a.st.PeakReserved, a.st.Reserved)
		blk := a.newBlock()
		*blk = block{addr: addr, size: size, seg: seg}
		seg.first = blk
		return blk, nil
	}
	return nil, err
}

// Free returns a block to the cache, merging it with free neighbours.
// Freeing nil does nothing. Freeing a block twice, or one this allocator did
// not hand out, panics.
func (a *Allocator) Free(b *Block) {
	if b == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	blk := a.checkLocked(b, "Free")
	p := a.poolOf(blk)
	a.st.Frees++
	a.st.Allocated -= blk.size
	a.st.Requested -= blk.req
	blk.allocated, blk.req, blk.user = false, 0, nil
	b.alloc, b.freed = nil, true
	if prev := blk.prev; prev != nil && !prev.allocated {
		p.remove(prev)
		prev.size += blk.size
		prev.next = blk.next
		if blk.next != nil {
			blk.next.prev = prev
		}
		a.recycle(blk)
		blk = prev
	}
	if next := blk.next; next != nil && !next.allocated {
		p.remove(next)
		blk.size += next.size
		blk.next = next.next
		if next.next != nil {
			next.next.prev = blk
		}
		a.recycle(next)
	}
	p.insert(blk)
}

// checkLocked returns b's bookkeeping, or panics when b is not a live block
// of this allocator.
func (a *Allocator) checkLocked(b *Block, op string) *block {
	if b.freed {
		panic(fmt.Sprintf("vram: %s: %s of a freed block (addr %#x, %d bytes): double free or use after free", a.src.Name(), op, b.Addr, b.Size))
	}
	blk := b.alloc
	if blk == nil || blk.seg == nil || blk.seg.owner != a || blk.user != b || !blk.allocated {
		panic(fmt.Sprintf("vram: %s: %s of a block this allocator did not hand out (addr %#x, %d bytes)", a.src.Name(), op, b.Addr, b.Size))
	}
	return blk
}

// Owns reports whether b is a live block handed out by a. It takes no lock:
// a block's bookkeeping does not change while it is live.
func (a *Allocator) Owns(b *Block) bool {
	if b == nil || b.freed {
		return false
	}
	blk := b.alloc
	return blk != nil && blk.user == b && blk.seg != nil && blk.seg.owner == a
}

// EmptyCache returns every cached segment that holds no live block to the
// source. Live blocks, and the free parts of segments that hold one, stay.
func (a *Allocator) EmptyCache() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.emptyCacheLocked()
}

func (a *Allocator) emptyCacheLocked() {
	for _, p := range []*pool{&a.small, &a.large} {
		kept := p.free[:0]
		for _, blk := range p.free {
			if !whole(blk) {
				kept = append(kept, blk)
				continue
			}
			a.releaseLocked(blk)
		}
		clear(p.free[len(kept):])
		p.free = kept
	}
}

// releaseLocked returns the segment of blk, a free block that covers it
// and is out of its pool, to the source.
func (a *Allocator) releaseLocked(blk *block) {
	seg := blk.seg
	a.src.Release(seg.addr, seg.size)
	delete(a.segs, seg)
	a.st.Segments--
	a.st.Reserved -= seg.size
	a.recycle(blk)
}

// releasableLocked says whether some cached segment holds no live block.
func (a *Allocator) releasableLocked() bool {
	for _, p := range []*pool{&a.small, &a.large} {
		for _, blk := range p.free {
			if whole(blk) {
				return true
			}
		}
	}
	return false
}

// Stats reports the allocator's figures.
func (a *Allocator) Stats() Stats {
	total, _ := a.src.MemInfo()
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.st
	s.Total = total
	s.Cached = s.Reserved - s.Allocated
	s.LargestFree = max(a.small.largest(), a.large.largest())
	if s.Cached > 0 {
		s.Fragmentation = float64(s.Cached-s.LargestFree) / float64(s.Cached)
	}
	return s
}

// ResetPeak sets PeakAllocated and PeakReserved to the current figures.
func (a *Allocator) ResetPeak() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st.PeakAllocated = a.st.Allocated
	a.st.PeakReserved = a.st.Reserved
}

// Live is the number of blocks handed out and not yet freed.
func (a *Allocator) Live() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st.Allocs - a.st.Frees
}

func (a *Allocator) oomLocked(size int64, injected bool) *OOMError {
	total, free := a.src.MemInfo()
	return &OOMError{
		Device: a.src.Name(), Requested: size, Free: free, Total: total,
		Allocated: a.st.Allocated, Cached: a.st.Reserved - a.st.Allocated,
		Injected: injected,
	}
}

func (a *Allocator) poolOf(blk *block) *pool {
	if blk.seg.small {
		return &a.small
	}
	return &a.large
}

func (a *Allocator) newBlock() *block {
	if n := len(a.spare); n > 0 {
		blk := a.spare[n-1]
		a.spare = a.spare[:n-1]
		return blk
	}
	return new(block)
}

// recycle keeps a block's bookkeeping for reuse. A stale *Block that still
// points at it is caught by Free's checks: its user no longer matches.
func (a *Allocator) recycle(blk *block) {
	*blk = block{}
	if len(a.spare) < 1024 {
		a.spare = append(a.spare, blk)
	}
}

// oversized says whether a whole free segment of size bytes is too large to
// split for a request of rounded bytes: the rest would be over an eighth of
// it, and over the large-segment granularity.
func oversized(size, rounded int64) bool {
	rest := size - rounded
	return rest > roundLarge && rest > size/8
}

// minSegment is the smallest segment the allocator reserves for a request
// of size bytes: what the device must have had free for it to succeed.
func minSegment(size int64) int64 {
	rounded := RoundSize(size)
	if rounded <= SmallSize {
		return smallSegment
	}
	return roundUp(rounded, roundLarge)
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
