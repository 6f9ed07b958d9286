//go:build cudaemu && !cuda

// emu.cc runs the CUDA kernels on the CPU, for tests on machines without a
// GPU (build tag cudaemu): every block in turn, its threads as fibers
// (ucontext) on one OS thread, switched at each __syncthreads. A barrier
// that some threads of a block pass while others have returned is reported
// as an error: on a GPU it would hang or corrupt shared memory.
//
// It checks the kernels' arithmetic, indexing and barriers, not their
// speed nor anything of the driver; memory is host memory.

#define NEATEVAL_EMU 1
#include "emu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

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

ucontext_t scheduler;
std::vector<ucontext_t> fibers;
std::vector<char *> stacks;
std::vector<int> states;
int current;
emu_entry entry;
const void *entryArgs;

void trampoline(int t) {
	entry(entryArgs);
	states[t] = kDone;
	swapcontext(&fibers[t], &scheduler);
}

} // namespace

int emu_register(const char *name, emu_entry f) {
	table()[name] = f;
	return 0;
}

void __syncthreads() {
	states[current] = kBarrier;
	swapcontext(&fibers[current], &scheduler);
}

#include "kernels/gemm.cu"
#include "kernels/ops.cu"

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
// threads; 0 on success, else an error message in err.
int emu_launch(int k, unsigned gx, unsigned gy, unsigned threads, const void *args, char *err, size_t errlen) {
	if (k < 0 || (size_t)k >= entries.size() || threads == 0 || threads > 1024) {
		snprintf(err, errlen, "emu: bad launch (kernel %d, %u threads)", k, threads);
		return 1;
	}
	while (fibers.size() < threads) {
		fibers.emplace_back();
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
			for (unsigned t = 0; t < threads; ++t) {
				getcontext(&fibers[t]);
				fibers[t].uc_stack.ss_sp = stacks[t];
				fibers[t].uc_stack.ss_size = kStack;
				fibers[t].uc_link = &scheduler;
				makecontext(&fibers[t], (void (*)())trampoline, 1, (int)t);
				states[t] = kRunning;
			}
			for (;;) {
				for (unsigned t = 0; t < threads; ++t) {
					if (states[t] == kDone) {
						continue;
					}
					states[t] = kRunning;
					current = (int)t;
					threadIdx = {t, 0, 0};
					swapcontext(&scheduler, &fibers[t]);
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
