package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/neateval/neateval/neat"
)

// EvolveConfig is the [evolve] section: `neateval evolve`, a NEAT run on
// the configured data set (see neat.EvolveConfig for what each key does).
type EvolveConfig struct {
	// Generations is how many generations the run evaluates in all; a
	// resumed run may raise it.
	Generations    int    `toml:"generations"`
	PopulationSize int    `toml:"population_size"`
	Seed           int64  `toml:"seed"`
	Init           string `toml:"init"` // minimal | generate
	// ValSize is how many training images, drawn by Seed, the fitness is
	// measured on.
	ValSize int `toml:"val_size"`
	// ParamPenalty is subtracted from eval.fitness per parameter.
	ParamPenalty float64 `toml:"param_penalty"`

	PAddConv          float64  `toml:"p_add_conv"`
	PAddSkip          float64  `toml:"p_add_skip"`
	PRemoveNode       float64  `toml:"p_remove_node"`
	PChannels         float64  `toml:"p_channels"`
	PKernel           float64  `toml:"p_kernel"`
	PActivation       float64  `toml:"p_activation"`
	PConcat           float64  `toml:"p_concat"`
	WeightMutateRate  float64  `toml:"weight_mutate_rate"`
	WeightMutatePower float64  `toml:"weight_mutate_power"`
	CrossoverRate     float64  `toml:"crossover_rate"`
	Kernels           []int    `toml:"kernels"`
	MinChannels       int      `toml:"min_channels"`
	MaxChannels       int      `toml:"max_channels"`
	Activations       []string `toml:"activations"`
	MaxFLOPs          int64    `toml:"max_flops"`

	CompatThreshold   float64 `toml:"compat_threshold"`
	CompatDisjoint    float64 `toml:"compat_disjoint"`
	CompatWeight      float64 `toml:"compat_weight"`
	SpeciesTarget     int     `toml:"species_target"`
	Stagnation        int     `toml:"stagnation"`
	SpeciesElitism    int     `toml:"species_elitism"`
	Elitism           int     `toml:"elitism"`
	SurvivalThreshold float64 `toml:"survival_threshold"`

	// CheckpointDir holds the checkpoint, rewritten after every generation.
	CheckpointDir string `toml:"checkpoint_dir"`
	// Best is the population JSON the best genome is written to (its
	// safetensors file beside it).
	Best string `toml:"best"`
}

// defaultEvolve is the [evolve] section of DefaultConfig: neat's defaults,
// 60 generations on 2000 training images.
func defaultEvolve() EvolveConfig {
	n := neat.DefaultEvolveConfig()
	acts := make([]string, len(n.Activations))
	for i, a := range n.Activations {
		acts[i] = string(a)
	}
	return EvolveConfig{
		Generations: 200, PopulationSize: n.PopulationSize, Seed: n.Seed, Init: n.Init,
		ValSize: 2000, ParamPenalty: 1e-6,
		PAddConv: n.PAddConv, PAddSkip: n.PAddSkip, PRemoveNode: n.PRemoveNode, PChannels: n.PChannels,
		PKernel: n.PKernel, PActivation: n.PActivation, PConcat: n.PConcat,
		WeightMutateRate: n.WeightRate, WeightMutatePower: n.WeightPower, CrossoverRate: n.CrossoverRate,
		Kernels: slices.Clone(n.Kernels), MinChannels: n.MinChannels, MaxChannels: n.MaxChannels,
		Activations: acts, MaxFLOPs: n.MaxFLOPs,
		CompatThreshold: n.CompatThreshold, CompatDisjoint: n.CompatDisjoint, CompatWeight: n.CompatWeight,
		SpeciesTarget: n.SpeciesTarget, Stagnation: n.Stagnation, SpeciesElitism: n.SpeciesElitism,
		Elitism: n.Elitism, SurvivalThreshold: n.SurvivalThreshold,
		CheckpointDir: "evolve-checkpoint",
		Best:          "best.json",
	}
}

