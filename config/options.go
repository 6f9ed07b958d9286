package config

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// The values of eval.fitness.
const (
	FitnessAccuracy = "accuracy"
	FitnessNegLoss  = "neg_loss"
)

// The values of population.generate_preset.
const (
	PresetSmall = "small"
	PresetWide  = "wide"
)

// The methods below turn a validated Config into the libraries' option
// structs: each mapping from keys to options is written here once, for
// every command and every program that embeds neateval.

// StagingConfig is the staging manager's configuration ([vram] and
// eval.fitness_eval_parallel).
func (c *Config) StagingConfig() staging.Config {
	v := c.VRAM
	return staging.Config{
		Adaptive:          v.AdaptivePopulationVRAM,
		ResidentThreshold: v.PopulationVRAMResidentThreshold,
		UsageThreshold:    v.VRAMUsageThreshold,
		ChunkBytes:        int64(v.PopulationGPUChunkBytes),
		BatchFracMin:      v.PopulationGPUBatchFracMin,
		BatchFracMax:      v.PopulationGPUBatchFracMax,
		Parallel:          c.Eval.FitnessEvalParallel,
		GraphReserve:      int64(v.CUDAGraphMemoryReserveBytes),
		Prefetch:          v.Prefetch,
	}
}

// BackendOptions is what a backend is opened with: dtype, memory, fault
// injection, the GPU (eval.device), and each forward's share of
// eval.threads. log receives the
// backend's own events (nil: none).
func (c *Config) BackendOptions(log *zerolog.Logger) (evaluator.BackendOptions, error) {
	dt, err := vram.ParseDType(c.Eval.DType)
	if err != nil {
		return evaluator.BackendOptions{}, &ValueError{Key: "eval.dtype", Value: tomlValue(c.Eval.DType), Rule: err.Error()}
	}
	return evaluator.BackendOptions{
		DType:       dt,
		MemoryBytes: int64(c.VRAM.MemoryBytes),
		Faults:      vram.FaultOptions{Rate: c.VRAM.FaultRate, Seed: uint64(c.VRAM.FaultSeed), At: c.VRAM.FaultAt},
		DeviceIndex: c.Eval.Device,
		// fitness_eval_parallel 0 gives each forward every thread: on the
		// CPU, cpu.DefaultParallel forwards then share the cores.
		Threads:  evaluator.ThreadsPerForward(c.Eval.Threads, c.Eval.FitnessEvalParallel),
		Parallel: c.Eval.FitnessEvalParallel,
		Logger:   log,

		ComputePrecision: c.Eval.ComputePrecision,
	}, nil
}

// OpenBackend opens the backend eval.backend names.
func (c *Config) OpenBackend(log *zerolog.Logger) (evaluator.Backend, error) {
	o, err := c.BackendOptions(log)
	if err != nil {
		return nil, err
	}
	return evaluator.OpenBackend(c.Eval.Backend, o)
}

// WithParallel is c, or when eval.fitness_eval_parallel is 0 a copy of c
// with the parallelism backend b suggests (evaluator.PreferredParallel:
// cpu.DefaultParallel on the CPU, 1 with one thread; the streams a GPU
// opened), for the evaluator and staging. b must have been opened with c
// itself: with 0, BackendOptions gives each forward every thread, which
// the resolved copy would not.
func (c *Config) WithParallel(b evaluator.Backend) *Config {
	if c.Eval.FitnessEvalParallel > 0 {
		return c
	}
	cc := *c
	cc.Eval.FitnessEvalParallel = evaluator.PreferredParallel(b)
	return &cc
}

// EvaluatorOptions is the evaluator's options: batch size, parallelism, threads,
// the usage threshold, the validation cache and eval.fitness. log receives
// its events; the caller may set OnResult.
func (c *Config) EvaluatorOptions(log *zerolog.Logger) evaluator.Options {
	return evaluator.Options{
		EvalBatchSize:      c.Eval.EvalBatchSize,
		Parallel:           c.Eval.FitnessEvalParallel,
		Threads:            c.Eval.Threads,
		VRAMUsageThreshold: c.VRAM.VRAMUsageThreshold,
		CacheData:          c.VRAM.CacheValOnGPU,
		Fitness:            c.FitnessFunc(),
		Logger:             log,
	}
}

// FitnessFunc is the fitness function eval.fitness names.
func (c *Config) FitnessFunc() evaluator.FitnessFunc {
	if c.Eval.Fitness == FitnessNegLoss {
		return evaluator.NegLoss
	}
	return evaluator.Accuracy
}

// EvolveFitness is eval.fitness less evolve.loss_weight per unit of loss
// and evolve.param_penalty per parameter: what `neateval evolve` selects
// on.
func (c *Config) EvolveFitness() evaluator.FitnessFunc {
	base, pen, lw := c.FitnessFunc(), c.Evolve.ParamPenalty, c.Evolve.LossWeight
	if pen == 0 && lw == 0 {
		return base
	}
	return func(m evaluator.Metrics) float64 { return base(m) - lw*m.Loss - pen*float64(m.Params) }
}

// DatasetSpec is the data set the [dataset] keys describe.
func (c *Config) DatasetSpec() datasets.Spec {
	d := c.Dataset
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
	return spec
}

// GenConfig is the generator preset population.generate_preset names.
func GenConfig(preset string) (neat.GenConfig, error) {
	switch preset {
	case PresetSmall:
		return neat.DefaultGenConfig(), nil
	case PresetWide:
		return neat.WideGenConfig(), nil
	}
	return neat.GenConfig{}, fmt.Errorf("unknown preset %q (want %q or %q)", preset, PresetSmall, PresetWide)
}

// Generate generates the population the [population] generate_* keys
// describe, for images of shape in and classes classes.
func (p *PopulationConfig) Generate(in neat.Input, classes int) (*neat.Population, error) {
	gc, err := GenConfig(p.GeneratePreset)
	if err != nil {
		return nil, err
	}
	return neat.Generate(p.GenerateSeed, p.GenerateSize, in, classes, gc), nil
}

// Name names the population for logs: its path, or how it is generated.
func (p *PopulationConfig) Name() string {
	if p.Path != "" {
		return p.Path
	}
	return fmt.Sprintf("generated (%s, seed %d)", p.GeneratePreset, p.GenerateSeed)
}
