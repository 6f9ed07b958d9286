//go:build cudaemu && !cuda

package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/vram"
)

// pinnedShort is the emulated driver with page-locked memory for only
// `left` more allocations, then CUDA_ERROR_OUT_OF_MEMORY's twin.
type pinnedShort struct {
	*emuDriver
	left int
}

func (p *pinnedShort) hostAlloc(n int64) (unsafe.Pointer, error) {
	if p.left == 0 {
		return nil, &emuOOM{size: n}
	}
	p.left--
	return p.emuDriver.hostAlloc(n)
}

// TestOpenOutOfMemory: a backend whose forwards' buffers cannot all be
// made fails to open with the typed out-of-memory, naming the forward.
func TestOpenOutOfMemory(t *testing.T) {
	_, err := newBackend(evaluator.BackendOptions{Parallel: 4}, func() (driver, Info, error) {
		d, info, err := openEmu(64 << 20)
		if err != nil {
			return nil, info, err
		}
		return &pinnedShort{emuDriver: d, left: 2}, info, nil
	})
	if !errors.Is(err, vram.ErrOutOfMemory) || !strings.Contains(err.Error(), "forward 3 of 4") {
		t.Fatalf("open with pinned memory for 2 forwards of 4: %v, want an out-of-memory error naming forward 3", err)
	}
	b, err := newBackend(evaluator.BackendOptions{}, func() (driver, Info, error) { return openEmu(64 << 20) })
	if err != nil {
		t.Fatal(err)
	}
	if b.Info().Streams != DefaultParallel || b.PreferredParallel() != DefaultParallel || evaluator.PreferredParallel(b) != DefaultParallel {
		t.Errorf("streams %d, preferred %d, want %d", b.Info().Streams, b.PreferredParallel(), DefaultParallel)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
}
