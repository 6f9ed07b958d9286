package evaluator

// The events the evaluator logs (the "event" field), and their field keys.
// They are part of the log schema (docs/log-events.md): stable, lowercase.
const (
	// EventChunkDone: a chunk's genomes are scored and it is unloaded.
	EventChunkDone = "chunk_done"
	// EventGenomeDone (debug): a genome is scored.
	EventGenomeDone = "genome_done"
	// EventGenomeError (warn): a genome got an error result while scored.
	EventGenomeError = "genome_error"
	// EventGenomeInvalid (warn): a genome failed to compile; the message
	// is the error.
	EventGenomeInvalid = "genome_invalid"
	// EventLoadOOM (warn): a genome's weights did not fit on the device
	// when loaded.
	EventLoadOOM = "load_oom"
)

// Field keys of the evaluator's events.
const (
	KeyEvent    = "event"
	KeyGenome   = "genome"
	KeyIndex    = "index"
	KeyFitness  = "fitness"
	KeyImages   = "images"
	KeyBatch    = "batch"
	KeySeconds  = "seconds"
	KeyError    = "error"
	KeyChunk    = "chunk"
	KeyChunks   = "chunks"
	KeyGenomes  = "genomes"
	KeyLoadWait = "load_wait"
	KeyElapsed  = "elapsed"
)
