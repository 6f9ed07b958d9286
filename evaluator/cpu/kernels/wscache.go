package kernels

import "sync"

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
	wgAlways         bool // the test knobs in force (wgEligible, planConv)
	shift            int
}

var wsMemo struct {
	sync.RWMutex
	m map[wsKey]int
}

// wsMemoMax bounds the answers kept (a few MB); past it, answers are
// computed and not kept.
const wsMemoMax = 1 << 16

// memoWorkspace returns f(), computed once per key.
func memoWorkspace(k wsKey, f func(wsKey) int) int {
	wsMemo.RLock()
	n, ok := wsMemo.m[k]
	wsMemo.RUnlock()
	if ok {
		return n
	}
	n = f(k)
	wsMemo.Lock()
	if wsMemo.m == nil {
		wsMemo.m = make(map[wsKey]int)
	}
	if len(wsMemo.m) < wsMemoMax {
		wsMemo.m[k] = n
	}
	wsMemo.Unlock()
	return n
}
