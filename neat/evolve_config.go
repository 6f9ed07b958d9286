package neat

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The ways an Evolution draws its first population (EvolveConfig.Init).
const (
	// InitMinimal starts every genome from the same minimal topology, as
	// NEAT does: the input average-pooled to about 7×7 and read by a dense
	// output (input → dense for images up to 13 pixels a side), with random
	// weights. Convolutions, skips and widths come from mutations.
	InitMinimal = "minimal"
	// InitGenerate starts from Generate's random CNNs, each node given a
	// fresh innovation id, unreachable nodes removed.
	InitGenerate = "generate"
	// InitConv starts every genome from one small CNN, by default a conv2d
	// of 8 3×3 ReLU filters, a max pool to about 7×7 and the dense output
	// (EvolveConfig.InitConvs, InitKernel and InitPools set it), with
	// random weights. Mutations grow it as they grow InitMinimal.
	InitConv = "conv"
	// InitFixed is the fixed-topology baseline: every genome is conv 8 5×5
	// → max pool 2 → conv 16 5×5 → max pool 2 → dense, and stays so (no
	// structural mutation is drawn); only the weight operators (crossover
	// and perturbation) search. It needs MaxFLOPs ≥ about 1.6 M on 28×28.
	InitFixed = "fixed"
)

// The scopes of the evolution strategy's step size σ
// (EvolveConfig.ESSigmaScope).
const (
	ESSigmaPerTensor    = "tensor"
	ESSigmaPerParameter = "parameter"
)

