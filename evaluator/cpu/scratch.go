package cpu

import (
	"sync"
	"unsafe"
)

// A forward's block is allocated from the arena at the size a GPU forward
// of the whole slice needs (the memory model: budgets, the batch
// controller and out-of-memory behave as on a GPU), but the CPU computes
// depth-first in tiles, each using only the first tile's worth of every
// buffer. The caching allocator places each forward's block wherever its
// policy finds room, often on pages no forward touched before, and every
// fresh page is a page fault and a zeroed page: with small validation sets
// that cost, about a millisecond per forward, was most of a small genome's
// time.
//
// So the tiles run in a workspace of their own, laid out like the block
// but for one tile per part (forwardPlan with compact parts), taken from a
// scratch pool that keeps its buffers, and so its committed pages, from
// forward to forward: after the first forwards no page is touched for the
// first time. The block is still allocated, and never touched: its pages
// are never committed. The pool holds at most one buffer per forward in
// flight (fitness_eval_parallel), each the size of the largest workspace it
// served, a few MiB.

// scratchAlign is the alignment of a scratch buffer (planAlign, a cache
// line).
const scratchAlign = planAlign

// scratchPool keeps workspace buffers for reuse.
type scratchPool struct {
	mu   sync.Mutex
	free [][]byte
	out  int // buffers handed out now
	peak int // the most handed out at once
}

// get returns a buffer of at least n bytes, aligned to scratchAlign: the
// smallest free one that holds n, else a new one.
func (p *scratchPool) get(n int64) []byte {
	p.mu.Lock()
	p.out++
	p.peak = max(p.peak, p.out)
	best := -1
	for i, b := range p.free {
		if int64(len(b)) >= n && (best < 0 || len(b) < len(p.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		p.free = append(p.free[:best], p.free[best+1:]...)
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	raw := make([]byte, n+scratchAlign)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (scratchAlign - 1))
	return raw[off : off+int(n) : off+int(n)]
}

// put returns a buffer get gave. The pool keeps no more buffers than have
// been out at once, dropping the smallest: it keeps the largest workspaces,
// and no more of them than forwards run in parallel.
func (p *scratchPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out--
	p.free = append(p.free, b)
	for len(p.free) > p.peak {
		small := 0
		for i, f := range p.free {
			if len(f) < len(p.free[small]) {
				small = i
			}
		}
		p.free = append(p.free[:small], p.free[small+1:]...)
	}
}

// float32s and uint16s are typed views of a scratch buffer.
func float32s(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

func uint16s(b []byte) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}
