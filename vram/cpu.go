package vram

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// ErrClosed is returned for work asked of a closed device.
var ErrClosed = errors.New("device closed")

// CPUOptions configure a CPU device.
type CPUOptions struct {
	// MemoryBytes is the arena's capacity (memory_bytes in the config);
	// 0 means DefaultCPUMemory().
	MemoryBytes int64
	// Faults injects allocation failures (see FaultOptions).
	Faults FaultOptions
}

// CPUDevice is a device whose memory is an arena of host memory with a
// fixed capacity. Weights and activations live in it, served by a caching
// Allocator; an allocation that does not fit fails with an *OOMError because
// the arena really ran out, as it would on a GPU. Blocks are offsets into
// the arena (Block.Addr), and Bytes, Float32s and Uint16s are views of them
// for the CPU kernels. A CPUDevice is safe for concurrent use.
type CPUDevice struct {
	arena  *arena
	alloc  *Allocator
	closed atomic.Bool
}

var _ Device = (*CPUDevice)(nil)

// NewCPUDevice maps the arena and returns the device. Close it to unmap.
func NewCPUDevice(opts CPUOptions) (*CPUDevice, error) {
	size := opts.MemoryBytes
	if size == 0 {
		size = DefaultCPUMemory()
	}
	if size < 0 {
		return nil, fmt.Errorf("cpu device: memory_bytes %d: want a positive size, or 0 for the default", size)
	}
	if err := opts.Faults.Validate(); err != nil {
		return nil, fmt.Errorf("cpu device: %w", err)
	}
	r, err := newArena("cpu", size)
	if err != nil {
		return nil, err
	}
	return &CPUDevice{arena: r, alloc: NewAllocator(r, AllocatorOptions{Faults: opts.Faults})}, nil
}

// Name is "cpu".
func (d *CPUDevice) Name() string { return "cpu" }

// Alloc returns a block of at least size bytes from the arena (see
// Allocator.Alloc). After Close it fails with ErrClosed.
func (d *CPUDevice) Alloc(size int64) (*Block, error) {
	if d.closed.Load() {
		return nil, fmt.Errorf("cpu: Alloc(%d): %w", size, ErrClosed)
	}
	return d.alloc.Alloc(size)
}

// Free returns a block to the allocator's cache.
func (d *CPUDevice) Free(b *Block) { d.alloc.Free(b) }

// EmptyCache returns the cached segments that hold no live block to the
// arena, whose pages go back to the OS.
func (d *CPUDevice) EmptyCache() { d.alloc.EmptyCache() }

// Stats reports the allocator's figures.
func (d *CPUDevice) Stats() Stats { return d.alloc.Stats() }

// ResetPeak sets the peak figures to the current ones.
func (d *CPUDevice) ResetPeak() { d.alloc.ResetPeak() }

// MemInfo is the arena's capacity and what of it no segment holds.
func (d *CPUDevice) MemInfo() (total, free int64) { return d.arena.MemInfo() }

// LargestFree is the largest range of the arena no segment holds: the
// largest segment the allocator could still reserve.
func (d *CPUDevice) LargestFree() int64 { return d.arena.largestFree() }

// Allocator is the device's caching allocator.
func (d *CPUDevice) Allocator() *Allocator { return d.alloc }

// CopyIn copies src into the block at byte offset off.
func (d *CPUDevice) CopyIn(dst *Block, off int64, src []byte) error {
	v, err := d.span(dst, off, len(src), "CopyIn")
	if err != nil {
		return err
	}
	copy(v, src)
	return nil
}

// CopyOut copies from the block at byte offset off into dst.
func (d *CPUDevice) CopyOut(dst []byte, src *Block, off int64) error {
	v, err := d.span(src, off, len(dst), "CopyOut")
	if err != nil {
		return err
	}
	copy(dst, v)
	return nil
}

func (d *CPUDevice) span(b *Block, off int64, n int, op string) ([]byte, error) {
	if d.closed.Load() {
		return nil, fmt.Errorf("cpu: %s: %w", op, ErrClosed)
	}
	if !d.alloc.Owns(b) {
		return nil, fmt.Errorf("cpu: %s: not a live block of this device", op)
	}
	if off < 0 || off > b.Size || int64(n) > b.Size-off {
		return nil, fmt.Errorf("cpu: %s of %d bytes at offset %d: the block at %#x holds %d bytes", op, n, off, b.Addr, b.Size)
	}
	return unsafe.Slice((*byte)(unsafe.Add(d.arena.base, b.Addr+uint64(off))), n), nil
}

// Bytes is the block's memory: a view into the arena, valid until the block
// is freed or the device closed. It panics for a block that is not live on
// this device.
func (d *CPUDevice) Bytes(b *Block) []byte {
	return unsafe.Slice((*byte)(d.view(b)), b.Size)
}

// Float32s is the block's memory as float32s (Size/4 of them), a view like
// Bytes.
func (d *CPUDevice) Float32s(b *Block) []float32 {
	return unsafe.Slice((*float32)(d.view(b)), b.Size/4)
}

// Uint16s is the block's memory as uint16s (Size/2 of them; bfloat16 values
// are stored so), a view like Bytes.
func (d *CPUDevice) Uint16s(b *Block) []uint16 {
	return unsafe.Slice((*uint16)(d.view(b)), b.Size/2)
}

// view checks b and returns its start in the arena. Blocks are aligned to
// MinBlockSize, so every typed view is aligned.
func (d *CPUDevice) view(b *Block) unsafe.Pointer {
	if d.closed.Load() {
		panic("vram: cpu: view of a block of a closed device")
	}
	if !d.alloc.Owns(b) {
		var addr uint64
		if b != nil {
			addr = b.Addr
		}
		panic(fmt.Sprintf("vram: cpu: view of a block that is not live on this device (addr %#x): freed, or from another device", addr))
	}
	return unsafe.Add(d.arena.base, b.Addr)
}

// Close unmaps the arena. Views into it must not be used afterwards. It
// reports blocks still live (a leak) as an error, but unmaps all the same.
// Closing twice does nothing.
func (d *CPUDevice) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	live := d.alloc.Live()
	st := d.alloc.Stats()
	err := d.arena.close()
	if err != nil {
		return fmt.Errorf("cpu: unmapping the arena: %w", err)
	}
	if live > 0 {
		return fmt.Errorf("cpu: closed with %d live blocks (%s) still allocated", live, FormatBytes(st.Allocated))
	}
	return nil
}
