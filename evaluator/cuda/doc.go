// Package cuda is the evaluator backend that computes on an NVIDIA GPU: it
// registers itself as "cuda" with the evaluator when built with the cuda
// build tag, and gives the same fitness as the CPU backend (beyond float
// rounding) from kernels of its own.
//
// Build with
//
//	make cuda-deps      # cuda.h and the stub libcuda.so into .cache/cuda
//	make build-cuda     # go build -tags cuda ./cmd/neateval
//
// A cuda-tagged binary links libcuda.so.1 and only starts on a machine with
// the NVIDIA driver: gorgonia.org/cu initialises the driver when the
// program starts and exits when it cannot. CI therefore compiles the tagged
// code (go vet -tags cuda, go test -tags cuda -c) and never runs it.
//
// How it works:
//
//   - One CUDA context per backend, and every driver call of that context
//     on one goroutine locked to its OS thread (worker): callers hand it
//     closures. Launches are asynchronous, so the worker only enqueues;
//     a forward waits for its stream's host callback, never the worker.
//   - Everything a forward needs from the driver is made when the backend
//     opens: for each of the fitness_eval_parallel forwards that may run at
//     once (BackendOptions.Parallel, default DefaultParallel) a stream, two
//     events (its device time) and a pinned result buffer. A failure to
//     make one fails the open; CUDA_ERROR_OUT_OF_MEMORY from any call is
//     vram's out-of-memory error. Only the staging buffers of weights and
//     of images not cached on the device come later, from a bounded pool
//     of pinned memory as sizes are first asked for; their failure is the
//     same typed error, so the batch controller shrinks the batch.
//   - Memory: vram's caching Allocator, the one the CPU device uses, over
//     cuMemAlloc and cuMemFree (device.go). CUDA_ERROR_OUT_OF_MEMORY,
//     recognised by its result code, becomes vram's out-of-memory error, so
//     the batch controller and the staging manager work unchanged.
//   - Weights: Load converts a genome's weights into pinned host memory
//     (cuMemHostAlloc, from a bounded pool) and copies them on a stream of
//     their own, so a prefetched chunk loads while the current one computes;
//     an event recorded after the copy orders it before the model's
//     forwards on the device (cuStreamWaitEvent), not through the host. The
//     loads stream holds only copies and event records: the host hears that
//     a copy landed (to reuse its pinned buffer) from a host function on a
//     second stream that waits for the event, so no host round trip ever
//     sits between two copies.
//   - Forwards: the schedule of a forward (internal/sched) is one arena
//     allocation laid out by the graph's liveness schedule, plus a list of
//     launches of the kernels in kernels/ (CUDA C compiled to PTX and the
//     PTX to sm_90 machine code, both embedded: an sm_90 card loads the
//     cubin, any other JIT-compiles the PTX; Info.Modules says which, and
//     how long it took). Up to fitness_eval_parallel forwards
//     run at once, each on its own stream; each ends with a one-block
//     reduction of the logits whose 32-byte result is all that comes back.
//   - Fused pools (sched.FusedPools): a max or average pool that is a
//     convolution's only consumer, with windows that do not overlap, is
//     reduced in the convolution's store (the …_convpool_… kernels), so
//     the convolution's full-resolution output never reaches device memory;
//     the pooled values are the separate pool's bit for bit
//     (NEATEVAL_CUDA_FUSE=off: every pool a launch of its own).
//   - The population path (pop.go, kernels/pop.cu): a forward of a small
//     genome (one image's activations fit in the dynamic shared memory a
//     block may opt into, Info.PopShared: 227 KiB on sm_90) on a cached
//     data set in fp32 launches no layer of its own. It
//     queues; whoever next runs a launch takes every queued forward, of any
//     genomes, and scores them all with two launches: pop_forward, whose
//     blocks each carry a tile of one genome's images through the whole
//     genome in shared memory (a device table of the genomes' steps), and
//     pop_reduce, one block per forward. One such launch is in flight at a
//     time; what queues behind it is the next. The kernels repeat the
//     per-layer kernels' arithmetic, so the stats are the same bit for bit
//     whichever path ran (NEATEVAL_CUDA_POPULATION=off: per-layer only).
//
// Compute precision (BackendOptions.ComputePrecision): "fp32", the
// default, runs the products in float32 FMA (gemm.cu); "tf32" runs them on
// the tensor cores (gemm_tc.cu: mma.sync m16n8k8, operands rounded to TF32,
// float32 sums), within a measured tolerance of the CPU backend (NOTES.md).
// The emulator runs both, the MMA through a C++ twin of its semantics.
//
// Footprint is exact: a genome's weight block and its forward's arena are
// the only allocations Load and Forward make.
package cuda
