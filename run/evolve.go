package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/tfevents"
)

// EvolveSpec is one NEAT run: what `neateval evolve` does with its config
// (the [evolve] table, the data set, eval and memory keys).
type EvolveSpec struct {
	Config     *config.Config // validated
	ConfigName string         // for the evolve_start line; "" is "(defaults)"
	// Resume continues the run in evolve.checkpoint_dir from its last
	// finished generation (it must have been made under the same [evolve]
	// keys, data set and fitness); without a checkpoint, it starts one.
	Resume bool
	Logger *zerolog.Logger // nil: none
	// Remote, when set, opens what scores the generations instead of this
	// process's backend (cluster.OpenRemote): the same run, on workers.
	// The best genome is still scored here at the end.
	Remote OpenRemote
}

// EvolveResult is the best genome of a finished NEAT run, scored on the
// validation and the test sets.
type EvolveResult struct {
	Best        *neat.Genome
	Generation  int     // the generation that found it
	Generations int     // generations run in all
	Fitness     float64 // its fitness (validation, with the parameter penalty)
	Validation  evaluator.Result
	Test        evaluator.Result
	BestFile    string // evolve.best, where it was written
}

// Evolve runs NEAT over CNN genomes on the configured data set:
//
//   - open the validation and test sets (EvolveData) and the backend;
//   - create the evaluator once, for the whole run: the validation set
//     stays on the device across generations when cache_val_on_gpu;
//   - start the run, or with Resume load the checkpoint (refusing one made
//     under another configuration);
//   - each generation: Step (the evaluator scores the genomes whose fitness
//     is not known), checkpoint, log the generation line, and write the
//     best genome when it changed;
//   - at the end, score the best genome on the validation and test sets.
//
// A cancelled context returns an *EvolveInterruptedError: the checkpoint of
// the last finished generation resumes the run exactly.
func Evolve(ctx context.Context, spec EvolveSpec) (*EvolveResult, error) {
	cfg, log, start := spec.Config, logger(spec.Logger), time.Now()
	logEvolveStart(log, spec)
	val, test, err := EvolveData(cfg)
	if err != nil {
		return nil, err
	}
	event(log, zerolog.InfoLevel, EventDatasetLoaded).Str(KeyDataset, val.Name).Int(KeyImages, val.N).
		Str(KeyTest, test.Name).Int(KeyTestImages, test.N).
		Msgf("validation %s: %d images; test %s: %d images", val.Name, val.N, test.Name, test.N)
	b, err := OpenBackend(cfg, log)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	cfg = cfg.WithParallel(b)
	tb, err := openTracker(cfg)
	if err != nil {
		return nil, err
	}
	defer tb.close()
	opts := cfg.EvaluatorOptions(log)
	opts.Fitness = cfg.EvolveFitness()
	opts.OnBatchChange = tb.onBatch()
	ev, err := evaluator.New(b, val, cfg.StagingConfig(), opts)
	if err != nil {
		return nil, err
	}
	gs := &genScorer{cfg: cfg, full: ev, b: b, val: val, opts: opts}
	if spec.Remote != nil {
		if gs.remote, err = spec.Remote(cfg, val, log); err != nil {
			ev.Close()
			return nil, err
		}
		defer gs.remote.Close()
	}
	evo, err := openEvolution(cfg, neat.Input{Channels: val.Channels, Height: val.Height, Width: val.Width}, val.NumClasses, spec.Resume, log)
	if err == nil {
		err = generations(ctx, evo, gs, tb, log)
	}
	if err != nil {
		ev.Close()
		return nil, err
	}
	res, err := finish(ctx, cfg, evo, ev, b, test, opts)
	if err != nil {
		return nil, err
	}
	logEvolveDone(log, res, time.Since(start))
	return res, tb.close()
}

func logEvolveStart(log *zerolog.Logger, spec EvolveSpec) {
	cfg, ec := spec.Config, &spec.Config.Evolve
	name := spec.ConfigName
	if name == "" {
		name = "(defaults)"
	}
	event(log, zerolog.InfoLevel, EventEvolveStart).Str(KeyVersion, Version()).Str(KeyConfig, name).
		Str(KeyBackend, cfg.Eval.Backend).Int(KeyPopulationSize, ec.PopulationSize).Int(KeyGenerations, ec.Generations).
		Int64(KeySeed, ec.Seed).Str(KeyCheckpointDir, ec.CheckpointDir).Bool(KeyResume, spec.Resume).Msg("neateval evolve")
}