// EvolveConfig sets an Evolution: the population, the mutation and
// crossover rates, speciation and selection. The zero value is not usable;
// start from DefaultEvolveConfig. The toml tags are the keys of the
// [evolve] table of neateval's config file, which decodes straight into
// this struct.
type EvolveConfig struct {
	// PopulationSize is the number of genomes of every generation.
	PopulationSize int `toml:"population_size"`
	// Seed seeds the one random stream every draw of the run comes from.
	Seed int64 `toml:"seed"`
	// Init is InitMinimal, InitConv, InitGenerate or InitFixed.
	Init string `toml:"init"`
	// InitConvs are the widths of InitConv's ReLU conv2d layers, in order,
	// each of kernel InitKernel and followed by a max pool of the size of
	// InitPools at its index (0: to about 7×7; 1: none).
	InitConvs  []int `toml:"init_convs"`
	InitKernel int   `toml:"init_kernel"`
	InitPools  []int `toml:"init_pools"`

	// Chances, per child, of each structural mutation; each is tried on
	// its own, in this order.

	// PAddConv: a conv2d node on an edge (stride 1, default padding, so the
	// height and width stay; its weights start as the identity on the
	// channels it shares with its input).
	PAddConv float64 `toml:"p_add_conv"`
	// PAddSkip: a new input to a node from an earlier node whose output has
	// the same height and width (or is 2-D, for a 2-D input): a skip
	// connection, summed or concatenated.
	PAddSkip float64 `toml:"p_add_skip"`
	// PRemoveNode: a node removed, its consumers reading its inputs.
	PRemoveNode float64 `toml:"p_remove_node"`
	// PChannels: a conv2d's out_channels (or a hidden dense node's
	// out_features) changed, within MinChannels..MaxChannels.
	PChannels float64 `toml:"p_channels"`
	// PKernel: a conv2d's kernel changed to another of Kernels.
	PKernel float64 `toml:"p_kernel"`
	// PActivation: a conv2d's or hidden dense node's activation changed to
	// another of Activations.
	PActivation float64 `toml:"p_activation"`
	// PConcat is the chance that a skip into a node with one 4-D input
	// concatenates rather than sums.
	PConcat float64 `toml:"p_concat"`

	// WeightRate is the chance, per tensor (each weight and each bias), that
	// a child's tensor is perturbed.
	WeightRate float64 `toml:"weight_mutate_rate"`
	// WeightPower is the standard deviation of the Gaussian noise added to
	// every element of a perturbed tensor, as a multiple of sqrt(2/fan-in)
	// (the He scale of the node's weights).
	WeightPower float64 `toml:"weight_mutate_power"`
	// WeightPowerSpread makes the step size of the weight search vary per
	// child: each child's noise is WeightPower × exp(WeightPowerSpread ×
	// N(0, 1)), one draw per child. Children with small steps fine-tune,
	// children with big ones explore; selection keeps whichever scale
	// currently pays, so the effective step adapts as the search
	// converges without a schedule (0: every child uses WeightPower). In
	// the evolution strategy the spread is drawn per mirrored pair; with
	// ESSigmaRate > 0 it feeds σ's update, which then shrinks σ fast (the
	// smaller step ranks better one generation ahead).
	WeightPowerSpread float64 `toml:"weight_power_spread"`
	// ESShare is the share of each species' children (after its elites)
	// bred by an evolution strategy on its weights rather than by
	// crossover and mutation: mirrored samples (σ starting at WeightPower
	// × the He scale, then adapted as ESSigmaRate says) around a centre
	// that moves each generation to the rank-weighted sum of its samples
	// (see es.go). 0: NEAT's operators alone.
	ESShare float64 `toml:"es_share"`
	// ESSigmaRate scales SNES's learning rate of the strategy's
	// per-parameter σ, (3 + ln d)/(5 √d) for d parameters (see es.go):
	// 1 is SNES's rate, 0 keeps σ at WeightPower × the He scale.
	ESSigmaRate float64 `toml:"es_sigma_rate"`
	// ESSigmaScope is what one σ of the strategy covers: ESSigmaPerTensor
	// (each weight and each bias tensor has one σ, moved by the mean of
	// its parameters' SNES updates) or ESSigmaPerParameter (SNES as
	// published). With a few dozen samples per generation and thousands
	// of parameters, one parameter's update is mostly noise: σ then drifts
	// at random; a tensor's mean carries the signal.
	ESSigmaScope string `toml:"es_sigma_scope"`
	// ESRate is the learning rate of the strategy's centre: the share of
	// the rank-weighted step Σ uₖ (xₖ − μ) it moves by (SNES: 1).
	ESRate float64 `toml:"es_rate"`
	// ESMomentum carries this share of a centre's last move into its next
	// one (heavy-ball momentum), averaging the noisy steps of few samples
	// over generations; 0: none.
	ESMomentum float64 `toml:"es_momentum"`
	// ESAnneal, when > 0, is the generations over which the strategy's
	// step falls, along half a cosine, from ESRate to ESRateFinal × ESRate
	// and its sampling σ from its adapted value to ESSigmaFinal times it;
	// later generations keep the final values. A noisy step of fixed size
	// leaves the centre jittering around the optimum at a distance that
	// grows with the step: the schedule lets a long run settle. It counts
	// generations from the run's start, so a resumed run that raises
	// generations keeps it. 0: no schedule.
	ESAnneal int `toml:"es_anneal"`
	// ESRateFinal is the share of ESRate the centre's step ends at (with
	// ESAnneal > 0), in (0, 1].
	ESRateFinal float64 `toml:"es_rate_final"`
	// ESSigmaFinal is the share of the adapted σ the samples end drawn
	// with (with ESAnneal > 0), in (0, 1].
	ESSigmaFinal float64 `toml:"es_sigma_final"`
	// CrossoverBlend makes crossover average the matching weights of the
	// two parents (intermediate recombination) instead of taking each from
	// either parent: the parents' independent mutations partly cancel, so
	// a species' children sit near the mean of its best, the centre an
	// evolution strategy would step from.
	CrossoverBlend bool `toml:"crossover_blend"`
	// RescoreElites scores the carried-over elites again each generation
	// instead of keeping their fitness. Use it when the fitness is measured
	// on a sample redrawn every generation, so every genome of a
	// generation is ranked on the same images and a lucky draw does not
	// keep a genome alive.
	RescoreElites bool `toml:"rescore_elites"`
	// CrossoverRate is the chance that a child has two parents (of one
	// species) rather than one.
	CrossoverRate float64 `toml:"crossover_rate"`

	// Kernels are the conv2d kernel sizes mutations draw from: odd, so
	// that the default padding keeps the height and width.
	Kernels []int `toml:"kernels"`
	// MinChannels and MaxChannels bound the out_channels of a new or
	// resized conv2d.
	MinChannels int `toml:"min_channels"`
	MaxChannels int `toml:"max_channels"`
	// Activations are the activations mutations draw from.
	Activations []Activation `toml:"activations"`
	// MaxFLOPs bounds a genome's FLOPs per image (2 × multiply-adds); a
	// mutation that exceeds it is refused.
	MaxFLOPs int64 `toml:"max_flops"`

	// CompatThreshold is the starting compatibility distance under which
	// a genome joins a species (see Distance).
	CompatThreshold float64 `toml:"compat_threshold"`
	// CompatDisjoint and CompatWeight weigh the topology and the weight
	// terms of the distance.
	CompatDisjoint float64 `toml:"compat_disjoint"`
	CompatWeight   float64 `toml:"compat_weight"`
	// SpeciesTarget, when > 0, moves the threshold by 5% each generation
	// towards this many species.
	SpeciesTarget int `toml:"species_target"`
	// Stagnation drops a species whose best fitness has not risen for this
	// many generations.
	Stagnation int `toml:"stagnation"`
	// SpeciesElitism is how many species, the best by fitness, are kept
	// whatever their stagnation (≥ 1: the best species always stays).
	SpeciesElitism int `toml:"species_elitism"`
	// Elitism is how many of each species' best genomes go to the next
	// generation unchanged (with their fitness, not scored again). The
	// population's best genome always does.
	Elitism int `toml:"elitism"`
	// SurvivalThreshold is the share of each species, its best, that may
	// parent children.
	SurvivalThreshold float64 `toml:"survival_threshold"`
}

