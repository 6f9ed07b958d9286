package vram

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// arenaAlign is the alignment of every segment in an arena, and the
// granularity of its bookkeeping.
const arenaAlign = MinBlockSize

// extent is a free range [off, off+size) of an arena's address space.
type extent struct{ off, size int64 }

// spanFactor is how much address space an arena maps per byte of capacity.
const spanFactor = 4

// arena is the CPU device's memory: host memory with a fixed capacity, and
// a best-fit range allocator that hands segments of it to the caching
// Allocator. It implements Source; a segment that does not fit fails with an
// *OOMError, because the arena really ran out.
//
// Capacity is a budget of bytes, as on a GPU: its driver maps physical pages
// wherever they are free, so a cudaMalloc succeeds whenever enough memory is
// free, however it lies. To behave the same, the arena maps spanFactor times
// its capacity of address space (MAP_NORESERVE: address space only, no
// memory) and places segments in it, while it never lets more than capacity
// be reserved. Released segments give their pages back to the OS, so the
// arena's resident memory stays within its capacity. Where the larger
// mapping is refused, or off Linux, the arena is exactly its capacity, and
// fragmentation of it can make a segment fail before the budget is spent.
type arena struct {
	name     string
	mem      []byte         // the mapping; nil after close
	base     unsafe.Pointer // &mem[0], for typed views
	capacity int64          // the budget of reserved bytes
	span     int64          // the address space segments are placed in

	mu       sync.Mutex
	free     []extent // of the span, sorted by offset, never adjacent
	reserved int64
	release  func(mem []byte) // returns pages of a released range to the OS
	unmap    func(mem []byte) error
}

// newArena maps an arena of capacity bytes.
func newArena(name string, capacity int64) (*arena, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("%s: arena of %d bytes: want a positive size", name, capacity)
	}
	mem, release, unmap, err := mapArena(capacity, spanFactor)
	if err != nil {
		return nil, fmt.Errorf("%s: mapping an arena of %s: %w", name, FormatBytes(capacity), err)
	}
	r := &arena{name: name, mem: mem, base: unsafe.Pointer(unsafe.SliceData(mem)),
		capacity: capacity, span: int64(len(mem)), release: release, unmap: unmap}
	if usable := r.span / arenaAlign * arenaAlign; usable > 0 {
		r.free = []extent{{0, usable}}
	}
	return r, nil
}

func (r *arena) Name() string { return r.name }

// Reserve takes the smallest free extent that holds size bytes (the lowest
// on ties) and returns its start.
func (r *arena) Reserve(size int64) (uint64, error) {
	if size <= 0 {
		panic(fmt.Sprintf("vram: %s: Reserve(%d): want a positive size", r.name, size))
	}
	need := roundUp(size, arenaAlign)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return 0, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	if need > r.capacity-r.reserved {
		return 0, r.oom(size)
	}
	best := -1
	for i, e := range r.free {
		if e.size >= need && (best < 0 || e.size < r.free[best].size) {
			best = i
		}
	}
	if best < 0 {
		return 0, r.oom(size)
	}
	e := &r.free[best]
	off := e.off
	e.off += need
	e.size -= need
	if e.size == 0 {
		r.free = append(r.free[:best], r.free[best+1:]...)
	}
	r.reserved += need
	return uint64(off), nil
}

// Release returns a reserved range and gives its whole pages back to the
// OS (madvise(MADV_DONTNEED) on Linux), so the arena's footprint follows
// what is reserved rather than its peak.
func (r *arena) Release(addr uint64, size int64) {
	need := roundUp(size, arenaAlign)
	off := int64(addr)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return
	}
	i := sort.Search(len(r.free), func(i int) bool { return r.free[i].off >= off })
	if off < 0 || off+need > r.span/arenaAlign*arenaAlign ||
		(i < len(r.free) && r.free[i].off < off+need) ||
		(i > 0 && r.free[i-1].off+r.free[i-1].size > off) {
		panic(fmt.Sprintf("vram: %s: release of [%#x, %#x), which is not reserved", r.name, off, off+need))
	}
	r.reserved -= need
	if r.release != nil {
		r.release(r.mem[off : off+need])
	}
	merged := extent{off, need}
	if i < len(r.free) && r.free[i].off == off+need { // join the next extent
		merged.size += r.free[i].size
		r.free = append(r.free[:i], r.free[i+1:]...)
	}
	if i > 0 && r.free[i-1].off+r.free[i-1].size == off { // join the previous one
		r.free[i-1].size += merged.size
		return
	}
	r.free = append(r.free, extent{})
	copy(r.free[i+1:], r.free[i:])
	r.free[i] = merged
}

func (r *arena) oom(size int64) *OOMError {
	return &OOMError{Device: r.name, Requested: size, Free: r.capacity - r.reserved, Total: r.capacity}
}

// MemInfo is the arena's capacity and what is not reserved.
func (r *arena) MemInfo() (total, free int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.capacity, r.capacity - r.reserved
}

// largestFree is the largest segment the arena could hand out now.
func (r *arena) largestFree() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m int64
	for _, e := range r.free {
		m = max(m, e.size)
	}
	return min(m, (r.capacity-r.reserved)/arenaAlign*arenaAlign)
}

// close unmaps the region. Views into it must not be used afterwards.
func (r *arena) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return nil
	}
	mem := r.mem
	r.mem, r.free = nil, nil // base stays: views check the device's closed flag first
	if r.unmap != nil {
		return r.unmap(mem)
	}
	return nil
}
