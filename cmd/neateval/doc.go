// Command neateval scores populations of CNN genomes (NEAT) on a labelled
// image set and writes one result per genome as JSON Lines.
//
// Commands (one cmd_<verb>.go each, flag wiring apart from a testable
// run<Verb>):
//
//	neateval run --config config.toml [flags]   score a population
//	neateval gen --out pop/pop.json [flags]     write a seeded random population
//	neateval version                            version, Go, platform, CPU features
//	neateval help [command]                     usage
//
// The config (config.go, config_validate.go) is strict TOML: unknown keys
// and out-of-range values are refused by name. Logs (logging.go) are
// zerolog lines with a stable "event" field whose schema is events.go. The
// results file (results.go) holds one genome's result per line, each
// carrying the run's id; it is appended and synced per chunk and rewritten
// in population order at the end, so --resume can continue a killed run.
// Exit codes are mapped in one place, errors.go.
package main
