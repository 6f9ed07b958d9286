//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/neateval/neateval/vram"
)

// Device is a GPU's memory as vram sees it: vram's caching Allocator, the
// one the CPU device uses, over segments from cuMemAlloc. Alloc and
// EmptyCache run on the worker (they may call the driver); Free, Stats and
// ResetPeak only touch the allocator's books and run on the caller.
type Device struct {
	w     *worker
	src   *source
	alloc *vram.Allocator
}

var _ vram.Device = (*Device)(nil)

// source is the vram.Source over cuMemAlloc and cuMemFree. Its methods run
// on the worker (the allocator calls them from Alloc and EmptyCache, which
// Device runs there). MemInfo returns the figures of the last
// cuMemGetInfo, refreshed after every reserve and release, because the
// allocator also asks from Stats on any goroutine.
type source struct {
	drv   driver
	name  string
	total int64
	free  atomic.Int64

	errMu    sync.Mutex
	firstErr error // the first cuMemFree failure, reported by Close
}

func (s *source) Name() string { return s.name }

func (s *source) Reserve(size int64) (uint64, error) {
	p, err := s.drv.memAlloc(size)
	s.refresh()
	if err != nil {
		return 0, err
	}
	return uint64(p), nil
}

func (s *source) Release(addr uint64, size int64) {
	if err := s.drv.memFree(devptr(addr)); err != nil {
		s.errMu.Lock()
		if s.firstErr == nil {
			s.firstErr = fmt.Errorf("cuMemFree of %s at %#x: %w", vram.FormatBytes(size), addr, err)
		}
		s.errMu.Unlock()
	}
	s.refresh()
}

func (s *source) MemInfo() (total, free int64) { return s.total, s.free.Load() }

// refresh reads the device's free memory; on the worker only.
func (s *source) refresh() {
	if free, _, err := s.drv.memInfo(); err == nil {
		s.free.Store(free)
	}
}

// Name is the GPU's name and index: "NVIDIA H200 (cuda:0)".
func (d *Device) Name() string { return d.src.name }

// Alloc returns a block of at least size bytes of device memory, or an
// error matching vram.ErrOutOfMemory when the device cannot hold it even
// after the allocator's cache is released.
func (d *Device) Alloc(size int64) (*vram.Block, error) {
	var b *vram.Block
	err := d.w.do(func() error {
		var err error
		b, err = d.alloc.Alloc(size)
		return err
	})
	return b, err
}

// allocOnWorker is Alloc for code already running on the worker.
func (d *Device) allocOnWorker(size int64) (*vram.Block, error) { return d.alloc.Alloc(size) }

// Free returns a block to the allocator's cache. The caller must know that
// no work in flight on any stream still uses it.
func (d *Device) Free(b *vram.Block) { d.alloc.Free(b) }

// EmptyCache returns the cached segments that hold no live block to the
// driver (cuMemFree, which waits for the device to be idle).
func (d *Device) EmptyCache() {
	_ = d.w.do(func() error {
		d.alloc.EmptyCache()
		return nil
	})
}

// Stats reports the allocator's figures; Total is the device's memory.
func (d *Device) Stats() vram.Stats { return d.alloc.Stats() }

// ResetPeak sets the peak figures to the current ones.
func (d *Device) ResetPeak() { d.alloc.ResetPeak() }

// MemInfo is the device's total memory and what is free on it now, from
// cuMemGetInfo: memory other processes hold is not free.
func (d *Device) MemInfo() (total, free int64) {
	_ = d.w.do(func() error {
		d.src.refresh()
		return nil
	})
	return d.src.MemInfo()
}

// CopyIn copies src into the block at byte offset off (synchronously).
func (d *Device) CopyIn(dst *vram.Block, off int64, src []byte) error {
	if err := d.span(dst, off, len(src), "CopyIn"); err != nil || len(src) == 0 {
		return err
	}
	return d.w.do(func() error {
		return d.src.drv.htod(devptr(dst.Addr+uint64(off)), unsafe.Pointer(&src[0]), int64(len(src)))
	})
}

// CopyOut copies from the block at byte offset off into dst
// (synchronously).
func (d *Device) CopyOut(dst []byte, src *vram.Block, off int64) error {
	if err := d.span(src, off, len(dst), "CopyOut"); err != nil || len(dst) == 0 {
		return err
	}
	return d.w.do(func() error {
		return d.src.drv.dtoh(unsafe.Pointer(&dst[0]), devptr(src.Addr+uint64(off)), int64(len(dst)))
	})
}

func (d *Device) span(b *vram.Block, off int64, n int, op string) error {
	if !d.alloc.Owns(b) {
		return fmt.Errorf("%s: %s: not a live block of this device", d.src.name, op)
	}
	if off < 0 || off > b.Size || int64(n) > b.Size-off {
		return fmt.Errorf("%s: %s of %d bytes at offset %d: the block at %#x holds %d bytes", d.src.name, op, n, off, b.Addr, b.Size)
	}
	return nil
}
