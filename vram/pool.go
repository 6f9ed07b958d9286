package vram

import "sort"

// pool is the set of free blocks of one size class, sorted by size and then
// address, so that the best fit for a request is found by binary search.
// A population's working set is tens to hundreds of blocks; a sorted slice
// beats a tree at that size and allocates nothing in steady state.
type pool struct {
	free []*block
}

// less orders blocks by size, then address.
func less(a, b *block) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return a.addr < b.addr
}

// bestFit returns the smallest free block of at least size bytes (the lowest
// address among equals), or nil.
func (p *pool) bestFit(size int64) *block {
	i := sort.Search(len(p.free), func(i int) bool { return p.free[i].size >= size })
	if i == len(p.free) {
		return nil
	}
	return p.free[i]
}

func (p *pool) index(blk *block) int {
	return sort.Search(len(p.free), func(i int) bool { return !less(p.free[i], blk) })
}

func (p *pool) insert(blk *block) {
	i := p.index(blk)
	p.free = append(p.free, nil)
	copy(p.free[i+1:], p.free[i:])
	p.free[i] = blk
}

func (p *pool) remove(blk *block) {
	i := p.index(blk)
	if i == len(p.free) || p.free[i] != blk {
		panic("vram: allocator pool out of order (internal error)")
	}
	copy(p.free[i:], p.free[i+1:])
	p.free[len(p.free)-1] = nil
	p.free = p.free[:len(p.free)-1]
}

// largest is the size of the largest free block.
func (p *pool) largest() int64 {
	if len(p.free) == 0 {
		return 0
	}
	return p.free[len(p.free)-1].size
}
