//go:build cudaemu && !cuda

// emu.cc runs the CUDA kernels on the CPU, for tests on machines without a
// GPU (build tag cudaemu): every block in turn, its threads as fibers on
// one OS thread, switched at each __syncthreads. A barrier
// that some threads of a block pass while others have returned is reported
// as an error: on a GPU it would hang or corrupt shared memory.
//
// It checks the kernels' arithmetic, indexing and barriers, not their
// speed nor anything of the driver; memory is host memory.

#define NEATEVAL_EMU 1
#include "emu.h"

#if !defined(__x86_64__)
#error "the emulator's fiber switch (emu_switch) is written for x86-64"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

std::map<std::string, emu_entry> &table() {
	static std::map<std::string, emu_entry> t;
	return t;
}
std::vector<emu_entry> entries;

const size_t kStack = 256 << 10;

enum { kRunning = 0, kBarrier = 1, kDone = 2 };

// A fiber is a saved stack pointer: emu_switch pushes the callee-saved
// registers (and the SSE and x87 control words) on the running stack,
// stores its top in *from and resumes the stack at to. Unlike glibc's
// swapcontext it makes no system call (swapcontext saves and restores the
// signal mask with rt_sigprocmask on every switch, which made the
// emulator's tests spend half their time in the kernel on some machines).
extern "C" void emu_switch(void **from, void *to);
asm(R"(
	.text
	.p2align 4
	.globl emu_switch
	.hidden emu_switch
	.type emu_switch, @function
emu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_switch, .-emu_switch
)");

void *scheduler;
std::vector<void *> fibers;
std::vector<char *> stacks;
std::vector<int> states;
int current;
emu_entry entry;
const void *entryArgs;

// fiberMain is where a new fiber starts (emu_switch returns into it): it
// runs the kernel for thread current and parks for good.
[[noreturn]] void fiberMain() {
	int t = current;
	entry(entryArgs);
	states[t] = kDone;
	emu_switch(&fibers[t], scheduler);
	abort(); // a finished fiber is never resumed
}

// fiberInit lays out stack t as emu_switch leaves a suspended one: the
// control words, six zeroed registers and fiberMain as the return address,
// with the stack aligned as at a call.
void fiberInit(unsigned t) {
	uintptr_t top = ((uintptr_t)stacks[t] + kStack) & ~(uintptr_t)15;
	void **sp = (void **)top;
	*--sp = nullptr;             // fiberMain's own return address: none
	*--sp = (void *)fiberMain;   // where emu_switch returns
	for (int i = 0; i < 6; ++i) { // rbp, rbx, r12–r15
		*--sp = nullptr;
	}
	--sp; // MXCSR and the x87 control word, the scheduler's own
	unsigned mxcsr;
	unsigned short fpucw;
	asm volatile("stmxcsr %0" : "=m"(mxcsr));
	asm volatile("fnstcw %0" : "=m"(fpucw));
	memcpy((char *)sp, &mxcsr, 4);
	memcpy((char *)sp + 4, &fpucw, 2);
	fibers[t] = sp;
	states[t] = kRunning;
}

} // namespace

// dynShared is the launch's dynamic shared memory.
static std::vector<unsigned char> dynShared;

void *emu_dynamic_shared() { return dynShared.data(); }

int emu_register(const char *name, emu_entry f) {
	table()[name] = f;
	return 0;
}

void __syncthreads() {
	states[current] = kBarrier;
	emu_switch(&fibers[current], scheduler);
}

// The fragments every lane handed to mma_tf32, by thread.
struct MmaLane {
	float a[4], b[2], c[4];
};
static MmaLane mmaLanes[1024];

