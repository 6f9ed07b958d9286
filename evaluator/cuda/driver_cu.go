//go:build cuda

package cuda

// #include <cuda.h>
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/vram"
)

// cuDriver is the driver over gorgonia.org/cu (memory, copies, streams, the
// context) and cgo_cu.go (pinned memory, modules, launches, callbacks).
type cuDriver struct {
	name    string
	ctx     cu.CUContext
	mods    []C.CUmodule
	fns     []C.CUfunction // by sched.Kernel
	streams []cu.Stream    // by stream
}

var _ driver = (*cuDriver)(nil)

// oomError is CUDA_ERROR_OUT_OF_MEMORY from cuMemAlloc: it matches
// vram.ErrOutOfMemory, so that the allocator releases its cache, retries,
// and then fails with a *vram.OOMError.
type oomError struct {
	size int64
	err  error
}

func (e *oomError) Error() string {
	return fmt.Sprintf("cuMemAlloc(%s): %v", vram.FormatBytes(e.size), e.err)
}
func (e *oomError) Unwrap() error        { return e.err }
func (e *oomError) Is(target error) bool { return target == vram.ErrOutOfMemory }

// openCU makes a context on GPU index (current on the calling thread: the
// worker's) and loads the kernels. It runs on the worker.
func openCU(index int) (driver, Info, error) {
	info := Info{Index: index, OtherProcesses: -1}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, info, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if index < 0 || index >= n {
		return nil, info, fmt.Errorf("cuda: device %d: this machine has %d CUDA devices", index, n)
	}
	dev, err := cu.GetDevice(index)
	if err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: %w", index, err)
	}
	if info.Name, err = dev.Name(); err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: name: %w", index, err)
	}
	major, err := dev.Attribute(cu.ComputeCapabilityMajor)
	if err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: compute capability: %w", index, err)
	}
	if major < 8 {
		return nil, info, fmt.Errorf("cuda: device %d (%s) has compute capability %d.x; the kernels need 8.0 or later", index, info.Name, major)
	}
	v := cu.Version()
	info.Driver = fmt.Sprintf("CUDA %d.%d", v/1000, v%1000/10)
	uuid, uerr := dev.UUID()
	if uerr == nil {
		nvmlInfo("GPU-"+uuid.String(), &info)
	} else {
		info.NVMLError = "no device UUID: " + uerr.Error()
	}
	ctx, err := dev.MakeContext(cu.SchedBlockingSync)
	if err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: creating a context: %w", index, err)
	}
	d := &cuDriver{name: info.Name, ctx: ctx}
	if err := d.loadKernels(); err != nil {
		return nil, info, errors.Join(fmt.Errorf("cuda: device %d: %w", index, err), d.close())
	}
	return d, info, nil
}

// loadKernels loads the embedded PTX and looks up every kernel sched uses.
func (d *cuDriver) loadKernels() error {
	for _, m := range kernels.Modules {
		mod, err := cModuleLoad(m.Name, m.PTX)
		if err != nil {
			return err
		}
		d.mods = append(d.mods, mod)
	}
	d.fns = make([]C.CUfunction, len(sched.Kernels))
	for k, name := range sched.Kernels {
		for _, mod := range d.mods {
			f, r := cModuleFunction(mod, name)
			if r == C.CUDA_SUCCESS {
				d.fns[k] = f
				break
			}
			if r != C.CUDA_ERROR_NOT_FOUND {
				return check("cuModuleGetFunction("+name+")", r)
			}
		}
		if d.fns[k] == nil {
			return fmt.Errorf("kernel %s is in no module: regenerate the PTX (make ptx)", name)
		}
	}
	return nil
}

func (d *cuDriver) deviceName() string { return d.name }

func (d *cuDriver) memAlloc(n int64) (devptr, error) {
	p, err := cu.MemAlloc(n)
	if err != nil {
		if err == cu.OutOfMemory {
			return 0, &oomError{size: n, err: err}
		}
		return 0, fmt.Errorf("cuMemAlloc(%s): %w", vram.FormatBytes(n), err)
	}
	return devptr(p), nil
}

func (d *cuDriver) memFree(p devptr) error { return cu.MemFree(cu.DevicePtr(p)) }

func (d *cuDriver) memInfo() (free, total int64, err error) { return cu.MemInfo() }

func (d *cuDriver) hostAlloc(n int64) (unsafe.Pointer, error) { return cHostAlloc(n) }

func (d *cuDriver) hostFree(p unsafe.Pointer) error { return cu.MemFreeHost(p) }

func (d *cuDriver) newStream() (stream, error) {
	s, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return 0, fmt.Errorf("cuStreamCreate: %w", err)
	}
	d.streams = append(d.streams, s)
	return stream(len(d.streams) - 1), nil
}

func (d *cuDriver) destroyStream(s stream) error {
	if d.streams[s] == (cu.Stream{}) {
		return nil
	}
	return d.streams[s].Destroy() // zeroes the entry
}

// raw is the stream as cgo_cu.go's C functions take it.
func (d *cuDriver) raw(s stream) C.CUstream { return C.CUstream(unsafe.Pointer(d.streams[s].C())) }

func (d *cuDriver) htodAsync(dst devptr, src unsafe.Pointer, n int64, s stream) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, d.streams[s])
}

func (d *cuDriver) dtohAsync(dst unsafe.Pointer, src devptr, n int64, s stream) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, d.streams[s])
}

// htod copies and then waits for the context to be idle: from pageable
// memory cuMemcpyHtoD returns once the data is staged, not landed, and the
// forwards' non-blocking streams do not wait for the legacy stream it uses.
func (d *cuDriver) htod(dst devptr, src unsafe.Pointer, n int64) error {
	if err := cu.MemcpyHtoD(cu.DevicePtr(dst), src, n); err != nil {
		return err
	}
	return cu.Synchronize()
}

func (d *cuDriver) dtoh(dst unsafe.Pointer, src devptr, n int64) error {
	return cu.MemcpyDtoH(dst, cu.DevicePtr(src), n)
}

func (d *cuDriver) launch(k sched.Kernel, grid [2]uint32, args unsafe.Pointer, nargs int, s stream) error {
	return cLaunch(d.fns[k], grid[0], grid[1], sched.Threads, d.raw(s), args)
}

func (d *cuDriver) onDone(s stream, f func()) error { return cOnDone(d.raw(s), f) }

func (d *cuDriver) streamQuery(s stream) (bool, error) {
	switch err := d.streams[s].Query(); {
	case err == nil:
		return true, nil
	case err == cu.NotReady:
		return false, nil
	default:
		return false, err
	}
}

func (d *cuDriver) streamSync(s stream) error { return d.streams[s].Synchronize() }

func (d *cuDriver) close() error {
	var errs []error
	for _, s := range d.streams {
		if s != (cu.Stream{}) {
			errs = append(errs, s.Destroy())
		}
	}
	d.streams = nil
	for _, m := range d.mods {
		errs = append(errs, cModuleUnload(m))
	}
	d.mods = nil
	errs = append(errs, d.ctx.Destroy())
	return errors.Join(errs...)
}
