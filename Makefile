# neateval. `make test` is what CI runs.

GO ?= go

.PHONY: build test run bench

build:
	$(GO) build -o bin/neateval ./cmd/neateval

test:
	$(GO) vet ./... && $(GO) test -timeout 30m ./...

run:
	$(GO) run ./cmd/neateval run --config config.toml

# Throughput of the small and the wide population on the MNIST test set,
# against PyTorch and the OpenBLAS ceiling when they are installed, each
# engine's better of two runs (bench/NOTES.md). BENCHFLAGS adds flags,
# e.g. BENCHFLAGS="--repeat 3 --json bench.json".
bench: build
	bin/neateval bench --preset both --repeat 2 $(BENCHFLAGS)

# ---- CUDA backend (evaluator/cuda, build tag cuda) --------------------------
# cuda.h and the stub libcuda.so come from Debian's nvidia-cuda-dev
# (scripts/cuda-deps.sh; a 774 MB package, of which 1 MB is kept): enough to
# compile and link the tagged code anywhere. They are cached outside the
# checkout, in ~/.cache/neateval/cuda, so that fresh clones (CI) reuse them. A tagged binary runs only where the NVIDIA driver
# is (gorgonia.org/cu initialises it at start and exits without it).

CUDA_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/neateval/cuda
CUDA_ENV = CGO_ENABLED=1 CGO_CFLAGS="-I$(CUDA_CACHE)/include -Wno-deprecated-declarations" CGO_LDFLAGS="-L$(CUDA_CACHE)/lib"
NVCC ?= nvcc
PTXAS ?= ptxas
CUOBJDUMP ?= cuobjdump
PTX_ARCH ?= compute_80
CUBIN_ARCH ?= sm_90
CUDA_KERNELS = evaluator/cuda/kernels

.PHONY: cuda-deps ptx kernels vet-cuda build-cuda test-cuda-compile test-cuda-emu gpu-prepare perf-model

cuda-deps:
	scripts/cuda-deps.sh $(CUDA_CACHE)

# Regenerate the committed PTX (needs nvcc: Debian's nvidia-cuda-toolkit).
ptx: $(CUDA_KERNELS)/gemm.ptx $(CUDA_KERNELS)/gemm_tc.ptx $(CUDA_KERNELS)/ops.ptx $(CUDA_KERNELS)/pop.ptx

$(CUDA_KERNELS)/%.ptx: $(CUDA_KERNELS)/%.cu $(CUDA_KERNELS)/common.cuh $(CUDA_KERNELS)/gemm.cuh
	$(NVCC) -ptx -arch=$(PTX_ARCH) -O3 -o $@ $<

# The PTX, its sm_90 machine code (ptxas, from the same PTX) and the
# kernels' resources (registers, shared and local memory), all committed:
# nvidia-cuda-toolkit's ptxas and cuobjdump, no GPU.
CUBINS = $(CUDA_KERNELS)/gemm.$(CUBIN_ARCH).cubin $(CUDA_KERNELS)/gemm_tc.$(CUBIN_ARCH).cubin $(CUDA_KERNELS)/ops.$(CUBIN_ARCH).cubin $(CUDA_KERNELS)/pop.$(CUBIN_ARCH).cubin

kernels: ptx $(CUBINS) $(CUDA_KERNELS)/resources.$(CUBIN_ARCH).txt

$(CUDA_KERNELS)/%.$(CUBIN_ARCH).cubin: $(CUDA_KERNELS)/%.ptx
	$(PTXAS) -arch=$(CUBIN_ARCH) -O3 -o $@ $<

$(CUDA_KERNELS)/resources.$(CUBIN_ARCH).txt: $(CUBINS)
	scripts/kernel-resources.sh $(CUOBJDUMP) $(CUBIN_ARCH) $(CUDA_KERNELS) >$@.tmp && mv $@.tmp $@

# The performance model of the kernels on an H200 (a prediction, from the
# schedules, the resources above and the card's ceilings).
perf-model:
	$(GO) run ./evaluator/cuda/internal/perfmodel/gen >docs/gpu-performance-model.md

vet-cuda: cuda-deps
	$(CUDA_ENV) $(GO) vet -tags cuda ./...

build-cuda: cuda-deps
	$(CUDA_ENV) $(GO) build -tags cuda -o bin/neateval-cuda ./cmd/neateval

test-cuda-compile: cuda-deps
	$(CUDA_ENV) $(GO) test -tags cuda -c -o bin/cuda.test ./evaluator/cuda

# The backend's tests with the kernels run on the CPU by the emulator
# (evaluator/cuda/emu.cc; needs g++, no CUDA at all): about 2 minutes.
test-cuda-emu:
	$(GO) test -timeout 30m -tags cudaemu ./evaluator/cuda/...

# Everything a GPU session carries, built here (scripts/gpu-prepare.sh).
gpu-prepare: cuda-deps
	scripts/gpu-prepare.sh