// generations steps the evolution up to evolve.generations, checkpointing
// as evolve.checkpoint_seconds says (see checkpointer) and when it
// returns, by an error too.
func generations(ctx context.Context, evo *neat.Evolution, gs *genScorer, tb *tracker, log *zerolog.Logger) (err error) {
	cfg := gs.cfg
	ec := &cfg.Evolve
	ck := newCheckpointer(evo, ec, config.EvolveIdentity(cfg))
	defer func() { err = ck.close(err) }()
	var scored []float64 // the fitness of the genomes the generation scored
	var ev evaluator.Scorer
	fitness := func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		fs, err := evaluator.NEATFitness(ev)(ctx, pop)
		scored = fs
		return fs, err
	}
	lastBest := int64(-1)
	if g, _, _ := evo.Best(); g != nil {
		lastBest = g.ID
	}
	for evo.Generation() < ec.Generations {
		t := time.Now()
		var smp genSample
		var done func()
		var err error
		if ev, smp, done, err = gs.sample(evo.Generation()); err != nil {
			return fmt.Errorf("evolve: generation %d: %w", evo.Generation(), err)
		}
		st, err := evo.Step(ctx, fitness)
		if err != nil {
			done()
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				ie := &EvolveInterruptedError{Dir: ec.CheckpointDir, Generation: evo.Generation(), Err: err}
				event(log, zerolog.WarnLevel, EventRunInterrupted).Str(KeyCheckpointDir, ec.CheckpointDir).Err(err).Msg(ie.Error())
				return ie
			}
			return fmt.Errorf("evolve: generation %d: %w", evo.Generation(), err)
		}
		if err := ck.generation(); err != nil {
			done()
			return err
		}
		logGeneration(log, st, ev, evo, genLog{sample: smp, resumeAt: ck.written, took: time.Since(t)})
		done()
		_, _, median := tfevents.FitnessStats(scored)
		if err := tb.generation(tfevents.Generation{Gen: st.Generation, Best: st.Best, Mean: st.Mean, Median: median,
			Species: st.Species, BestParams: st.BestParams, BestFLOPs: st.BestFLOPs, Evaluated: st.Evaluated, Failed: st.Failed}); err != nil {
			return err
		}
		if g, _, _ := evo.Best(); g != nil && g.ID != lastBest {
			if err := writeBest(ec.Best, evo); err != nil {
				return err
			}
			lastBest = g.ID
		}
	}
	return nil
}

// openEvolution starts the run, or continues the one in the checkpoint.
func openEvolution(cfg *config.Config, in neat.Input, classes int, resume bool, log *zerolog.Logger) (*neat.Evolution, error) {
	dir := cfg.Evolve.CheckpointDir
	if !neat.CheckpointExists(dir) {
		if resume {
			event(log, zerolog.InfoLevel, EventResume).Str(KeyCheckpointDir, dir).Int(KeyGeneration, 0).
				Msgf("no checkpoint in %s: starting at generation 0", dir)
		}
		evo, err := neat.NewEvolution(in, classes, cfg.Evolve.EvolveConfig)
		if err != nil {
			return nil, fmt.Errorf("evolve: %w", err)
		}
		return evo, nil
	}
	if !resume {
		return nil, &CheckpointError{Dir: dir}
	}
	evo, identity, err := neat.LoadCheckpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("evolve: %w", err)
	}
	if now := config.EvolveIdentity(cfg); !sameLines(identity, now) {
		return nil, &CheckpointError{Dir: dir, Diff: config.IdentityDiff(identity, now)}
	}
	event(log, zerolog.InfoLevel, EventResume).Str(KeyCheckpointDir, dir).Int(KeyGeneration, evo.Generation()).
		Msgf("resuming at generation %d", evo.Generation())
	return evo, nil
}

