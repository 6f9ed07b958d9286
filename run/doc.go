// Package run does what the neateval commands do, as a library: score a
// population into a results file (Run), evolve one with NEAT (Evolve), and
// plan how a population would be staged on a device (Plan), each from a
// validated config.Config, with the logger and a progress hook injected.
//
// Run is `neateval run` without the command line:
//
//	cfg, err := config.Load("config.toml")
//	...
//	log := run.NewLogger("json", "info", os.Stderr)
//	summary, err := run.Run(ctx, run.Spec{Config: cfg, Resume: true, Logger: &log})
//
// It opens the data set and the population (loaded, or generated from the
// [population] keys), opens the backend eval.backend names, and scores the
// genomes the results file does not hold yet through an evaluator.Evaluator,
// appending each finished chunk's results to the file (results.Writer) and
// rewriting it in population order at the end. Cancelling ctx stops it
// between slices with an *InterruptedError; the file keeps what was scored,
// and a run with Resume finishes it, with the same results as a run that
// never stopped. A run that completes with some genomes' error results
// returns *GenomeErrors.
//
// Evolve is `neateval evolve`: a NEAT loop (neat.Evolution) scored by one
// evaluator for the whole run, checkpointed every
// evolve.checkpoint_seconds (in the background, while the next generation
// is scored), at the end and when it stops early, so that a killed run
// resumes exactly; its best genome is scored on a held-out test set at the
// end.
//
// Every line the package logs is one event of the schema in
// docs/log-events.md; this package declares its events and field keys
// (Event…, Key…) in events.go, and every other package declares its own.
package run
