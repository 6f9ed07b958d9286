package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	"github.com/rs/zerolog"
)

// runOptions are the flags of `neateval run`. Every flag but --config and
// --resume overrides one config key (runFlagKeys), and only when given.
type runOptions struct {
	ConfigPath          string // "" = built-in defaults
	Resume              bool
	Population          string
	DatasetKind         string
	DatasetPath         string
	Results             string
	LogFormat           string
	LogLevel            string
	Progress            string
	Backend             string
	Limit               int
	EvalBatchSize       int
	FitnessEvalParallel int

	// set holds the names of the flags given on the command line.
	set map[string]bool
}

// runFlagKeys maps each overriding flag to the config key it sets.
var runFlagKeys = map[string]string{
	"population":            "population.path",
	"dataset-kind":          "dataset.kind",
	"dataset-path":          "dataset.path",
	"limit":                 "dataset.limit",
	"backend":               "eval.backend",
	"eval-batch-size":       "eval.eval_batch_size",
	"fitness-eval-parallel": "eval.fitness_eval_parallel",
	"results":               "output.results",
	"log-format":            "output.log_format",
	"log-level":             "output.log_level",
	"progress":              "output.progress",
}

func newRunFlags(o *runOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.BoolVar(&o.Resume, "resume", false, "continue an interrupted run: score only the genomes missing from the results file (which must belong to the same population, dataset and fitness)")
	fs.StringVar(&o.Population, "population", "", "population JSON `FILE` (population.path); empty: generate one")
	fs.StringVar(&o.DatasetKind, "dataset-kind", "", "dataset `KIND`: mnist, fashion-mnist, idx, cifar10 or synthetic (dataset.kind)")
	fs.StringVar(&o.DatasetPath, "dataset-path", "", "`DIR` of the dataset files (dataset.path)")
	fs.IntVar(&o.Limit, "limit", 0, "score on the first `N` images only, 0 = all (dataset.limit)")
	fs.StringVar(&o.Backend, "backend", "", "`B`: cpu, cuda or auto (eval.backend)")
	fs.IntVar(&o.EvalBatchSize, "eval-batch-size", 0, "images per forward slice, `N` (eval.eval_batch_size)")
	fs.IntVar(&o.FitnessEvalParallel, "fitness-eval-parallel", 0, "forwards in flight at once, `N` (eval.fitness_eval_parallel)")
	fs.StringVar(&o.Results, "results", "", "results `FILE`, JSON Lines (output.results)")
	fs.StringVar(&o.LogFormat, "log-format", "", "`F`: auto, console or json (output.log_format)")
	fs.StringVar(&o.LogLevel, "log-level", "", "`L`: trace, debug, info, warn or error (output.log_level)")
	fs.StringVar(&o.Progress, "progress", "", "progress bar on stderr, `P`: auto, on or off (output.progress)")
	return fs
}

// cmdRun parses the flags of `neateval run` and runs it.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o runOptions
	fs := newRunFlags(&o)
	if err := parseFlags(fs, args, stdout, runUsage); err != nil {
		return err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return runRun(ctx, o, stderr)
}

// apply writes the flags that were given over cfg.
func (o *runOptions) apply(cfg *Config) {
	str := func(name string, dst *string, v string) {
		if o.set[name] {
			*dst = v
		}
	}
	num := func(name string, dst *int, v int) {
		if o.set[name] {
			*dst = v
		}
	}
	str("population", &cfg.Population.Path, o.Population)
	str("dataset-kind", &cfg.Dataset.Kind, o.DatasetKind)
	str("dataset-path", &cfg.Dataset.Path, o.DatasetPath)
	num("limit", &cfg.Dataset.Limit, o.Limit)
	str("backend", &cfg.Eval.Backend, o.Backend)
	num("eval-batch-size", &cfg.Eval.EvalBatchSize, o.EvalBatchSize)
	num("fitness-eval-parallel", &cfg.Eval.FitnessEvalParallel, o.FitnessEvalParallel)
	str("results", &cfg.Output.Results, o.Results)
	str("log-format", &cfg.Output.LogFormat, o.LogFormat)
	str("log-level", &cfg.Output.LogLevel, o.LogLevel)
	str("progress", &cfg.Output.Progress, o.Progress)
}

// loadRunConfig reads the config (or takes the defaults), merges the flags
// over it and validates the result. A bad value set by a flag is reported
// under the flag's name.
func loadRunConfig(o runOptions) (*Config, error) {
	cfg := DefaultConfig()
	if o.ConfigPath != "" {
		var err error
		if cfg, err = LoadConfig(o.ConfigPath); err != nil {
			return nil, err
		}
	}
	o.apply(cfg)
	if err := cfg.Validate(); err != nil {
		var ve *ValueError
		if errors.As(err, &ve) {
			for name, key := range runFlagKeys {
				if o.set[name] && key == ve.Key {
					return nil, usagef("flag --%s: %v", name, err)
				}
			}
		}
		// A rule across keys (dataset.path for a kind, say) broken by the
		// merge of a valid file and valid flags.
		var given []string
		for name := range runFlagKeys {
			if o.set[name] {
				given = append(given, "--"+name)
			}
		}
		sort.Strings(given)
		src := "the built-in defaults"
		if o.ConfigPath != "" {
			src = o.ConfigPath
		}
		return nil, &ConfigError{File: src + " with " + strings.Join(given, ", "), Err: err}
	}
	return cfg, nil
}

// evalEnv is what runRun hands to runEval.
type evalEnv struct {
	Config     *Config // validated, flags merged
	ConfigPath string  // "" when the built-in defaults are used
	Resume     bool    // --resume: continue the results file instead of replacing it
	Log        zerolog.Logger
	// Progress is the run's progress bar; never nil (it draws nothing when
	// disabled). runEval calls Start once the population and the results
	// already done are known, and Add as genomes finish; runRun calls
	// Finish.
	Progress *progress
}

// runRun is `neateval run` once its flags are parsed.
func runRun(ctx context.Context, o runOptions, stderr io.Writer) error {
	cfg, err := loadRunConfig(o)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, cfg.Output.Progress)
	log := newLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, prog.Writer())
	threads := cfg.Eval.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	configName := o.ConfigPath
	if configName == "" {
		configName = "(defaults)"
	}
	logEvent(&log, zerolog.InfoLevel, EvRunStart).
		Str(KeyVersion, buildVersion()).
		Str(KeyConfig, configName).
		Str(KeyBackend, cfg.Eval.Backend).
		Str(KeyDType, cfg.Eval.DType).
		Int(KeyEvalBatchSize, cfg.Eval.EvalBatchSize).
		Int(KeyFitnessEvalParallel, cfg.Eval.FitnessEvalParallel).
		Int(KeyThreads, threads).
		Str(KeyResults, cfg.Output.Results).
		Bool(KeyResume, o.Resume).
		Msg("neateval run")

	err = runEval(ctx, evalEnv{Config: cfg, ConfigPath: o.ConfigPath, Resume: o.Resume, Log: log, Progress: prog})
	prog.Finish()

	var ge *GenomeErrors
	switch {
	case err == nil, errors.As(err, &ge):
		return err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		ie := &interruptedError{results: cfg.Output.Results, err: err}
		logEvent(&log, zerolog.WarnLevel, EvRunInterrupted).Str(KeyResults, cfg.Output.Results).Err(err).Msg(ie.Error())
		return ie
	}
	logEvent(&log, zerolog.ErrorLevel, EvRunFailed).Err(err).Msg("run failed")
	return fmt.Errorf("run: %w", err)
}
