package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// evolveOptions are the flags of `neateval evolve`.
type evolveOptions struct {
	ConfigPath  string
	Resume      bool
	Generations int
	LogFormat   string
	LogLevel    string
	set         map[string]bool
}

// evolveFlagKeys maps each overriding flag to the config key it sets.
var evolveFlagKeys = map[string]string{
	"generations": "evolve.generations",
	"log-format":  "output.log_format",
	"log-level":   "output.log_level",
}

func newEvolveFlags(o *evolveOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("evolve", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run in evolve.checkpoint_dir from its last finished generation (it must have been made with the same [evolve] keys, data set and fitness); without a checkpoint, start one")
	fs.IntVar(&o.Generations, "generations", 0, "generations to run in all, `N` (evolve.generations)")
	fs.StringVar(&o.LogFormat, "log-format", "", "`F`: auto, console or json (output.log_format)")
	fs.StringVar(&o.LogLevel, "log-level", "", "`L`: trace, debug, info, warn or error (output.log_level)")
	return fs
}

// cmdEvolve parses the flags of `neateval evolve` and runs it.
func cmdEvolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o evolveOptions
	fs := newEvolveFlags(&o)
	if err := parseFlags(fs, args, stdout, evolveUsage); err != nil {
		return err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	cfg, err := loadEvolveConfig(o)
	if err != nil {
		return err
	}
	return runEvolve(ctx, cfg, o.ConfigPath, o.Resume, stdout, stderr)
}

// loadEvolveConfig reads the config (or takes the defaults), merges the
// flags over it and validates the result; a bad flag value is reported
// under the flag's name.
func loadEvolveConfig(o evolveOptions) (*Config, error) {
	cfg := DefaultConfig()
	if o.ConfigPath != "" {
		var err error
		if cfg, err = LoadConfig(o.ConfigPath); err != nil {
			return nil, err
		}
	}
	if o.set["generations"] {
		cfg.Evolve.Generations = o.Generations
	}
	if o.set["log-format"] {
		cfg.Output.LogFormat = o.LogFormat
	}
	if o.set["log-level"] {
		cfg.Output.LogLevel = o.LogLevel
	}
	if err := cfg.Validate(); err != nil {
		var ve *ValueError
		if errors.As(err, &ve) {
			for name, key := range evolveFlagKeys {
				if o.set[name] && key == ve.Key {
					return nil, usagef("flag --%s: %v", name, err)
				}
			}
		}
		return nil, err
	}
	return cfg, nil
}

// evolveInterrupted is the error of a run stopped by a signal. It matches
// context.Canceled, so exitCode maps it to exitInterrupted.
type evolveInterrupted struct {
	dir string
	gen int // the generation the checkpoint resumes at
	err error
}

func (e *evolveInterrupted) Error() string {
	return fmt.Sprintf("interrupted; the checkpoint in %s resumes at generation %d (run again with --resume to continue)", e.dir, e.gen)
}

func (e *evolveInterrupted) Unwrap() error { return e.err }

// runEvolve is `neateval evolve` with a validated config:
//
//   - open the validation and test sets (openEvolveData) and the backend;
//   - create the evaluator once, for the whole run: the validation set
//     stays on the device across generations when cache_val_on_gpu;
//   - start the run, or with --resume load the checkpoint (refusing one made
//     under another configuration);
//   - each generation: Step (the evaluator scores the genomes whose fitness
//     is not known; the plan line is its own), checkpoint, log the
//     generation line, and write the best genome when it changed;
//   - at the end, score the best genome on the validation and test sets.
func runEvolve(ctx context.Context, cfg *Config, configPath string, resume bool, stdout, stderr io.Writer) error {
	log := newLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, stderr)
	ec := &cfg.Evolve
	start := time.Now()
	if configPath == "" {
		configPath = "(defaults)"
	}
	logEvent(&log, zerolog.InfoLevel, EvEvolveStart).Str(KeyVersion, buildVersion()).Str(KeyConfig, configPath).
		Str(KeyBackend, cfg.Eval.Backend).Int("population_size", ec.PopulationSize).Int("generations", ec.Generations).
		Int64("seed", ec.Seed).Str("checkpoint_dir", ec.CheckpointDir).Bool(KeyResume, resume).Msg("neateval evolve")

	val, test, err := openEvolveData(cfg)
	if err != nil {
		return err
	}
	logEvent(&log, zerolog.InfoLevel, EvDatasetLoaded).Str(KeyDataset, val.Name).Int(KeyImages, val.N).
		Str("test", test.Name).Int("test_images", test.N).
		Msgf("validation %s: %d images; test %s: %d images", val.Name, val.N, test.Name, test.N)

	b, err := openBackend(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	opts := evaluator.Options{
		EvalBatchSize:      cfg.Eval.EvalBatchSize,
		Parallel:           cfg.Eval.FitnessEvalParallel,
		Threads:            cfg.Eval.Threads,
		VRAMUsageThreshold: cfg.VRAM.VRAMUsageThreshold,
		CacheData:          cfg.VRAM.CacheValOnGPU,
		Fitness:            evolveFitness(cfg),
		Logger:             &log,
	}
	ev, err := evaluator.New(b, val, stagingConfig(cfg), opts)
	if err != nil {
		return err
	}
	defer func() {
		if ev != nil {
			ev.Close()
		}
	}()

	evo, err := openEvolution(cfg, val.Channels, val.Height, val.Width, val.NumClasses, resume, &log)
	if err != nil {
		return err
	}
	identity := evolveIdentity(cfg)
	fitness := func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		rs, err := ev.Evaluate(ctx, pop, nil)
		if err != nil {
			return nil, err
		}
		fs := make([]float64, len(rs))
		for i, r := range rs {
			fs[i] = math.NaN()
			if r.OK() {
				fs[i] = r.Fitness
			}
		}
		return fs, nil
	}
	lastBest := int64(-1)
	if g, _, _ := evo.Best(); g != nil {
		lastBest = g.ID
	}
	for evo.Generation() < ec.Generations {
		t := time.Now()
		st, err := evo.Step(ctx, fitness)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				ie := &evolveInterrupted{dir: ec.CheckpointDir, gen: evo.Generation(), err: err}
				logEvent(&log, zerolog.WarnLevel, EvRunInterrupted).Str("checkpoint_dir", ec.CheckpointDir).Err(err).Msg(ie.Error())
				return ie
			}
			return fmt.Errorf("evolve: generation %d: %w", evo.Generation(), err)
		}
		if err := evo.SaveCheckpoint(ec.CheckpointDir, identity); err != nil {
			return fmt.Errorf("evolve: %w", err)
		}
		logGeneration(&log, st, ev, evo, time.Since(t))
		if g, _, _ := evo.Best(); g != nil && g.ID != lastBest {
			if err := writeBest(ec.Best, evo); err != nil {
				return err
			}
			lastBest = g.ID
		}
	}
	return finishEvolve(ctx, cfg, evo, &ev, b, test, opts, start, &log, stdout)
}

