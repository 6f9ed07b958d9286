//go:build linux

package vram

import "testing"

// TestArenaReturnsPages: a released segment's pages go back to the OS
// (MADV_DONTNEED) and read as zeros; a page shared with a live neighbour
// keeps its data.
func TestArenaReturnsPages(t *testing.T) {
	r, err := newArena("test", 8*mib)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	a, _ := r.Reserve(2 * mib)
	b, _ := r.Reserve(1536) // shares a page with what follows it
	c, _ := r.Reserve(2 * mib)
	for _, off := range []uint64{a, b, c} {
		r.mem[off] = 0xff
	}
	r.mem[c+uint64(mib)] = 0xff
	r.Release(a, 2*mib)
	r.Release(c, 2*mib)
	if r.mem[a] != 0 || r.mem[c+uint64(mib)] != 0 {
		t.Fatal("released pages still hold data")
	}
	if r.mem[b] != 0xff || r.mem[c] != 0xff {
		// c's first page is shared with b, which is live: it must stay.
		t.Fatalf("live data lost: %x %x", r.mem[b], r.mem[c])
	}
}
