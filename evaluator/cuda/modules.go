//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"os"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
)

// ModuleLoad says how one module of kernels was loaded.
type ModuleLoad struct {
	Name string
	// Image is what the driver was given: "sm_90 cubin" (machine code, no
	// JIT), "compute_80 PTX" (compiled by the driver's JIT while loading)
	// or, under the emulator, "C++".
	Image string
	Took  time.Duration
	// Fallback is why the cubin was not used, when the PTX was.
	Fallback string
}

// KernelAttrs is what the driver says of one loaded kernel
// (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor).
type KernelAttrs struct {
	Name      string
	Registers int // per thread
	Shared    int // static shared memory, bytes a block
	Local     int // local memory (spills, indexed arrays), bytes a thread
	// BlocksPerSM is how many blocks of sched.Threads threads one
	// multiprocessor holds at once (its occupancy is BlocksPerSM × 256
	// threads of 2,048 on sm_80 and sm_90).
	BlocksPerSM int
}

// imageEnv picks what the CUDA build loads: "cubin" (the machine code, or
// the PTX when the GPU is of another architecture; the default), "ptx"
// (always the PTX, to measure the JIT).
const imageEnv = "NEATEVAL_CUDA_IMAGE"

// forcePTX reports whether NEATEVAL_CUDA_IMAGE=ptx.
func forcePTX() bool { return os.Getenv(imageEnv) == "ptx" }

// DefaultParallel is the forwards a backend opens streams for when
// BackendOptions.Parallel is 0, and the fitness_eval_parallel it suggests
// (Backend.PreferredParallel). Four streams let small kernels of
// different genomes (the dense layers, pools and reductions, which fill a
// few of an H200's 132 multiprocessors) overlap with each other and with
// the launch gaps, while the large convolutions of one forward fill the
// card by themselves at batches of thousands; each further stream adds an
// arena (up to 1.6 GiB for the small preset, 6.4 GiB for the wide one at a
// batch of 10,000) for little more overlap. A prediction: the first GPU
// run's benchmark at 1, 4 and 8 says (scripts/gpu-check.sh).
const DefaultParallel = 4

// ParsePrecision reads the compute_precision key: "fp32" or "" (exact
// float32) or "tf32" (TF32 tensor cores, float32 sums).
func ParsePrecision(s string) (sched.Precision, error) {
	switch s {
	case "", "fp32":
		return sched.FP32, nil
	case "tf32":
		return sched.TF32, nil
	}
	return 0, fmt.Errorf("cuda: compute precision %q: want \"fp32\" or \"tf32\"", s)
}
