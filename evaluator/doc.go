// Package evaluator computes the fitness of CNN genomes: it compiles each
// genome into a forward program, runs it over a validation set on a
// backend, and reduces the logits to accuracy and loss.
//
// A Backend owns a device (vram.Device) and its kernels. The CPU backend is
// always built: its device is an arena of fixed capacity, so weights,
// activations and workspace are really allocated, and a batch that is too
// large fails with the same out-of-memory error a GPU gives. The CUDA
// backend registers itself from a package built with the cuda tag.
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
//	b, _ := evaluator.NewCPU(evaluator.BackendOptions{MemoryBytes: 4 << 30, Threads: 2})
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
