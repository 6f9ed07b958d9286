// Package config is neateval's configuration: the strict TOML schema of
// config.toml (the seed's key names and defaults), its validation, the
// overlay of command-line flags on keys, and the methods that turn it into
// the libraries' option structs.
//
// Load reads a file over Default; keys missing from the file keep their
// defaults. Everything a user can get wrong is refused by name, with the
// file, the key and, where TOML knows it, the line:
//
//	config.toml: unknown key "eval.eval_batchsize" (did you mean "eval.eval_batch_size"?)
//	config.toml: vram.vram_usage_threshold = 1.5: must be in (0, 1]
//	config.toml: line 2 (key "vram.memory_bytes"): invalid size "16 GB of RAM": ...
//
// Every default is written once, by the library it belongs to
// (staging.DefaultConfig, vram.DefaultEvalBatchSize, neat.DefaultEvolveConfig),
// and Default reads it from there; the shipped config.toml is held to
// Default by a test. The [evolve] table decodes straight into an embedded
// neat.EvolveConfig, whose toml tags name its keys.
//
// Overrides binds flags to keys, so that every command merges its flags
// the same way and a bad value set by a flag is reported under the flag's
// name (*FlagError). StagingConfig, BackendOptions, EvaluatorOptions,
// DatasetSpec and FitnessFunc build the libraries' options from the keys:
// the one place where a key becomes an option.
package config