// neatConfig is the section as the neat package takes it.
func (s *EvolveConfig) neatConfig() neat.EvolveConfig {
	acts := make([]neat.Activation, len(s.Activations))
	for i, a := range s.Activations {
		acts[i] = neat.Activation(a)
	}
	return neat.EvolveConfig{
		PopulationSize: s.PopulationSize, Seed: s.Seed, Init: s.Init,
		PAddConv: s.PAddConv, PAddSkip: s.PAddSkip, PRemoveNode: s.PRemoveNode, PChannels: s.PChannels,
		PKernel: s.PKernel, PActivation: s.PActivation, PConcat: s.PConcat,
		WeightRate: s.WeightMutateRate, WeightPower: s.WeightMutatePower, CrossoverRate: s.CrossoverRate,
		Kernels: slices.Clone(s.Kernels), MinChannels: s.MinChannels, MaxChannels: s.MaxChannels,
		Activations: acts, MaxFLOPs: s.MaxFLOPs,
		CompatThreshold: s.CompatThreshold, CompatDisjoint: s.CompatDisjoint, CompatWeight: s.CompatWeight,
		SpeciesTarget: s.SpeciesTarget, Stagnation: s.Stagnation, SpeciesElitism: s.SpeciesElitism,
		Elitism: s.Elitism, SurvivalThreshold: s.SurvivalThreshold,
	}
}

// validate checks the section's keys, each against its range, with check
// and oneOf as Config.Validate gives them.
func (s *EvolveConfig) validate(check func(ok bool, key string, v any, rule string, args ...any), oneOf func(key, v string, allowed ...string)) {
	check(s.Generations >= 1, "evolve.generations", s.Generations, "must be ≥ 1")
	check(s.PopulationSize >= 2 && s.PopulationSize <= 1<<20, "evolve.population_size", s.PopulationSize, "must be in 2 … 1048576")
	oneOf("evolve.init", s.Init, neat.InitMinimal, neat.InitGenerate)
	check(s.ValSize >= 1, "evolve.val_size", s.ValSize, "must be ≥ 1")
	check(s.ParamPenalty >= 0 && isFinite(s.ParamPenalty), "evolve.param_penalty", s.ParamPenalty, "must be finite and ≥ 0")
	for _, p := range []struct {
		key string
		v   float64
	}{
		{"p_add_conv", s.PAddConv}, {"p_add_skip", s.PAddSkip}, {"p_remove_node", s.PRemoveNode},
		{"p_channels", s.PChannels}, {"p_kernel", s.PKernel}, {"p_activation", s.PActivation},
		{"p_concat", s.PConcat}, {"weight_mutate_rate", s.WeightMutateRate}, {"crossover_rate", s.CrossoverRate},
	} {
		check(p.v >= 0 && p.v <= 1, "evolve."+p.key, p.v, "must be in [0, 1]")
	}
	check(s.WeightMutatePower >= 0 && isFinite(s.WeightMutatePower), "evolve.weight_mutate_power", s.WeightMutatePower, "must be finite and ≥ 0")
	check(len(s.Kernels) > 0, "evolve.kernels", s.Kernels, "must list at least one kernel size")
	for i, k := range s.Kernels {
		check(k >= 1 && k <= 63 && k%2 == 1, fmt.Sprintf("evolve.kernels[%d]", i), k, "must be odd, 1 … 63 (so the default padding keeps the image size)")
	}
	check(s.MinChannels >= 1 && s.MinChannels <= 1<<16, "evolve.min_channels", s.MinChannels, "must be in 1 … 65536")
	check(s.MaxChannels >= s.MinChannels && s.MaxChannels <= 1<<16, "evolve.max_channels", s.MaxChannels,
		"must be in evolve.min_channels (%d) … 65536", s.MinChannels)
	check(len(s.Activations) > 0, "evolve.activations", s.Activations, "must list at least one activation")
	for i, a := range s.Activations {
		check(slices.Contains(neat.Activations, neat.Activation(a)), fmt.Sprintf("evolve.activations[%d]", i), a,
			"must be one of %s", quoteList(activationNames()))
	}
	check(s.MaxFLOPs >= 1, "evolve.max_flops", s.MaxFLOPs, "must be ≥ 1")
	check(s.CompatThreshold > 0 && isFinite(s.CompatThreshold), "evolve.compat_threshold", s.CompatThreshold, "must be finite and > 0")
	check(s.CompatDisjoint >= 0 && isFinite(s.CompatDisjoint), "evolve.compat_disjoint", s.CompatDisjoint, "must be finite and ≥ 0")
	check(s.CompatWeight >= 0 && isFinite(s.CompatWeight), "evolve.compat_weight", s.CompatWeight, "must be finite and ≥ 0")
	check(s.SpeciesTarget >= 0, "evolve.species_target", s.SpeciesTarget, "must be ≥ 0 (0 = a fixed threshold)")
	check(s.Stagnation >= 1, "evolve.stagnation", s.Stagnation, "must be ≥ 1")
	check(s.SpeciesElitism >= 1, "evolve.species_elitism", s.SpeciesElitism, "must be ≥ 1 (the best species always stays)")
	check(s.Elitism >= 0 && s.Elitism <= s.PopulationSize, "evolve.elitism", s.Elitism,
		"must be in 0 … evolve.population_size (%d)", s.PopulationSize)
	check(s.SurvivalThreshold > 0 && s.SurvivalThreshold <= 1, "evolve.survival_threshold", s.SurvivalThreshold, "must be in (0, 1]")
	check(strings.TrimSpace(s.CheckpointDir) != "", "evolve.checkpoint_dir", s.CheckpointDir, "must name a folder")
	check(strings.HasSuffix(s.Best, ".json"), "evolve.best", s.Best, "must name a .json file (the weights go beside it)")
}

