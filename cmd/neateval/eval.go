package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// runEval scores the population that env.Config describes and writes the
// results file. It is a variable so that the command line can be tested
// apart from the evaluation.
var runEval = evaluate

// evaluate is the run itself:
//
//   - load the data set and the population (from its file, or generated);
//   - open the backend and its device;
//   - create the results file, or on --resume reopen it and keep the
//     genomes it already holds;
//   - score the rest through the evaluator (staging plan, chunks, the batch
//     controller), appending each finished chunk's results to the file;
//   - rewrite the file in population order, and log the summary.
//
// A cancelled context leaves the appended results in the file and returns
// an error wrapping ctx.Err(); a run in which some genomes got an error
// result returns *GenomeErrors.
func evaluate(ctx context.Context, env evalEnv) error {
	cfg, log := env.Config, env.Log
	start := time.Now()

	ds, err := openDataset(cfg)
	if err != nil {
		return err
	}
	logEvent(&log, zerolog.InfoLevel, EvDatasetLoaded).
		Str(KeyDataset, ds.Name).Str(KeySplit, cfg.Dataset.Split).Int(KeyImages, ds.N).
		Int(KeyChannels, ds.Channels).Int(KeyHeight, ds.Height).Int(KeyWidth, ds.Width).
		Int(KeyClasses, ds.NumClasses).Float64(KeySeconds, time.Since(start).Seconds()).
		Msgf("data set %s: %d images of %d×%d×%d", ds.Name, ds.N, ds.Channels, ds.Height, ds.Width)

	t := time.Now()
	pop, digest, err := openPopulation(cfg, ds)
	if err != nil {
		return err
	}
	var invalid int
	var params, weightBytes int64
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			invalid++
			continue
		}
		params += gr.Params
		weightBytes += gr.WeightBytes(4)
	}
	popName := cfg.Population.Path
	if popName == "" {
		popName = fmt.Sprintf("generated (%s, seed %d)", cfg.Population.GeneratePreset, cfg.Population.GenerateSeed)
	}
	logEvent(&log, zerolog.InfoLevel, EvPopulationLoaded).
		Str(KeyPopulation, popName).Int(KeyGenomes, len(pop.Genomes)).Int(KeyInvalid, invalid).
		Int64(KeyParams, params).Int64(KeyWeightBytes, weightBytes).Str(KeyDigest, digest).
		Float64(KeySeconds, time.Since(t).Seconds()).
		Msgf("population %s: %d genomes (%d invalid), %d parameters", popName, len(pop.Genomes), invalid, params)

	b, err := openBackend(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	total, _ := b.Device().MemInfo()
	logEvent(&log, zerolog.InfoLevel, EvDevice).
		Str(KeyBackend, b.Name()).Str(KeyDevice, b.Device().Name()).Str(KeyDType, b.DType().String()).
		Int64(KeyMemoryBytes, total).
		Msgf("device %s: %s, %s", b.Device().Name(), vram.FormatBytes(total), b.DType())

	header := ResultsHeader{
		Version:    resultsVersion,
		Population: digest,
		Genomes:    len(pop.Genomes),
		Dataset:    fmt.Sprintf("%s %d", ds.Name, ds.N),
		Fitness:    cfg.Eval.Fitness,
	}
	var (
		w    *ResultsWriter
		done = map[int]Result{}
	)
	if env.Resume {
		w, done, err = ResumeResults(cfg.Output.Results, header)
		if err != nil {
			return err
		}
		logEvent(&log, zerolog.InfoLevel, EvResume).Str(KeyResults, cfg.Output.Results).
			Int(KeyDone, len(done)).Int(KeyRemaining, len(pop.Genomes)-len(done)).
			Msgf("resuming: %d of %d genomes already scored", len(done), len(pop.Genomes))
	} else if w, err = CreateResults(cfg.Output.Results, header); err != nil {
		return err
	}

	// The genomes still to score, as a population of their own; index maps
	// its positions back to the population's.
	sub := &neat.Population{Input: pop.Input, NumClasses: pop.NumClasses}
	var index []int
	for i, g := range pop.Genomes {
		if _, ok := done[i]; !ok {
			sub.Genomes = append(sub.Genomes, g)
			index = append(index, i)
		}
	}
	all := make([]Result, len(pop.Genomes))
	for i, r := range done {
		all[i] = r
	}
	env.Progress.Start(len(pop.Genomes), len(done))

	if len(sub.Genomes) > 0 {
		ev, err := evaluator.New(b, ds, stagingConfig(cfg), evaluator.Options{
			EvalBatchSize:      cfg.Eval.EvalBatchSize,
			Parallel:           cfg.Eval.FitnessEvalParallel,
			Threads:            cfg.Eval.Threads,
			VRAMUsageThreshold: cfg.VRAM.VRAMUsageThreshold,
			CacheData:          cfg.VRAM.CacheValOnGPU,
			Fitness:            fitnessFunc(cfg.Eval.Fitness),
			Logger:             &log,
			OnResult:           func(r evaluator.Result) { env.Progress.Add(1, int64(r.Images)) },
		})
		if err != nil {
			w.Close()
			return err
		}
		_, err = ev.Evaluate(ctx, sub, func(rs []evaluator.Result) error {
			out := make([]Result, len(rs))
			for k, r := range rs {
				out[k] = toResult(r, index[r.Index])
				all[out[k].Index] = out[k]
			}
			return w.Append(out)
		})
		ev.Close()
		if err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Finalize(all); err != nil {
		return err
	}
	logEvent(&log, zerolog.InfoLevel, EvResultsWritten).Str(KeyResults, cfg.Output.Results).
		Int(KeyGenomes, len(all)).Msgf("results: %s", cfg.Output.Results)
	s := summarize(all, done, time.Since(start))
	s.log(&log)
	if s.Failed > 0 {
		return &GenomeErrors{Failed: s.Failed, Total: len(all), Results: cfg.Output.Results}
	}
	return nil
}

// toResult is an evaluator result as a results-file line at population
// index idx.
func toResult(r evaluator.Result, idx int) Result {
	out := Result{GenomeID: r.GenomeID, Index: idx, Images: r.Images, Params: r.Params, FLOPs: r.FLOPs, Seconds: r.Seconds}
	if r.Err != nil {
		msg := r.Err.Error()
		out.Error = &msg
		return out
	}
	f, a, l := r.Fitness, r.Accuracy, r.Loss
	if math.IsNaN(f) || math.IsInf(f, 0) {
		msg := fmt.Sprintf("genome %d: the fitness function returned %v", r.GenomeID, f)
		out.Error = &msg
		return out
	}
	out.Fitness, out.Accuracy, out.Loss = &f, &a, &l
	return out
}

func fitnessFunc(name string) evaluator.FitnessFunc {
	if name == "neg_loss" {
		return evaluator.NegLoss
	}
	return evaluator.Accuracy
}

func stagingConfig(cfg *Config) staging.Config {
	v := cfg.VRAM
	return staging.Config{
		Adaptive:          v.AdaptivePopulationVRAM,
		ResidentThreshold: v.PopulationVRAMResidentThreshold,
		UsageThreshold:    v.VRAMUsageThreshold,
		ChunkBytes:        int64(v.PopulationGPUChunkBytes),
		BatchFracMin:      v.PopulationGPUBatchFracMin,
		BatchFracMax:      v.PopulationGPUBatchFracMax,
		Parallel:          cfg.Eval.FitnessEvalParallel,
		GraphReserve:      int64(v.CUDAGraphMemoryReserveBytes),
		Prefetch:          v.Prefetch,
	}
}

func openBackend(cfg *Config) (evaluator.Backend, error) {
	dt, err := vram.ParseDType(cfg.Eval.DType)
	if err != nil {
		return nil, err
	}
	faults := vram.FaultOptions{Rate: cfg.VRAM.FaultRate, Seed: uint64(cfg.VRAM.FaultSeed), At: cfg.VRAM.FaultAt}
	return evaluator.OpenBackend(cfg.Eval.Backend, evaluator.BackendOptions{
		DType:       dt,
		MemoryBytes: int64(cfg.VRAM.MemoryBytes),
		Faults:      faults,
		Threads:     evaluator.ThreadsPerForward(cfg.Eval.Threads, cfg.Eval.FitnessEvalParallel),
	})
}

func openDataset(cfg *Config) (*datasets.Dataset, error) {
	d := cfg.Dataset
	spec := datasets.Spec{
		Kind: d.Kind, Path: d.Path, Split: d.Split, Images: d.Images, Labels: d.Labels, Limit: d.Limit,
		Synthetic: datasets.SyntheticSpec{N: d.SyntheticSize, Channels: 1, Height: 28, Width: 28, Classes: 10, Seed: d.SyntheticSeed},
	}
	for _, m := range d.Mean {
		spec.Mean = append(spec.Mean, float32(m))
	}
	for _, s := range d.Std {
		spec.Std = append(spec.Std, float32(s))
	}
	ds, err := datasets.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return ds, nil
}

// openPopulation loads the population file, or generates one for the data
// set's shape, and returns it with its digest for the results file.
func openPopulation(cfg *Config, ds *datasets.Dataset) (*neat.Population, string, error) {
	if cfg.Population.Path == "" {
		in := neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}
		pop, err := generatePopulation(cfg.Population, in, ds.NumClasses)
		if err != nil {
			return nil, "", err
		}
		return pop, populationDigest(pop), nil
	}
	pop, err := neat.Load(cfg.Population.Path)
	if err != nil {
		return nil, "", err
	}
	digest, err := populationFileDigest(cfg.Population.Path)
	if err != nil {
		return nil, "", err
	}
	return pop, digest, nil
}