// DefaultEvolveConfig suits small CNNs on 28×28 images on a few cores: 40
// genomes from one small CNN (InitConv) that grow convolutions of 4 to 32
// channels, under 0.3 MFLOP per image, their weights searched mostly by
// the evolution strategy (ESShare), its step falling to a tenth over the
// first 1500 generations (ESAnneal: neateval's default run length), and
// scored afresh every generation (RescoreElites). LegacyEvolveConfig is
// the search this replaced.
func DefaultEvolveConfig() EvolveConfig {
	return EvolveConfig{
		PopulationSize:    40,
		Seed:              1,
		Init:              InitConv,
		InitConvs:         []int{8},
		InitKernel:        3,
		InitPools:         []int{0},
		PAddConv:          0.15,
		PAddSkip:          0.08,
		PRemoveNode:       0.03,
		PChannels:         0.10,
		PKernel:           0.05,
		PActivation:       0.05,
		PConcat:           0.3,
		WeightRate:        0.8,
		WeightPower:       0.6,
		ESShare:           0.8,
		ESSigmaRate:       1,
		ESSigmaScope:      ESSigmaPerTensor,
		ESRate:            1,
		ESAnneal:          1500,
		ESRateFinal:       0.1,
		ESSigmaFinal:      1,
		RescoreElites:     true,
		CrossoverRate:     0.8,
		Kernels:           []int{1, 3, 5},
		MinChannels:       4,
		MaxChannels:       32,
		Activations:       slices.Clone(Activations),
		MaxFLOPs:          300_000,
		CompatThreshold:   1.0,
		CompatDisjoint:    1.0,
		CompatWeight:      0.5,
		SpeciesTarget:     1,
		Stagnation:        15,
		SpeciesElitism:    1,
		Elitism:           1,
		SurvivalThreshold: 0.3,
	}
}

