//go:build linux

package vram

import (
	"fmt"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapArena maps factor × capacity bytes (or less, down to capacity, when
// the kernel refuses) of anonymous private memory with MAP_NORESERVE: the
// kernel commits a page when it is first touched, so the mapping costs only
// what segments really use. Released ranges are given back with
// madvise(MADV_DONTNEED) (they read as zeros when touched again).
//
// The mapping asks for transparent huge pages (MADV_HUGEPAGE: the kernels
// of most distributions give them only where asked): a page fault then
// commits 2 MiB instead of 4 KiB. Loading 10,000 small genomes writes 550
// MB of weights into fresh arena pages, and on a virtual machine the
// 134,000 faults of 4 KiB pages cost more CPU than the copy itself.
// Nothing is committed that is not touched: a forward's block the
// workspace stands in for (see the cpu backend) stays unbacked either way.
func mapArena(capacity int64, factor int64) (mem []byte, release func([]byte), unmap func([]byte) error, err error) {
	if capacity > math.MaxInt {
		return nil, nil, nil, fmt.Errorf("%d bytes do not fit this platform's address space", capacity)
	}
	for f := factor; f >= 1; f /= 2 {
		span := capacity * f
		if span/f != capacity || span > math.MaxInt {
			continue
		}
		mem, err = unix.Mmap(-1, 0, int(span), unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err == nil {
			break
		}
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mmap: %w", err)
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // advice; without it, 4 KiB pages
	page := os.Getpagesize()
	release = func(b []byte) {
		// Only whole pages inside b: a page shared with a neighbouring
		// segment may hold live data. b is a slice of mem, which starts
		// on a page, so cap(b) locates it.
		start := (len(mem) - cap(b)) % page
		lo := 0
		if start != 0 {
			lo = page - start
		}
		hi := len(b) - (start+len(b))%page
		if hi-lo > 0 {
			_ = unix.Madvise(b[lo:hi], unix.MADV_DONTNEED) // advice; a failure only costs memory
		}
	}
	return mem, release, unix.Munmap, nil
}
