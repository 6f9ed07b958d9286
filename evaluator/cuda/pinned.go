//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/neateval/neateval/vram"
)

// pinned is a buffer of page-locked host memory.
type pinned struct {
	p    unsafe.Pointer
	size int64
}

func (b *pinned) bytes(n int64) []byte { return unsafe.Slice((*byte)(b.p), n) }

// pinnedPool hands out page-locked host buffers for the copies to the
// device: the weights of a genome being loaded, the images of a slice when
// the data set is not cached. A buffer is held from the moment it is filled
// until the stream has copied it, then comes back for reuse; the pool holds
// at most limit bytes (more only for a single request larger than that),
// so what is pinned follows what is in flight, not the population. Getting
// a buffer when the pool is full waits for one to come back.
//
// put may be called from a driver callback: it takes a lock held only
// briefly and never calls the driver.
type pinnedPool struct {
	w     *worker
	drv   driver
	limit int64

	mu     sync.Mutex
	cond   *sync.Cond
	idle   []*pinned // sorted by size
	held   int64     // bytes of all buffers, idle or in use
	closed bool
}

// minPinned is the smallest buffer the pool allocates: small requests share
// a size class, so that buffers are reused rather than allocated.
const minPinned = 64 << 10

func newPinnedPool(w *worker, drv driver, limit int64) *pinnedPool {
	p := &pinnedPool{w: w, drv: drv, limit: limit}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// sizeClass rounds n up to a power of two, at least minPinned.
func sizeClass(n int64) int64 {
	if n <= minPinned {
		return minPinned
	}
	return 1 << bits.Len64(uint64(n-1))
}

// get returns a buffer of at least n bytes. It must not be called on the
// worker.
func (pp *pinnedPool) get(n int64) (*pinned, error) {
	size := sizeClass(n)
	pp.mu.Lock()
	for {
		if pp.closed {
			pp.mu.Unlock()
			return nil, errWorkerClosed
		}
		if i := firstFit(pp.idle, n); i < len(pp.idle) {
			b := pp.idle[i]
			pp.idle = slices.Delete(pp.idle, i, i+1)
			pp.mu.Unlock()
			return b, nil
		}
		if pp.held+size <= pp.limit || pp.held == 0 {
			break
		}
		if len(pp.idle) > 0 {
			// Idle buffers too small for this request: free them to make
			// room.
			victims := pp.idle
			pp.idle = nil
			for _, v := range victims {
				pp.held -= v.size
			}
			pp.mu.Unlock()
			pp.release(victims)
			pp.mu.Lock()
			continue
		}
		pp.cond.Wait()
	}
	pp.held += size
	pp.mu.Unlock()
	var b *pinned
	err := pp.w.do(func() error {
		p, err := pp.drv.hostAlloc(size)
		if err != nil {
			return err
		}
		b = &pinned{p: p, size: size}
		return nil
	})
	if err != nil {
		pp.mu.Lock()
		pp.held -= size
		pp.cond.Broadcast()
		pp.mu.Unlock()
		return nil, fmt.Errorf("pinning %s of host memory: %w", vram.FormatBytes(size), err)
	}
	return b, nil
}

// put returns a buffer to the pool.
func (pp *pinnedPool) put(b *pinned) {
	if b == nil {
		return
	}
	pp.mu.Lock()
	pp.idle = slices.Insert(pp.idle, firstFit(pp.idle, b.size), b)
	pp.cond.Broadcast()
	pp.mu.Unlock()
}

// firstFit is the index of the first buffer of bs (sorted by size) of at
// least n bytes, len(bs) when there is none.
func firstFit(bs []*pinned, n int64) int {
	i, _ := slices.BinarySearchFunc(bs, n, func(b *pinned, n int64) int {
		if b.size < n {
			return -1
		}
		return 1
	})
	return i
}

func (pp *pinnedPool) release(bs []*pinned) {
	_ = pp.w.do(func() error {
		for _, b := range bs {
			_ = pp.drv.hostFree(b.p)
		}
		return nil
	})
}

// close frees the idle buffers, on the worker; every buffer must have come
// back. Waiters fail.
func (pp *pinnedPool) close(onWorker bool) {
	pp.mu.Lock()
	idle := pp.idle
	pp.idle, pp.closed = nil, true
	pp.cond.Broadcast()
	pp.mu.Unlock()
	if onWorker {
		for _, b := range idle {
			_ = pp.drv.hostFree(b.p)
		}
		return
	}
	pp.release(idle)
}
