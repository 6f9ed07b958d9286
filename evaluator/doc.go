// Package evaluator computes the fitness of CNN genomes on any backend: it
// compiles each genome into a forward program, plans which genomes share
// the device when, runs their forwards over a validation set on a Backend,
// and turns the reductions into accuracy, loss and fitness.
//
// The package holds what every backend shares: the Backend interface, the
// registry of backends by name, and the orchestration. It computes no
// forward itself.
//
// # Backends
//
// A Backend owns a device (vram.Device) and its kernels: it loads a
// genome's weights, runs a forward over a slice of images and reduces the
// logits to SliceStats (Reduce defines them), and predicts its own memory
// (Footprint). Each backend lives in its own package and registers itself
// by name from init:
//
//   - evaluator/cpu, "cpu": the host's cores, in an arena of fixed capacity;
//   - evaluator/cuda, "cuda": an NVIDIA GPU, built with the cuda tag.
//
// A program uses a backend's package directly (cpu.New), or links the
// packages it wants (a blank import) and opens one by name with
// OpenBackend; "auto" opens the GPU backend when one is linked and opens,
// and the CPU backend otherwise.
//
// # Orchestration
//
// An Evaluator ties a backend to a data set for a whole experiment. Each
// generation, Evaluate:
//
//  1. compiles every genome (an invalid one gets its error result, the
//     others go on);
//  2. asks the staging manager for a plan (gpu_resident or cpu_staged, the
//     chunks) from each genome's Footprint;
//  3. for each chunk, loads the weights, scores up to fitness_eval_parallel
//     genomes at once, each forward walking the data set in slices chosen by
//     the VRAMBatchController (halved on a real out-of-memory, the same
//     slice retried), and unloads the chunk;
//  4. returns one Result per genome, in population order, and hands each
//     finished chunk's results to the caller as it completes.
//
// In a program:
//
//	b, _ := cpu.New(evaluator.BackendOptions{MemoryBytes: 4 << 30, Threads: 2})
//	defer b.Close()
//	e, _ := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{Fitness: evaluator.Accuracy})
//	defer e.Close()
//	results, err := e.Evaluate(ctx, pop, nil)
//
// Fitness does not depend on the batch size, the chunking, the memory mode,
// the parallelism or the backend, beyond float rounding; the conformance
// suite in evaltest holds every backend to that against a float64
// reference.
package evaluator
