//go:build cudaemu && !cuda

package cuda

/*
#cgo CXXFLAGS: -std=c++17 -O2 -Wno-unknown-pragmas
#include <stdint.h>
#include <stdlib.h>

int emu_kernel(const char *name);
int emu_launch(int k, unsigned gx, unsigned gy, unsigned threads, unsigned shared, const void *args, char *err, size_t errlen);
uint64_t emu_alloc(size_t n);
void emu_free(uint64_t p);
void emu_copy_in(uint64_t dst, const void *src, size_t n);
void emu_copy_out(void *dst, uint64_t src, size_t n);
*/
import "C"

import (
	"embed"
	"fmt"
	"time"
	"unsafe"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/vram"
)

// emuSources are the kernels emu.cc compiles (it #includes them). The go
// command does not follow C includes outside the package's folder:
// embedding them makes their contents part of the package's build ID, so a
// changed kernel rebuilds the emulator instead of testing a cached one.
//
//go:embed emu.h kernels/common.cuh kernels/gemm.cuh kernels/gemm.cu kernels/gemm_tc.cu kernels/ops.cu kernels/pop.cu
var emuSources embed.FS

// emuDriver runs the kernels on the CPU (emu.cc): the same schedules, the
// same argument structs, the same kernel sources as on a GPU, with host
// memory of a fixed capacity as the device's. Work is done when it is
// enqueued; streams are names. For tests without a GPU only: it says
// nothing of the driver, of speed, or of races between streams.
type emuDriver struct {
	fns      []C.int
	capacity int64
	used     int64
	sizes    map[devptr]int64
	streams  int
	// events holds each event's last record: the emulator's work is done
	// when it is enqueued, so an event's time is the host's.
	events []time.Time
	// sharedOptin is the dynamic shared memory a block may opt into
	// (EmuSharedOptin unless a test sets another device's); maxShared is
	// each kernel's limit, EmuSharedDefault until maxDynamicShared raises
	// it. The emulator counts no static shared memory against them.
	sharedOptin int
	maxShared   []int
}

// The emulated device's shared memory a block: 48 KiB by default, 227 KiB
// opted into (an sm_90 card's).
const (
	EmuSharedDefault = 48 << 10
	EmuSharedOptin   = 227 << 10
)

var _ driver = (*emuDriver)(nil)

// newEmu opens a backend over the emulator with o.MemoryBytes of device
// memory (default 1 GiB).
func newEmu(o evaluator.BackendOptions) (*Backend, error) {
	return newBackend(o, func() (driver, Info, error) { return openEmu(o.MemoryBytes) })
}

// openEmu makes an emulated device of capacity bytes (default 1 GiB) with
// every kernel of the sources.
func openEmu(capacity int64) (*emuDriver, Info, error) {
	if capacity <= 0 {
		capacity = 1 << 30
	}
	d := &emuDriver{capacity: capacity, sizes: map[devptr]int64{}, sharedOptin: EmuSharedOptin}
	d.fns = make([]C.int, len(sched.Kernels))
	d.maxShared = make([]int, len(sched.Kernels))
	for k := range d.maxShared {
		d.maxShared[k] = EmuSharedDefault
	}
	for k, name := range sched.Kernels {
		cs := C.CString(name)
		d.fns[k] = C.emu_kernel(cs)
		C.free(unsafe.Pointer(cs))
		if d.fns[k] < 0 {
			return nil, Info{}, fmt.Errorf("emu: no kernel %s in the sources", name)
		}
	}
	return d, Info{Name: "emulated device", OtherProcesses: -1, Driver: "emu", NVMLError: "emulated",
		Modules: []ModuleLoad{{Name: "emu", Image: "C++"}}}, nil
}

type emuOOM struct{ size, free int64 }

func (e *emuOOM) Error() string {
	return fmt.Sprintf("emu: allocating %s with %s free", vram.FormatBytes(e.size), vram.FormatBytes(e.free))
}
func (e *emuOOM) Is(target error) bool { return target == vram.ErrOutOfMemory }

func (d *emuDriver) deviceName() string { return "emulated device" }

