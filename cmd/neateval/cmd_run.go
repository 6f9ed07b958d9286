package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

// runOptions are the flags of `neateval run` that set no config key.
type runOptions struct {
	ConfigPath string // "" = built-in defaults
	Resume     bool
}

// newRunFlags declares run's flags: --config, --resume, and one flag per
// config key it overrides.
func newRunFlags(o *runOptions) (*flag.FlagSet, *config.Overrides) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.BoolVar(&o.Resume, "resume", false, "continue an interrupted run: score only the genomes missing from the results file (which must belong to the same population, dataset and fitness)")
	ov := config.NewOverrides(fs)
	ov.Bind("population", "population.path", "population JSON `FILE` (population.path); empty: generate one")
	ov.Bind("dataset-kind", "dataset.kind", "dataset `KIND`: mnist, fashion-mnist, idx, cifar10 or synthetic (dataset.kind)")
	ov.Bind("dataset-path", "dataset.path", "`DIR` of the dataset files (dataset.path)")
	ov.Bind("limit", "dataset.limit", "score on the first `N` images only, 0 = all (dataset.limit)")
	ov.Bind("backend", "eval.backend", "`B`: cpu, cuda or auto (eval.backend)")
	ov.Bind("device", "eval.device", "GPU `N` a GPU backend opens: its CUDA device index; with --workers, worker k opens N+k (eval.device)")
	ov.Bind("eval-batch-size", "eval.eval_batch_size", "images per forward slice, `N` (eval.eval_batch_size)")
	ov.Bind("fitness-eval-parallel", "eval.fitness_eval_parallel", "forwards in flight at once, `N` (eval.fitness_eval_parallel)")
	ov.Bind("results", "output.results", "results `FILE`, JSON Lines (output.results)")
	bindLogFlags(ov)
	bindClusterFlags(ov)
	ov.Bind("progress", "output.progress", "progress bar on stderr, `P`: auto, on or off (output.progress)")
	return fs, ov
}

// bindLogFlags declares the logging flags every long command has.
func bindLogFlags(ov *config.Overrides) {
	ov.Bind("log-format", "output.log_format", "`F`: auto, console or json (output.log_format)")
	ov.Bind("log-level", "output.log_level", "`L`: trace, debug, info, warn or error (output.log_level)")
	ov.Bind("tb-logdir", "output.tb_logdir", "write TensorBoard scalars to an event file in `DIR` (output.tb_logdir)")
}

// cmdRun is `neateval run`: flags, the progress bar, then run.Run.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o runOptions
	fs, ov := newRunFlags(&o)
	if err := parseFlags(fs, args, stdout, runUsage); err != nil {
		return err
	}
	cfg, err := ov.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	prog := run.NewProgressBar(stderr, cfg.Output.Progress)
	log := run.NewLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, prog.Writer())
	_, err = run.Run(ctx, run.Spec{Config: cfg, ConfigName: o.ConfigPath, Resume: o.Resume, Logger: &log, Progress: prog, Remote: remoteFor(cfg)})
	prog.Finish()
	if err != nil && !isOutcome(err) {
		return fmt.Errorf("run: %w", err)
	}
	return err
}