// sameLines reports whether two identities list the same lines, in any
// order.
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// logGeneration writes the generation line.
// genLog is what a generation line says beside the run's statistics.
type genLog struct {
	sample   genSample // the generation's images
	resumeAt int       // the generation the last checkpoint written resumes at
	took     time.Duration
}

func logGeneration(log *zerolog.Logger, st neat.GenStats, sc evaluator.Scorer, evo *neat.Evolution, gl genLog) {
	_, bestFit, _ := evo.Best()
	e := event(log, zerolog.InfoLevel, EventGeneration).Int(KeyGen, st.Generation).
		Float64(KeyBest, st.Best).Float64(KeyMean, st.Mean).Int(KeySpecies, st.Species).
		Int64(KeyParams, st.BestParams).Int64(KeyFLOPs, st.BestFLOPs).Int(KeyNodes, st.BestNodes).
		Int64(KeyBestGenome, st.BestGenome).Float64(KeyBestEver, bestFit).
		Int(KeyEvaluated, st.Evaluated).Int(KeyFailed, st.Failed).Float64(KeyThreshold, st.Threshold).
		Int64(KeyValSample, gl.sample.seed).Int(KeyValBatch, gl.sample.size).Int(KeyResumeAt, gl.resumeAt)
	if !math.IsNaN(st.ESSigma) {
		e = e.Float64(KeyESSigma, st.ESSigma).Float64(KeyESRate, st.ESRate)
	}
	if ev, ok := sc.(*evaluator.Evaluator); ok {
		if p := ev.Manager().Plan(); p != nil {
			e = e.Str(KeyMode, string(p.Mode)).Int(KeyChunks, len(p.Chunks))
		}
	}
	e.Dur(KeySeconds, gl.took).Msgf("gen %d: best %.4f mean %.4f, %d species, best %d params %d nodes",
		st.Generation, st.Best, st.Mean, st.Species, st.BestParams, st.BestNodes)
}

// writeBest writes the best genome so far as a population of one.
func writeBest(path string, evo *neat.Evolution) error {
	g, _, _ := evo.Best()
	if g == nil {
		return nil
	}
	return writeGenome(path, evo, g)
}

// writeGenome writes g, a genome of evo, as a population of one.
func writeGenome(path string, evo *neat.Evolution, g *neat.Genome) error {
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

// EvolveData opens the validation set the fitness is measured on and the
// test set the best genome is scored on at the end.
//
// For the kinds with a train and a test split (mnist, fashion-mnist,
// cifar10), the validation set is evolve.val_size images of the training
// split, drawn by evolve.seed, and the test set is the test split (its
// first dataset.limit images, when set); dataset.split is not used. The
// kinds made of one set (idx, synthetic) are cut in two: val_size images
// drawn by the seed for validation, the rest (up to dataset.limit) for the
// test.
func EvolveData(cfg *config.Config) (val, test *datasets.Dataset, err error) {
	spec := cfg.DatasetSpec()
	spec.Limit = 0
	split := spec.Kind == datasets.KindMNIST || spec.Kind == datasets.KindFashionMNIST || spec.Kind == datasets.KindCIFAR10
	if split {
		spec.Split = datasets.SplitTrain
	}
	all, err := openDataset(spec)
	if err != nil {
		return nil, nil, err
	}
	n, seed := cfg.Evolve.ValSize, cfg.Evolve.Seed
	if !split && n >= all.N {
		return nil, nil, &config.ValueError{Key: "evolve.val_size", Value: fmt.Sprint(n),
			Rule: fmt.Sprintf("must be below the %d images of %s (the rest is the test set)", all.N, all.Name)}
	}
	valIdx, rest := all.Sample(n, seed)
	val = all.Subset(valIdx, fmt.Sprintf("%s-val%d-seed%d", all.Name, len(valIdx), seed))
	if !split {
		if l := cfg.Dataset.Limit; l > 0 && l < len(rest) {
			rest = rest[:l]
		}
		return val, all.Subset(rest, fmt.Sprintf("%s-test%d", all.Name, len(rest))), nil
	}
	spec.Split, spec.Limit = datasets.SplitTest, cfg.Dataset.Limit
	if test, err = openDataset(spec); err != nil {
		return nil, nil, err
	}
	return val, test, nil
}
