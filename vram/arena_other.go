//go:build !linux

package vram

import (
	"fmt"
	"math"
)

// mapArena allocates the arena as a Go byte slice of exactly its capacity
// where anonymous mappings are not wired up: the memory is committed as it
// is touched on most systems, and it is not given back when segments are
// released. The extra address space of the Linux arena (factor) is not
// worth committing memory for.
func mapArena(capacity int64, factor int64) (mem []byte, release func([]byte), unmap func([]byte) error, err error) {
	if capacity > math.MaxInt {
		return nil, nil, nil, fmt.Errorf("%d bytes do not fit this platform's address space", capacity)
	}
	return make([]byte, capacity), nil, nil, nil
}