func activationNames() []string {
	names := make([]string, len(neat.Activations))
	for i, a := range neat.Activations {
		names[i] = string(a)
	}
	return names
}

// evolveIdentity lists, one "key = value" per line, the config keys a
// run's course depends on: the [evolve] keys but generations and the
// output paths, the data set's identity, and eval.fitness. A checkpoint
// records it, and --resume refuses a config whose identity differs; other
// keys (the backend, batch sizes, memory, logs, dataset.limit, which only
// caps the test set) may change between the two.
func evolveIdentity(c *Config) string {
	var lines []string
	add := func(section string, v any, skip ...string) {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			key := rv.Type().Field(i).Tag.Get("toml")
			if !slices.Contains(skip, key) {
				lines = append(lines, section+"."+key+" = "+identityValue(rv.Field(i).Interface()))
			}
		}
	}
	add("evolve", c.Evolve, "generations", "checkpoint_dir", "best")
	add("dataset", c.Dataset, "split", "limit")
	lines = append(lines, "eval.fitness = "+tomlValue(c.Eval.Fitness))
	return strings.Join(lines, "\n")
}

// identityValue writes v as TOML would, lists of integers and strings
// included.
func identityValue(v any) string {
	var parts []string
	switch x := v.(type) {
	case []int:
		for _, n := range x {
			parts = append(parts, fmt.Sprint(n))
		}
	case []int64:
		for _, n := range x {
			parts = append(parts, fmt.Sprint(n))
		}
	case []string:
		for _, s := range x {
			parts = append(parts, tomlValue(s))
		}
	default:
		return tomlValue(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// identityDiff says which keys differ between two identities.
func identityDiff(was, now string) string {
	old := strings.Split(was, "\n")
	var diffs []string
	for _, line := range strings.Split(now, "\n") {
		if slices.Contains(old, line) {
			continue
		}
		key, _, _ := strings.Cut(line, " = ")
		then := "(not set)"
		for _, o := range old {
			if k, v, _ := strings.Cut(o, " = "); k == key {
				then = v
			}
		}
		diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", key, then, strings.TrimPrefix(line, key+" = ")))
	}
	if len(diffs) == 0 {
		return "the recorded configuration is unreadable"
	}
	return strings.Join(diffs, "; ")
}
