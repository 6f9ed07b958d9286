//go:build cuda

package cuda

// #include <cuda.h>
import "C"

import (
	"errors"
	"fmt"
	"time"
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
	events  []cu.Event     // by event
}

var _ driver = (*cuDriver)(nil)

// oomError is CUDA_ERROR_OUT_OF_MEMORY from a call of gorgonia.org/cu
// (cuMemAlloc, cuStreamCreate, cuEventCreate): it matches
// vram.ErrOutOfMemory, so that the allocator releases its cache, retries,
// and then fails with a *vram.OOMError, and a backend that cannot make its
// streams fails to open with the same typed error.
type oomError struct {
	call string
	err  error
}

func (e *oomError) Error() string        { return fmt.Sprintf("%s: %v", e.call, e.err) }
func (e *oomError) Unwrap() error        { return e.err }
func (e *oomError) Is(target error) bool { return target == vram.ErrOutOfMemory }

// cuErr names the call of a gorgonia.org/cu error, typed as oomError when
// the driver is out of memory.
func cuErr(call string, err error) error {
	switch {
	case err == nil:
		return nil
	case err == cu.OutOfMemory:
		return &oomError{call: call, err: err}
	default:
		return fmt.Errorf("%s: %w", call, err)
	}
}

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
	minor, err := dev.Attribute(cu.ComputeCapabilityMinor)
	if err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: compute capability: %w", index, err)
	}
	info.CC = major*10 + minor
	if info.SMs, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return nil, info, fmt.Errorf("cuda: device %d: multiprocessors: %w", index, err)
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
	if info.Modules, info.Kernels, err = d.loadKernels(info.CC); err != nil {
		return nil, info, errors.Join(fmt.Errorf("cuda: device %d: %w", index, err), d.close())
	}
	return d, info, nil
}

// loadKernels loads the embedded modules, the machine code for a GPU of
// compute capability cc when a module has it and the PTX otherwise, and
// looks up every kernel sched uses.
func (d *cuDriver) loadKernels(cc int) ([]ModuleLoad, []KernelAttrs, error) {
	var loads []ModuleLoad
	for _, m := range kernels.Modules {
		mod, ld, err := loadModule(m, cc)
		if err != nil {
			return loads, nil, err
		}
		d.mods = append(d.mods, mod)
		loads = append(loads, ld)
	}
	d.fns = make([]C.CUfunction, len(sched.Kernels))
	attrs := make([]KernelAttrs, len(sched.Kernels))
	for k, name := range sched.Kernels {
		for _, mod := range d.mods {
			f, r := cModuleFunction(mod, name)
			if r == C.CUDA_SUCCESS {
				d.fns[k] = f
				break
			}
			if r != C.CUDA_ERROR_NOT_FOUND {
				return loads, nil, check("cuModuleGetFunction("+name+")", r)
			}
		}
		if d.fns[k] == nil {
			return loads, nil, fmt.Errorf("kernel %s is in no module: regenerate the kernels (make kernels)", name)
		}
		a, err := cFuncAttrs(d.fns[k], name, sched.Threads)
		if err != nil {
			return loads, nil, err
		}
		attrs[k] = a
	}
	return loads, attrs, nil
}

// loadModule loads m's cubin when it is for compute capability cc (and
// NEATEVAL_CUDA_IMAGE is not "ptx"), else, or when the driver refuses the
// cubin, its PTX through the JIT; it times the load.
func loadModule(m kernels.Module, cc int) (C.CUmodule, ModuleLoad, error) {
	ld := ModuleLoad{Name: m.Name}
	switch {
	case forcePTX():
		ld.Fallback = imageEnv + "=ptx"
	case len(m.Cubin) == 0 || m.CubinArch != cc:
		ld.Fallback = fmt.Sprintf("the cubin is for sm_%d, the GPU is sm_%d", m.CubinArch, cc)
	default:
		t0 := time.Now()
		mod, err := cModuleLoad(m.Name, m.Cubin)
		if err == nil {
			ld.Image, ld.Took = fmt.Sprintf("sm_%d cubin", cc), time.Since(t0)
			return mod, ld, nil
		}
		ld.Fallback = err.Error()
	}
	t0 := time.Now()
	mod, err := cModuleLoad(m.Name, append([]byte(m.PTX), 0))
	if err != nil {
		return nil, ld, err
	}
	ld.Image, ld.Took = "compute_80 PTX", time.Since(t0)
	return mod, ld, nil
}

func (d *cuDriver) deviceName() string { return d.name }

func (d *cuDriver) memAlloc(n int64) (devptr, error) {
	p, err := cu.MemAlloc(n)
	if err != nil {
		return 0, cuErr("cuMemAlloc("+vram.FormatBytes(n)+")", err)
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
		return 0, cuErr("cuStreamCreate", err)
	}
	d.streams = append(d.streams, s)
	return stream(len(d.streams) - 1), nil
}

func (d *cuDriver) newEvent() (event, error) {
	e, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return 0, cuErr("cuEventCreate", err)
	}
	d.events = append(d.events, e)
	return event(len(d.events) - 1), nil
}

func (d *cuDriver) destroyEvent(e event) error {
	if d.events[e] == (cu.Event{}) {
		return nil
	}
	return cu.DestroyEvent(&d.events[e]) // zeroes the entry
}

func (d *cuDriver) record(e event, s stream) error {
	return cuErr("cuEventRecord", d.events[e].Record(d.streams[s]))
}

func (d *cuDriver) streamWait(s stream, e event) error {
	return cuErr("cuStreamWaitEvent", d.streams[s].Wait(d.events[e], 0))
}

func (d *cuDriver) elapsed(from, to event) (time.Duration, error) {
	ms, err := d.events[from].Elapsed(d.events[to])
	if err != nil {
		return 0, cuErr("cuEventElapsedTime", err)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
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

func (d *cuDriver) launch(k sched.Kernel, grid [2]uint32, args unsafe.Pointer, nargs, shared int, s stream) error {
	return cLaunch(d.fns[k], grid[0], grid[1], sched.Threads, uint32(shared), d.raw(s), args)
}

func (d *cuDriver) maxDynamicShared(k sched.Kernel) (int, error) { return cMaxDynamicShared(d.fns[k]) }

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
	for i := range d.events {
		if d.events[i] != (cu.Event{}) {
			errs = append(errs, cu.DestroyEvent(&d.events[i]))
		}
	}
	d.events = nil
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
