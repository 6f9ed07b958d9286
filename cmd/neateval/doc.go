// Command neateval scores populations of CNN genomes (NEAT) on a labelled
// image set and writes one result per genome as JSON Lines.
//
// This package is the command line only: one cmd_<verb>.go per command
// parses its flags (config keys through config.Overrides), calls the
// library that does the work (run.Run, run.Evolve, run.Plan,
// bench/harness.Run, neat.Generate), prints to the terminal (the progress
// bar, the plan's table, the bench's table) and maps errors to exit codes
// in one place, errors.go, which also adds what the user can do about them.
//
//	neateval run --config config.toml [flags]   score a population
//	neateval plan --config config.toml          the memory plan, without running
//	neateval gen --out pop/pop.json [flags]     write a seeded random population
//	neateval evolve --config config.toml        NEAT on the configured data set
//	neateval bench [flags]                      CPU speed against PyTorch and the ceiling
//	neateval version | help [command]
package main
