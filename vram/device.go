package vram

import (
	"errors"
	"fmt"
)

// DType is the element type a device stores weights and activations in.
// Computation is always float32.
type DType uint8

// The device dtypes.
const (
	Float32 DType = iota
	BFloat16
)

// Size is the number of bytes of one element.
func (d DType) Size() int {
	if d == BFloat16 {
		return 2
	}
	return 4
}

func (d DType) String() string {
	if d == BFloat16 {
		return "bfloat16"
	}
	return "float32"
}

// ParseDType reads "float32" or "bfloat16".
func ParseDType(s string) (DType, error) {
	switch s {
	case "float32":
		return Float32, nil
	case "bfloat16":
		return BFloat16, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (want float32 or bfloat16)", s)
}

// ErrOutOfMemory is the sentinel every device's out-of-memory error matches
// with errors.Is. Only this error makes the VRAMBatchController shrink a
// batch; every other error goes up unchanged.
var ErrOutOfMemory = errors.New("out of memory")

// OOMError is the out-of-memory error of a device: an allocation of
// Requested bytes failed with Free bytes free out of Total.
//
// Free is what the device itself had free (not reserved by the allocator),
// after the allocator released its cache to retry. Allocated and Cached are
// the allocator's live and cached bytes at that moment: cached bytes are free
// to the allocator but could not serve this request (they lie in segments
// that also hold live blocks, or in the other size pool).
type OOMError struct {
	Device    string
	Requested int64
	Free      int64
	Total     int64
	Allocated int64
	Cached    int64
	// Injected is true when the failure was injected by fault injection
	// rather than by the allocator running out.
	Injected bool
}

func (e *OOMError) Error() string {
	s := fmt.Sprintf("%s: out of memory: tried to allocate %s with %s free of %s",
		e.Device, FormatBytes(e.Requested), FormatBytes(e.Free), FormatBytes(e.Total))
	if e.Allocated > 0 || e.Cached > 0 {
		s += fmt.Sprintf(" (%s allocated, %s cached)", FormatBytes(e.Allocated), FormatBytes(e.Cached))
	}
	if e.Injected {
		s += " (injected)"
	}
	return s
}

// Is makes errors.Is(err, ErrOutOfMemory) hold.
func (e *OOMError) Is(target error) bool { return target == ErrOutOfMemory }

// Block is a block of device memory handed out by a device's allocator.
// Addr is the address in the device's address space (an offset in the CPU
// device's arena, a CUdeviceptr on CUDA); Size is the size asked for.
type Block struct {
	Addr uint64
	Size int64
	// alloc is the allocator's bookkeeping; nil for blocks it does not own
	// and after Free.
	alloc *block
	// freed is set by Free, so that a second Free is named a double free.
	freed bool
}

// Device is what the rest of neateval needs of a device's memory.
// Implementations are safe for concurrent use.
type Device interface {
	// Name says which device this is, for logs ("cpu", "NVIDIA H200 (cuda:0)").
	Name() string
	// Alloc returns a block of at least size bytes, or an error that matches
	// ErrOutOfMemory when the device cannot hold it.
	Alloc(size int64) (*Block, error)
	// Free returns a block to the allocator's cache.
	Free(b *Block)
	// EmptyCache returns every cached block that is not live to the device.
	EmptyCache()
	// Stats reports the allocator's figures.
	Stats() Stats
	// ResetPeak sets the peak figures to the current ones.
	ResetPeak()
	// MemInfo is the device's total memory and what is free on it now
	// (outside this process's allocator too, where the device can tell).
	MemInfo() (total, free int64)
	// CopyIn copies src into the block at byte offset off.
	CopyIn(dst *Block, off int64, src []byte) error
	// CopyOut copies from the block at byte offset off into dst.
	CopyOut(dst []byte, src *Block, off int64) error
}

// Stats are a caching allocator's figures, in bytes unless said otherwise.
type Stats struct {
	// Total is the device's capacity.
	Total int64
	// Allocated is the memory of live blocks (rounded sizes); Requested is
	// what their callers asked for.
	Allocated int64
	Requested int64
	// Reserved is the memory the allocator holds from the device: live
	// blocks plus the cache. Reserved ≥ Allocated.
	Reserved int64
	// Cached is Reserved − Allocated: free to this allocator, not to others.
	Cached int64
	// LargestFree is the largest single free extent the allocator could hand
	// out without asking the device (in its cache).
	LargestFree int64
	// Fragmentation is the share of cached bytes that lie outside the largest
	// cached extent: free memory no single request of that size can use.
	Fragmentation float64
	// PeakAllocated and PeakReserved are the highest values since the last
	// ResetPeak.
	PeakAllocated int64
	PeakReserved  int64
	// Counters.
	Allocs       int64 // successful Alloc calls
	Frees        int64
	CacheHits    int64 // allocations served from the cache
	Segments     int64 // segments now reserved from the device
	CacheFlushes int64 // times the cache was released to retry an allocation
	OOMs         int64 // allocations that failed with ErrOutOfMemory
	// InjectedOOMs are the OOMs that fault injection caused (counted in
	// OOMs too).
	InjectedOOMs int64
}

// FormatBytes writes n in binary units with two decimals: "2.00 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	i := -1
	for (f >= unit || f <= -unit) && i < len(units)-1 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.2f %s", f, units[i])
}
