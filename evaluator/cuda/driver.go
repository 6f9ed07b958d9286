//go:build cuda || cudaemu

package cuda

import (
	"time"
	"unsafe"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
)

// devptr is a device address (CUdeviceptr).
type devptr uint64

// stream names one of the driver's streams.
type stream int

// event names one of the driver's events.
type event int

// driver is the part of the CUDA driver API the backend uses. Every method
// is called on the worker goroutine, with the context current. The cuda
// build implements it over gorgonia.org/cu and a few lines of cgo
// (driver_cu.go).
type driver interface {
	// deviceName is the GPU's name, for logs and errors.
	deviceName() string
	// memAlloc is cuMemAlloc; an allocation the device cannot hold fails
	// with an error matching vram.ErrOutOfMemory, as does any other call
	// here that fails with CUDA_ERROR_OUT_OF_MEMORY (a stream, an event,
	// pinned host memory, a launch).
	memAlloc(n int64) (devptr, error)
	memFree(p devptr) error
	// memInfo is cuMemGetInfo.
	memInfo() (free, total int64, err error)
	// hostAlloc is cuMemHostAlloc: page-locked host memory the copy engines
	// read directly.
	hostAlloc(n int64) (unsafe.Pointer, error)
	hostFree(p unsafe.Pointer) error
	newStream() (stream, error)
	destroyStream(s stream) error
	// newEvent is cuEventCreate (with timing); record is cuEventRecord;
	// elapsed is cuEventElapsedTime between two recorded events whose
	// streams have passed them.
	newEvent() (event, error)
	destroyEvent(e event) error
	record(e event, s stream) error
	elapsed(from, to event) (time.Duration, error)
	// streamWait is cuStreamWaitEvent: work enqueued on s after it waits,
	// on the device, until the stream that recorded e passes it.
	streamWait(s stream, e event) error
	// htodAsync and dtohAsync are cuMemcpyHtoDAsync and cuMemcpyDtoHAsync:
	// the host memory must be pinned and stay untouched until the stream
	// passes the copy.
	htodAsync(dst devptr, src unsafe.Pointer, n int64, s stream) error
	dtohAsync(dst unsafe.Pointer, src devptr, n int64, s stream) error
	// htod and dtoh copy synchronously: when they return, the data has
	// landed (htod waits for the device to be idle).
	htod(dst devptr, src unsafe.Pointer, n int64) error
	dtoh(dst unsafe.Pointer, src devptr, n int64) error
	// launch enqueues kernel k with a grid of grid[0] × grid[1] blocks of
	// sched.Threads threads and shared bytes of dynamic shared memory; args
	// points at its argument struct (nargs 8-byte fields).
	launch(k sched.Kernel, grid [2]uint32, args unsafe.Pointer, nargs, shared int, s stream) error
	// maxDynamicShared raises kernel k's limit on dynamic shared memory to
	// the most the device lets a block opt into, less the kernel's static
	// shared memory (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES), and
	// returns that limit in bytes. Without it a launch may ask for 48 KiB
	// less the static shared memory.
	maxDynamicShared(k sched.Kernel) (int, error)
	// onDone enqueues f (cuLaunchHostFunc): the driver calls it from a
	// thread of its own once the stream has done everything before it. f
	// must not call the driver, and must return quickly.
	onDone(s stream, f func()) error
	// streamQuery reports whether the stream has finished its work; an
	// error is a failure of that work (a fault in a kernel, a lost device).
	streamQuery(s stream) (done bool, err error)
	streamSync(s stream) error
	// close unloads the modules and destroys the streams and the context.
	close() error
}