// LegacyEvolveConfig is DefaultEvolveConfig as it was before the
// evolution strategy: minimal linear genomes, mutation and crossover alone,
// elites never re-scored. It is kept for comparisons (a test holds the
// default to beating it on the same budget).
func LegacyEvolveConfig() EvolveConfig {
	c := DefaultEvolveConfig()
	c.Init, c.WeightPower, c.ESShare, c.RescoreElites, c.SpeciesTarget = InitMinimal, 1.0, 0, false, 2
	c.ESSigmaRate = 0
	return c
}

// FieldError is a field of an EvolveConfig an Evolution cannot work with.
// Key is the field's config key (its toml tag), with an index for a list
// element: "kernels[1]".
type FieldError struct {
	Key   string
	Value any
	Rule  string // what is allowed
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s = %v: %s", e.Key, e.Value, e.Rule) }

// Validate reports the first field of c an Evolution cannot work with, as a
// *FieldError.
func (c *EvolveConfig) Validate() error {
	for _, r := range c.rules() {
		if !r.ok {
			return &FieldError{Key: r.key, Value: r.v, Rule: r.rule}
		}
	}
	return nil
}

type rule struct {
	ok   bool
	key  string
	v    any
	rule string
}

// rules are every check of Validate, in the order the fields are declared.
func (c *EvolveConfig) rules() []rule {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	rs := []rule{
		{c.PopulationSize >= 2 && c.PopulationSize <= 1<<20, "population_size", c.PopulationSize, "must be in 2 … 1048576"},
		{c.Init == InitMinimal || c.Init == InitGenerate || c.Init == InitConv || c.Init == InitFixed, "init", c.Init,
			fmt.Sprintf("must be one of %q, %q, %q, %q", InitMinimal, InitConv, InitGenerate, InitFixed)},
		{len(c.InitConvs) >= 1 && len(c.InitConvs) <= 8, "init_convs", c.InitConvs, "must list 1 … 8 widths"},
		{c.InitKernel >= 1 && c.InitKernel <= 63 && c.InitKernel%2 == 1, "init_kernel", c.InitKernel, "must be odd, 1 … 63"},
		{len(c.InitPools) == len(c.InitConvs), "init_pools", c.InitPools, fmt.Sprintf("must list one pool size per init_convs width (%d)", len(c.InitConvs))},
	}
	for i, w := range c.InitConvs {
		rs = append(rs, rule{w >= 1 && w <= 1<<16, fmt.Sprintf("init_convs[%d]", i), w, "must be in 1 … 65536"})
	}
	for i, k := range c.InitPools {
		rs = append(rs, rule{k >= 0 && k <= 64, fmt.Sprintf("init_pools[%d]", i), k, "must be in 0 … 64 (0: to about 7×7, 1: none)"})
	}
	for _, p := range []struct {
		key string
		v   float64
	}{
		{"p_add_conv", c.PAddConv}, {"p_add_skip", c.PAddSkip}, {"p_remove_node", c.PRemoveNode},
		{"p_channels", c.PChannels}, {"p_kernel", c.PKernel}, {"p_activation", c.PActivation},
		{"p_concat", c.PConcat}, {"es_share", c.ESShare}, {"weight_mutate_rate", c.WeightRate}, {"crossover_rate", c.CrossoverRate},
	} {
		rs = append(rs, rule{p.v >= 0 && p.v <= 1, p.key, p.v, "must be in [0, 1]"})
	}
	rs = append(rs,
		rule{c.WeightPower >= 0 && finite(c.WeightPower), "weight_mutate_power", c.WeightPower, "must be finite and ≥ 0"},
		rule{c.ESSigmaRate >= 0 && c.ESSigmaRate <= 100, "es_sigma_rate", c.ESSigmaRate, "must be in 0 … 100"},
		rule{c.ESSigmaScope == ESSigmaPerTensor || c.ESSigmaScope == ESSigmaPerParameter, "es_sigma_scope", c.ESSigmaScope,
			fmt.Sprintf("must be %q or %q", ESSigmaPerTensor, ESSigmaPerParameter)},
		rule{c.ESMomentum >= 0 && c.ESMomentum < 1, "es_momentum", c.ESMomentum, "must be in [0, 1)"},
		rule{c.ESRate > 0 && c.ESRate <= 10, "es_rate", c.ESRate, "must be in (0, 10]"},
		rule{c.ESAnneal >= 0, "es_anneal", c.ESAnneal, "must be ≥ 0 (0 = no schedule)"},
		rule{c.ESRateFinal > 0 && c.ESRateFinal <= 1, "es_rate_final", c.ESRateFinal, "must be in (0, 1]"},
		rule{c.ESSigmaFinal > 0 && c.ESSigmaFinal <= 1, "es_sigma_final", c.ESSigmaFinal, "must be in (0, 1]"},
		rule{c.WeightPowerSpread >= 0 && c.WeightPowerSpread <= 5, "weight_power_spread", c.WeightPowerSpread, "must be in 0 … 5"},
		rule{len(c.Kernels) > 0, "kernels", c.Kernels, "must list at least one kernel size"})
	for i, k := range c.Kernels {
		rs = append(rs, rule{k >= 1 && k <= 63 && k%2 == 1, fmt.Sprintf("kernels[%d]", i), k, "must be odd, 1 … 63 (so the default padding keeps the image size)"})
	}
	rs = append(rs,
		rule{c.MinChannels >= 1 && c.MinChannels <= 1<<16, "min_channels", c.MinChannels, "must be in 1 … 65536"},
		rule{c.MaxChannels >= c.MinChannels && c.MaxChannels <= 1<<16, "max_channels", c.MaxChannels,
			fmt.Sprintf("must be in min_channels (%d) … 65536", c.MinChannels)},
		rule{len(c.Activations) > 0, "activations", c.Activations, "must list at least one activation"})
	for i, a := range c.Activations {
		rs = append(rs, rule{slices.Contains(Activations, a), fmt.Sprintf("activations[%d]", i), a, "must be one of " + quoted(Activations)})
	}
	return append(rs,
		rule{c.MaxFLOPs >= 1, "max_flops", c.MaxFLOPs, "must be ≥ 1"},
		rule{c.CompatThreshold > 0 && finite(c.CompatThreshold), "compat_threshold", c.CompatThreshold, "must be finite and > 0"},
		rule{c.CompatDisjoint >= 0 && finite(c.CompatDisjoint), "compat_disjoint", c.CompatDisjoint, "must be finite and ≥ 0"},
		rule{c.CompatWeight >= 0 && finite(c.CompatWeight), "compat_weight", c.CompatWeight, "must be finite and ≥ 0"},
		rule{c.SpeciesTarget >= 0, "species_target", c.SpeciesTarget, "must be ≥ 0 (0 = a fixed threshold)"},
		rule{c.Stagnation >= 1, "stagnation", c.Stagnation, "must be ≥ 1"},
		rule{c.SpeciesElitism >= 1, "species_elitism", c.SpeciesElitism, "must be ≥ 1 (the best species always stays)"},
		rule{c.Elitism >= 0 && c.Elitism <= c.PopulationSize, "elitism", c.Elitism,
			fmt.Sprintf("must be in 0 … population_size (%d)", c.PopulationSize)},
		rule{c.SurvivalThreshold > 0 && c.SurvivalThreshold <= 1, "survival_threshold", c.SurvivalThreshold, "must be in (0, 1]"},
	)
}

// quoted lists activations as "a", "b", ….
func quoted(as []Activation) string {
	q := make([]string, len(as))
	for i, a := range as {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, ", ")
}