func (d *emuDriver) memAlloc(n int64) (devptr, error) {
	if d.used+n > d.capacity {
		return 0, &emuOOM{n, d.capacity - d.used}
	}
	p := devptr(C.emu_alloc(C.size_t(n)))
	if p == 0 {
		return 0, fmt.Errorf("emu: host allocation of %s failed", vram.FormatBytes(n))
	}
	d.used += n
	d.sizes[p] = n
	return p, nil
}

func (d *emuDriver) memFree(p devptr) error {
	n, ok := d.sizes[p]
	if !ok {
		return fmt.Errorf("emu: free of %#x, not allocated", uint64(p))
	}
	delete(d.sizes, p)
	d.used -= n
	C.emu_free(C.uint64_t(p))
	return nil
}

func (d *emuDriver) memInfo() (free, total int64, err error) {
	return d.capacity - d.used, d.capacity, nil
}

func (d *emuDriver) hostAlloc(n int64) (unsafe.Pointer, error) {
	p := C.malloc(C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("emu: malloc(%d) failed", n)
	}
	return p, nil
}

func (d *emuDriver) hostFree(p unsafe.Pointer) error {
	C.free(p)
	return nil
}

func (d *emuDriver) newStream() (stream, error) {
	d.streams++
	return stream(d.streams - 1), nil
}

func (d *emuDriver) destroyStream(s stream) error { return nil }

func (d *emuDriver) newEvent() (event, error) {
	d.events = append(d.events, time.Time{})
	return event(len(d.events) - 1), nil
}

func (d *emuDriver) destroyEvent(e event) error { return nil }

func (d *emuDriver) record(e event, s stream) error {
	d.events[e] = time.Now()
	return nil
}

// streamWait has nothing to wait for: the emulator's work is done when it
// is enqueued.
func (d *emuDriver) streamWait(s stream, e event) error { return nil }

func (d *emuDriver) elapsed(from, to event) (time.Duration, error) {
	if d.events[from].IsZero() || d.events[to].IsZero() {
		return 0, fmt.Errorf("emu: elapsed time of an event never recorded")
	}
	return d.events[to].Sub(d.events[from]), nil
}

func (d *emuDriver) htodAsync(dst devptr, src unsafe.Pointer, n int64, s stream) error {
	return d.htod(dst, src, n)
}

func (d *emuDriver) dtohAsync(dst unsafe.Pointer, src devptr, n int64, s stream) error {
	return d.dtoh(dst, src, n)
}

func (d *emuDriver) htod(dst devptr, src unsafe.Pointer, n int64) error {
	C.emu_copy_in(C.uint64_t(dst), src, C.size_t(n))
	return nil
}

func (d *emuDriver) dtoh(dst unsafe.Pointer, src devptr, n int64) error {
	C.emu_copy_out(dst, C.uint64_t(src), C.size_t(n))
	return nil
}

// launch refuses, as cuLaunchKernel does (CUDA_ERROR_INVALID_VALUE), a
// launch that asks for more dynamic shared memory than the kernel's limit.
func (d *emuDriver) launch(k sched.Kernel, grid [2]uint32, args unsafe.Pointer, nargs, shared int, s stream) error {
	if shared < 0 || shared > d.maxShared[k] {
		return fmt.Errorf("%s: %d bytes of dynamic shared memory, beyond the kernel's limit of %d (CUDA_ERROR_INVALID_VALUE)", sched.Kernels[k], shared, d.maxShared[k])
	}
	var msg [256]C.char
	if C.emu_launch(d.fns[k], C.uint(grid[0]), C.uint(grid[1]), C.uint(sched.Threads), C.uint(shared), args, &msg[0], C.size_t(len(msg))) != 0 {
		return fmt.Errorf("%s: %s", sched.Kernels[k], C.GoString(&msg[0]))
	}
	return nil
}

func (d *emuDriver) maxDynamicShared(k sched.Kernel) (int, error) {
	d.maxShared[k] = d.sharedOptin
	return d.sharedOptin, nil
}

func (d *emuDriver) onDone(s stream, f func()) error {
	f()
	return nil
}

func (d *emuDriver) streamQuery(s stream) (bool, error) { return true, nil }

func (d *emuDriver) streamSync(s stream) error { return nil }

func (d *emuDriver) close() error {
	for p := range d.sizes {
		C.emu_free(C.uint64_t(p))
	}
	d.sizes = nil
	return nil
}
