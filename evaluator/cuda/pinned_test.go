//go:build cuda || cudaemu

package cuda

import (
	"testing"
	"time"

	"github.com/neateval/neateval/evaluator"
)

// TestPinnedPool checks the pool's bound: buffers are reused by size
// class, and a request that would take the pool past its limit waits until
// a buffer comes back.
func TestPinnedPool(t *testing.T) {
	b := newT(t, evaluator.BackendOptions{}).(*Backend)
	pp := newPinnedPool(b.w, b.drv, 256<<10)
	defer pp.close(false)
	x, err := pp.get(100 << 10) // 128 KiB class
	if err != nil {
		t.Fatal(err)
	}
	y, err := pp.get(1) // 64 KiB class
	if err != nil {
		t.Fatal(err)
	}
	if x.size != 128<<10 || y.size != minPinned {
		t.Fatalf("sizes %d and %d, want %d and %d", x.size, y.size, 128<<10, minPinned)
	}
	got := make(chan *pinned)
	go func() {
		z, err := pp.get(100 << 10) // 128 + 64 + 128 KiB > 256 KiB: waits
		if err != nil {
			t.Error(err)
		}
		got <- z
	}()
	select {
	case <-got:
		t.Fatal("a request past the limit did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	pp.put(x)
	z := <-got
	if z != x {
		t.Errorf("the returned 128 KiB buffer was not reused")
	}
	pp.put(y)
	pp.put(z)
	pp.mu.Lock()
	held, idle := pp.held, len(pp.idle)
	pp.mu.Unlock()
	if held != 192<<10 || idle != 2 {
		t.Errorf("held %d bytes in %d idle buffers, want %d in 2", held, idle, 192<<10)
	}
}