// mma_tf32: lane = 4g + q of its warp holds A (row, k) elements a0 (g, q),
// a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4); B (k, column) b0 (q, g),
// b1 (q + 4, g); C and D (row, column) c0 (g, 2q), c1 (g, 2q + 1), c2
// (g + 8, 2q), c3 (g + 8, 2q + 1) — the PTX ISA's layout for m16n8k8 with
// .tf32. Each D element is its C plus the 8 products in k order, in
// float32 (the products of two TF32 values are exact in float32; the
// hardware's order of the sums is unspecified).
void mma_tf32(float *d, const unsigned *a, const unsigned *b) {
	const int t = current;
	MmaLane &me = mmaLanes[t];
	for (int i = 0; i < 4; ++i) {
		me.a[i] = __uint_as_float(a[i]);
		me.c[i] = d[i];
	}
	me.b[0] = __uint_as_float(b[0]);
	me.b[1] = __uint_as_float(b[1]);
	__syncthreads();
	const MmaLane *warp = &mmaLanes[t & ~31];
	const int lane = t & 31, g = lane / 4, q = lane % 4;
	float out[4];
	for (int i = 0; i < 4; ++i) {
		const int row = g + (i >= 2 ? 8 : 0), col = 2 * q + (i & 1);
		float s = me.c[i];
		for (int k = 0; k < 8; ++k) {
			const float av = warp[(row % 8) * 4 + k % 4].a[(row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)];
			const float bv = warp[col * 4 + k % 4].b[k >= 4 ? 1 : 0];
			s = fmaf(av, bv, s);
		}
		out[i] = s;
	}
	__syncthreads();
	for (int i = 0; i < 4; ++i) {
		d[i] = out[i];
	}
}

#include "kernels/gemm.cu"
#include "kernels/gemm_tc.cu"
#include "kernels/ops.cu"
#include "kernels/pop.cu"

extern "C" {

// emu_kernel returns the index of a kernel by name, −1 when there is none.
int emu_kernel(const char *name) {
	auto it = table().find(name);
	if (it == table().end()) {
		return -1;
	}
	entries.push_back(it->second);
	return (int)entries.size() - 1;
}

// emu_launch runs kernel k over a grid of gx × gy blocks of threads
// threads with shared bytes of dynamic shared memory (the Go side checks
// them against the kernel's limit); 0 on success, else an error message in err.
int emu_launch(int k, unsigned gx, unsigned gy, unsigned threads, unsigned shared, const void *args, char *err, size_t errlen) {
	if (k < 0 || (size_t)k >= entries.size() || threads == 0 || threads > 1024) {
		snprintf(err, errlen, "emu: bad launch (kernel %d, %u threads)", k, threads);
		return 1;
	}
	while (fibers.size() < threads) {
		fibers.push_back(nullptr);
		stacks.push_back((char *)malloc(kStack));
		states.push_back(kDone);
	}
	entry = entries[k];
	entryArgs = args;
	blockDim = {threads, 1, 1};
	gridDim = {gx, gy, 1};
	for (unsigned by = 0; by < gy; ++by) {
		for (unsigned bx = 0; bx < gx; ++bx) {
			blockIdx = {bx, by, 0};
			dynShared.assign(shared, 0xff); // NaN: what no thread of this block wrote
			for (unsigned t = 0; t < threads; ++t) {
				fiberInit(t);
			}
			for (;;) {
				for (unsigned t = 0; t < threads; ++t) {
					if (states[t] == kDone) {
						continue;
					}
					states[t] = kRunning;
					current = (int)t;
					threadIdx = {t, 0, 0};
					emu_switch(&scheduler, fibers[t]);
				}
				unsigned atBarrier = 0, done = 0;
				for (unsigned t = 0; t < threads; ++t) {
					atBarrier += states[t] == kBarrier;
					done += states[t] == kDone;
				}
				if (atBarrier == 0) {
					break;
				}
				if (done > 0) {
					snprintf(err, errlen, "emu: block (%u, %u): %u threads wait at __syncthreads while %u have returned", bx, by, atBarrier, done);
					return 1;
				}
			}
		}
	}
	return 0;
}

uint64_t emu_alloc(size_t n) {
	void *p = aligned_alloc(256, (n + 255) / 256 * 256);
	if (p != NULL) {
		// Poison: a kernel that reads memory nothing wrote gets NaN.
		memset(p, 0xff, (n + 255) / 256 * 256);
	}
	return (uint64_t)(uintptr_t)p;
}

void emu_free(uint64_t p) { free((void *)(uintptr_t)p); }

void emu_copy_in(uint64_t dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); }

void emu_copy_out(void *dst, uint64_t src, size_t n) { memcpy(dst, (const void *)(uintptr_t)src, n); }

} // extern "C"
