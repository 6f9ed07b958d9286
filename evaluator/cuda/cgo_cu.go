//go:build cuda

package cuda

// The driver calls gorgonia.org/cu does not wrap, or wraps in a way the
// backend cannot use: cuMemHostAlloc (pinned memory), cuLaunchHostFunc (a
// stream's completion as a callback), cuModuleLoadDataEx with its error
// log, and cuLaunchKernel with the kernel's argument struct passed as one
// parameter (cu's Launch copies 8 bytes per parameter and mallocs twice per
// launch).

/*
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>

extern void neatevalStreamDone(uintptr_t handle);

static void CUDA_CB ne_host_done(void *h) { neatevalStreamDone((uintptr_t)h); }

static CUresult ne_on_done(CUstream s, uintptr_t h) {
	return cuLaunchHostFunc(s, ne_host_done, (void *)h);
}

static CUresult ne_launch(CUfunction f, unsigned gx, unsigned gy, unsigned threads, unsigned shared, CUstream s, void *args) {
	void *params[1] = {args};
	return cuLaunchKernel(f, gx, gy, 1, threads, 1, 1, shared, s, params, NULL);
}

// ne_max_dynamic_shared raises f's dynamic shared memory to what the
// current context's device lets a block opt into, less f's static shared
// memory, and says how much that is.
static CUresult ne_max_dynamic_shared(CUfunction f, int *bytes) {
	CUdevice dev;
	int optin, static_bytes;
	CUresult r = cuCtxGetDevice(&dev);
	if (r == CUDA_SUCCESS) r = cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
	if (r == CUDA_SUCCESS) r = cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
	if (r != CUDA_SUCCESS) return r;
	*bytes = optin - static_bytes;
	return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, *bytes);
}

static CUresult ne_host_alloc(void **p, size_t n) { return cuMemHostAlloc(p, n, 0); }

static CUresult ne_module_load(CUmodule *m, const char *image, char *log, size_t logsize) {
	CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)logsize};
	return cuModuleLoadDataEx(m, image, 2, opts, vals);
}

static CUresult ne_func_attrs(CUfunction f, int threads, int *regs, int *shared, int *local, int *blocks) {
	CUresult r = cuFuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
	if (r == CUDA_SUCCESS) r = cuFuncGetAttribute(shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
	if (r == CUDA_SUCCESS) r = cuFuncGetAttribute(local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
	if (r == CUDA_SUCCESS) r = cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, threads, 0);
	return r;
}

static const char *ne_error_name(CUresult r) {
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) {
		return "CUDA_ERROR_UNKNOWN";
	}
	return s;
}
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/neateval/neateval/vram"
)

// resultError is a CUresult of a call made here.
type resultError struct {
	call string
	code C.CUresult
}

func (e *resultError) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.call, C.GoString(C.ne_error_name(e.code)), int(e.code))
}

// Is makes CUDA_ERROR_OUT_OF_MEMORY, from any call (pinned memory, a
// module, a launch), match vram.ErrOutOfMemory.
func (e *resultError) Is(target error) bool {
	return target == vram.ErrOutOfMemory && e.code == C.CUDA_ERROR_OUT_OF_MEMORY
}

func check(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &resultError{call: call, code: r}
}

func cHostAlloc(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := check("cuMemHostAlloc", C.ne_host_alloc(&p, C.size_t(n))); err != nil {
		return nil, err
	}
	return p, nil
}

func cOnDone(s C.CUstream, f func()) error {
	h := cgo.NewHandle(f)
	if err := check("cuLaunchHostFunc", C.ne_on_done(s, C.uintptr_t(h))); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// cLaunch launches a kernel. CUDA_ERROR_OUT_OF_MEMORY here is the device
// really out of memory (a lazily loaded kernel's code, or its local
// memory, did not fit): it matches vram.ErrOutOfMemory (resultError.Is),
// so the batch controller shrinks the batch and tries again, which frees
// room.
func cLaunch(f C.CUfunction, gx, gy, threads, shared uint32, s C.CUstream, args unsafe.Pointer) error {
	return check("cuLaunchKernel", C.ne_launch(f, C.uint(gx), C.uint(gy), C.uint(threads), C.uint(shared), s, args))
}

// cMaxDynamicShared is ne_max_dynamic_shared.
func cMaxDynamicShared(f C.CUfunction) (int, error) {
	var n C.int
	err := check("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", C.ne_max_dynamic_shared(f, &n))
	return int(n), err
}

// cModuleLoad loads a module from a PTX (NUL-terminated) or cubin image;
// a failure carries the JIT's log.
func cModuleLoad(name string, image []byte) (C.CUmodule, error) {
	const logSize = 8 << 10
	img := C.CBytes(image)
	defer C.free(img)
	log := (*C.char)(C.calloc(logSize, 1))
	defer C.free(unsafe.Pointer(log))
	var m C.CUmodule
	if err := check("cuModuleLoadDataEx", C.ne_module_load(&m, (*C.char)(img), log, logSize)); err != nil {
		return nil, fmt.Errorf("module %s: %w: %s", name, err, C.GoString(log))
	}
	return m, nil
}

// cFuncAttrs reads a kernel's registers, shared and local memory, and the
// blocks of threads threads one multiprocessor holds.
func cFuncAttrs(f C.CUfunction, name string, threads int) (KernelAttrs, error) {
	var regs, shared, local, blocks C.int
	if err := check("cuFuncGetAttribute("+name+")", C.ne_func_attrs(f, C.int(threads), &regs, &shared, &local, &blocks)); err != nil {
		return KernelAttrs{}, err
	}
	return KernelAttrs{Name: name, Registers: int(regs), Shared: int(shared), Local: int(local), BlocksPerSM: int(blocks)}, nil
}

func cModuleFunction(m C.CUmodule, name string) (C.CUfunction, C.CUresult) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	r := C.cuModuleGetFunction(&f, m, cs)
	return f, r
}

func cModuleUnload(m C.CUmodule) error { return check("cuModuleUnload", C.cuModuleUnload(m)) }
