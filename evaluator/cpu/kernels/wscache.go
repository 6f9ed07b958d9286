package kernels

import (
	"sync"
	"sync/atomic"
)

// The workspace functions take the largest workspace over every path, tile
// width and algorithm (up to 3 × 8 × 2 plans of a convolution), and a
// backend asks for each step of every genome several times (the memory
// model's sizing at three batch sizes, then each forward's layout): for a
// small genome that cost as much as its forward on 50 images. They are pure
// functions of their arguments, and the genomes of a population repeat
// shapes, so their answers are kept.

// wsKey is one question to a workspace function.
type wsKey struct {
	s                ConvShape // a dense layer's in and out are C and OC
	b, threads       int
	dense, prepacked bool
}

var (
	wsMemo  sync.Map // wsKey → int
	wsCount atomic.Int64
)

// wsMemoMax bounds the answers kept (a few MB); past it, answers are
// computed and not kept.
const wsMemoMax = 1 << 16

// memoWorkspace returns f(), computed once per key.
func memoWorkspace(k wsKey, f func() int) int {
	if v, ok := wsMemo.Load(k); ok {
		return v.(int)
	}
	n := f()
	if wsCount.Load() < wsMemoMax {
		if _, loaded := wsMemo.LoadOrStore(k, n); !loaded {
			wsCount.Add(1)
		}
	}
	return n
}
