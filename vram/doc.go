// Package vram manages device memory so that evaluation can run out of it
// and recover: the Device interface, a caching Allocator with its
// statistics, the out-of-memory error, the CPU device whose arena really
// runs out, the memory model (Need), and the BatchController that shrinks a
// genome's batch when memory runs short and grows it back when it can.
//
// # Devices and the allocator
//
// A Device hands out Blocks and says how much memory it has. The CPU device
// is an arena of fixed capacity in host memory; a GPU device (behind the
// cuda build tag) reserves its segments with cudaMalloc. Both serve blocks
// through an Allocator, a caching allocator in the manner of PyTorch's: a
// freed block stays reserved for the next request, EmptyCache returns what
// is cached and nothing live, and an allocation that fails releases the
// cache and tries once more before it returns an *OOMError:
//
//	dev, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: 8 << 30})
//	if err != nil { ... }
//	defer dev.Close()
//	act, err := dev.Alloc(int64(batch) * perImage)
//	if errors.Is(err, vram.ErrOutOfMemory) { ... } // what was asked, what was free
//	defer dev.Free(act)
//	out := dev.Float32s(act) // a view of the arena for the CPU kernels
//
// Stats reports allocated, reserved and cached bytes, their peaks since
// ResetPeak, and fragmentation: the share of cached bytes outside the
// largest cached extent. FaultOptions make chosen allocations fail, to
// drill the recovery paths.
//
// # The memory model
//
// A Need holds what a genome takes: its weights, its activations per image
// and those that do not grow with the batch. Peak(b) predicts the memory of
// a forward of b images, allocator rounding included, and FitBatch the
// largest batch that fits in so many bytes.
//
// # The batch controller
//
// A BatchController walks a genome's images in slices. The forward allocates
// what it needs from the device and frees it all before it returns; when it
// returns an out-of-memory error, the controller retries the same slice
// smaller, so no image is lost or counted twice:
//
//	ctl := vram.NewBatchController(vram.ControllerConfig{Start: 45000}, dev, logger)
//	st, err := ctl.Run(ctx, vram.Job{Genome: id, Need: need}, len(images), func(lo, hi int) error {
//		return forward(images[lo:hi]) // frees what it allocated, also on error
//	})
//	var oom *vram.BatchOOMError
//	if errors.As(err, &oom) { ... } // not even Min images fit: the genome's error result
//
// It halves on an out-of-memory (or jumps to what the model says fits),
// shrinks before one when the peak reserved memory passes the threshold
// (unless the cache alone, free blocks other forwards left, passed it: then
// it empties the cache and keeps the batch, once a walk), then probes back up between the last size that failed and the last that
// fit, and remembers per memory-need bucket what worked, so that the next
// genome of that size starts there. Every change is a log line with a
// stable event ("batch_shrink", "batch_grow", "batch_exhausted") and fields
// (genome, old_batch, new_batch, bytes_requested, bytes_free, reason).
package vram
