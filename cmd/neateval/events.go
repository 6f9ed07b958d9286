package main

// The log schema. Every log line neateval writes is one event: a JSON object
// (with --log-format json, or whenever stderr is not a terminal) in which
// `time`, `level` and `event` are always present:
//
//	time     RFC 3339 with milliseconds and the local offset: "2025-01-02T15:04:05.123+01:00"
//	level    trace | debug | info | warn | error
//	event    one of the Ev* names below: stable, for machines
//	message  free text for humans; may change between versions
//
// then the event's fields. Sizes are in bytes, durations in seconds
// (float); in log lines a genome's id is "genome" (in the results file,
// "genome_id"). Fields marked ⁺ are present only where they apply.
//
// Events of the command line (this package; keys are the Key* constants):
//
//	run_start          version, config, backend, dtype, eval_batch_size, fitness_eval_parallel, threads, results, resume
//	dataset_loaded     dataset, split, images, channels, height, width, classes, seconds
//	population_loaded  population, genomes, invalid, params, weight_bytes, digest, seconds
//	device             backend, device, dtype, memory_bytes
//	resume             results, done, remaining
//	results_written    results, genomes
//	run_summary        genomes, failed, images, seconds, images_genomes_per_s, best_fitness⁺, best_genome⁺, mean_fitness⁺
//	run_interrupted    results, error
//	run_failed         error
//
// Events of `neateval evolve` (besides run_interrupted, dataset_loaded and
// resume, with fields of their own):
//
//	evolve_start       version, config, backend, population_size, generations, seed, checkpoint_dir, resume
//	generation         gen, best, mean, species, params, flops, nodes, best_genome, best_ever, evaluated,
//	                   failed, threshold, mode⁺, chunks⁺, seconds: one line per generation, after its
//	                   checkpoint; params, flops and nodes are the generation's best genome's
//	evolve_done        best_genome, gen, best, val_accuracy, val_loss, test_accuracy, test_loss,
//	                   test_images, params, flops, generations, best_file, seconds
//
// Events of the other packages, which take a zerolog.Logger and own their
// field names (see their constants):
//
//	plan               staging: mode, total_bytes, fixed_bytes, model_budget_bytes, peak_budget_bytes,
//	                   peak_predicted_bytes, single_budget, genomes, genomes_per_chunk, chunks,
//	                   chunks_lower_bound, chunks_by_largest, prefetch; the message is the seed's POP line
//	chunk_done         evaluator: chunk, chunks, genomes, load_wait, elapsed
//	genome_done        evaluator (debug): genome, index, fitness, images, batch, seconds
//	genome_error       evaluator (warn): the same and error
//	genome_invalid     evaluator (warn): genome, index; the message is the error
//	batch_shrink       vram: genome, old_batch, new_batch, bytes_requested, bytes_free, reason (oom | threshold)
//	batch_grow         vram: the same, reason probe
//	batch_retry        vram: the same and attempt
//	batch_exhausted    vram (warn): the same; the genome gets an error result
const (
	EvRunStart         = "run_start"
	EvDatasetLoaded    = "dataset_loaded"
	EvPopulationLoaded = "population_loaded"
	EvDevice           = "device"
	EvPlan             = "plan"
	EvResume           = "resume"
	EvChunkDone        = "chunk_done"
	EvGenomeDone       = "genome_done"
	EvGenomeError      = "genome_error"
	EvGenomeInvalid    = "genome_invalid"
	EvBatchShrink      = "batch_shrink"
	EvBatchGrow        = "batch_grow"
	EvBatchRetry       = "batch_retry"
	EvBatchExhausted   = "batch_exhausted"
	EvResultsWritten   = "results_written"
	EvRunSummary       = "run_summary"
	EvRunInterrupted   = "run_interrupted"
	EvRunFailed        = "run_failed"
	EvEvolveStart      = "evolve_start"
	EvGeneration       = "generation"
	EvEvolveDone       = "evolve_done"
)

// Field keys of this package's events.
const (
	KeyEvent               = "event"
	KeyVersion             = "version"
	KeyConfig              = "config"
	KeyBackend             = "backend"
	KeyDType               = "dtype"
	KeyEvalBatchSize       = "eval_batch_size"
	KeyFitnessEvalParallel = "fitness_eval_parallel"
	KeyThreads             = "threads"
	KeyResults             = "results"
	KeyResume              = "resume"
	KeyDataset             = "dataset"
	KeySplit               = "split"
	KeyImages              = "images"
	KeyChannels            = "channels"
	KeyHeight              = "height"
	KeyWidth               = "width"
	KeyClasses             = "classes"
	KeyPopulation          = "population"
	KeyGenomes             = "genomes"
	KeyInvalid             = "invalid"
	KeyParams              = "params"
	KeyWeightBytes         = "weight_bytes"
	KeyDigest              = "digest"
	KeyDevice              = "device"
	KeyMemoryBytes         = "memory_bytes"
	KeyDone                = "done"
	KeyRemaining           = "remaining"
	KeySeconds             = "seconds"
	KeyFailed              = "failed"
	KeyImagesGenomesPerS   = "images_genomes_per_s"
	KeyBestFitness         = "best_fitness"
	KeyBestGenome          = "best_genome"
	KeyMeanFitness         = "mean_fitness"
	KeyError               = "error" // zerolog.ErrorFieldName
	KeyGen                 = "gen"
	KeyBest                = "best"
	KeyMean                = "mean"
	KeySpecies             = "species"
	KeyFLOPs               = "flops"
	KeyNodes               = "nodes"
	KeyBestEver            = "best_ever"
	KeyEvaluated           = "evaluated"
	KeyThreshold           = "threshold"
)
