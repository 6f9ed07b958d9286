// Package staging decides which genomes are on the device when: it is the
// PopulationVRAMManager of the seed design.
//
// Each generation, PrepareForEval looks at every genome's predicted memory
// (its weights, M_model, and the activations of one forward at the
// evaluation batch size, M_act) and picks a mode:
//
//   - gpu_resident, when all models plus the activations of the forwards in
//     flight fit in population_vram_resident_threshold (0.50) of device
//     memory, and under the peak ceiling below: every genome is loaded once
//     for the generation;
//   - cpu_staged otherwise: the population stays in host memory and moves
//     through the device in chunks.
//
// Chunks obey two budgets. With population_gpu_chunk_bytes set, a chunk's
// weights stay within it, and its peak — weights plus the activations of
// min(n, P) forwards, P = fitness_eval_parallel — stays within
// vram_usage_threshold × M_VRAM − M_fixed, where M_fixed is the validation
// cache, cuda_graph_memory_reserve_bytes and whatever else is allocated.
// Without it, one budget of population_gpu_batch_frac_min..max of device
// memory holds weights and activations together.
//
// Unlike the seed, which sizes every slot by the largest genome, chunks are
// packed by each genome's own size (first-fit decreasing, once by weights
// and once by activations, keeping the packing with fewer chunks), and the
// plan reports how close that came to a lower bound (Plan.LowerBound).
// While one chunk is evaluated the next one loads, when the peak ceiling
// has room for both.
//
// The lifecycle is the seed's: PrepareForEval, IterEvalChunks, LoadChunk,
// UnloadChunk. The evaluator drives it; a program embedding neateval can
// drive it too.
package staging
