package main

import (
	"context"
	"errors"
)

// runEval scores the population that env.Config describes and writes the
// results file. It is a variable so that the command line can be tested
// apart from the evaluation.
//
// TODO(lead): wire the evaluation here (see evaluate).
var runEval = evaluate

// errNotWired is evaluate's error until the evaluation is wired in.
var errNotWired = errors.New("the evaluation is not wired into the command line yet (cmd/neateval/eval.go)")

// evaluate is the run itself. THE LEAD FILLS THIS IN. Its contract with
// runRun:
//
//   - load the dataset (datasets.Open; dataset.path "" for mnist is found
//     by datasets.LocateMNIST) and log dataset_loaded;
//   - load (neat.Load) or generate the population, log population_loaded;
//   - build the results header: populationFileDigest(path) or
//     populationDigest(pop), len(genomes), the dataset's name and size,
//     cfg.Eval.Fitness; then CreateResults, or ResumeResults when
//     env.Resume (skipping the indexes it returns, logging resume);
//   - env.Progress.Start(total, len(done)); per finished chunk:
//     w.Append(chunk results) and env.Progress.Add(n, images);
//   - when every genome has a result: w.Finalize(all in population order),
//     log results_written, summarize(all, done, wall).log(&env.Log);
//     return &GenomeErrors{...} when some results are errors, else nil;
//   - on ctx cancellation: w.Close() (keeping what was appended) and return
//     an error wrapping ctx.Err(); runRun logs run_interrupted and maps it
//     to exit code 130;
//   - other errors are returned as they are: runRun logs run_failed.
func evaluate(ctx context.Context, env evalEnv) error {
	return errNotWired
}