// openEvolution starts the run, or continues the one in the checkpoint.
func openEvolution(cfg *Config, c, h, w, classes int, resume bool, log *zerolog.Logger) (*neat.Evolution, error) {
	dir := cfg.Evolve.CheckpointDir
	if neat.CheckpointExists(dir) {
		if !resume {
			return nil, usagef("evolve: %s holds a checkpoint; pass --resume to continue it, or remove the folder to start over", dir)
		}
		evo, identity, err := neat.LoadCheckpoint(dir)
		if err != nil {
			return nil, fmt.Errorf("evolve: %w", err)
		}
		if now := evolveIdentity(cfg); identity != now {
			return nil, &ConfigError{File: dir, Err: fmt.Errorf("the checkpoint was made under another configuration: %s (resume with the same, or remove the folder to start over)",
				identityDiff(identity, now))}
		}
		logEvent(log, zerolog.InfoLevel, EvResume).Str("checkpoint_dir", dir).Int("generation", evo.Generation()).
			Msgf("resuming at generation %d", evo.Generation())
		return evo, nil
	}
	if resume {
		logEvent(log, zerolog.InfoLevel, EvResume).Str("checkpoint_dir", dir).Int("generation", 0).
			Msgf("no checkpoint in %s: starting at generation 0", dir)
	}
	evo, err := neat.NewEvolution(neat.Input{Channels: c, Height: h, Width: w}, classes, cfg.Evolve.neatConfig())
	if err != nil {
		return nil, fmt.Errorf("evolve: %w", err)
	}
	return evo, nil
}

// evolveFitness is eval.fitness less evolve.param_penalty per parameter.
func evolveFitness(cfg *Config) evaluator.FitnessFunc {
	base, pen := fitnessFunc(cfg.Eval.Fitness), cfg.Evolve.ParamPenalty
	if pen == 0 {
		return base
	}
	return func(m evaluator.Metrics) float64 { return base(m) - pen*float64(m.Params) }
}

// logGeneration writes the generation line.
func logGeneration(log *zerolog.Logger, st neat.GenStats, ev *evaluator.Evaluator, evo *neat.Evolution, took time.Duration) {
	_, bestFit, _ := evo.Best()
	e := logEvent(log, zerolog.InfoLevel, EvGeneration).Int(KeyGen, st.Generation).
		Float64(KeyBest, st.Best).Float64(KeyMean, st.Mean).Int(KeySpecies, st.Species).
		Int64(KeyParams, st.BestParams).Int64(KeyFLOPs, st.BestFLOPs).Int(KeyNodes, st.BestNodes).
		Int64(KeyBestGenome, st.BestGenome).Float64(KeyBestEver, bestFit).
		Int(KeyEvaluated, st.Evaluated).Int(KeyFailed, st.Failed).Float64(KeyThreshold, st.Threshold)
	if p := ev.Manager().Plan(); p != nil {
		e = e.Str("mode", string(p.Mode)).Int("chunks", len(p.Chunks))
	}
	e.Dur(KeySeconds, took).Msgf("gen %d: best %.4f mean %.4f, %d species, best %d params %d nodes",
		st.Generation, st.Best, st.Mean, st.Species, st.BestParams, st.BestNodes)
}

// writeBest writes the best genome so far as a population of one.
func writeBest(path string, evo *neat.Evolution) error {
	g, _, _ := evo.Best()
	if g == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("evolve: %w", err)
	}
	pop := evo.Population()
	pop.Genomes = []*neat.Genome{g}
	weights := strings.TrimSuffix(filepath.Base(path), ".json") + ".safetensors"
	if err := neat.Save(pop, path, weights); err != nil {
		return fmt.Errorf("evolve: best genome: %w", err)
	}
	return nil
}
