package neat

import (
	"fmt"
	"math"
	"slices"
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
)

// EvolveConfig sets an Evolution: the population, the mutation and
// crossover rates, speciation and selection. The zero value is not usable;
// start from DefaultEvolveConfig.
type EvolveConfig struct {
	// PopulationSize is the number of genomes of every generation.
	PopulationSize int
	// Seed seeds the one random stream every draw of the run comes from.
	Seed int64
	// Init is InitMinimal or InitGenerate.
	Init string

	// Chances, per child, of each structural mutation; each is tried on
	// its own, in this order.

	// PAddConv: a conv2d node on an edge (stride 1, default padding, so the
	// height and width stay; its weights start as the identity on the
	// channels it shares with its input).
	PAddConv float64
	// PAddSkip: a new input to a node from an earlier node whose output has
	// the same height and width (or is 2-D, for a 2-D input): a skip
	// connection, summed or concatenated.
	PAddSkip float64
	// PRemoveNode: a node removed, its consumers reading its inputs.
	PRemoveNode float64
	// PChannels: a conv2d's out_channels (or a hidden dense node's
	// out_features) changed, within MinChannels..MaxChannels.
	PChannels float64
	// PKernel: a conv2d's kernel changed to another of Kernels.
	PKernel float64
	// PActivation: a conv2d's or hidden dense node's activation changed to
	// another of Activations.
	PActivation float64
	// PConcat is the chance that a skip into a node with one 4-D input
	// concatenates rather than sums.
	PConcat float64

	// WeightRate is the chance, per tensor (each weight and each bias), that
	// a child's tensor is perturbed.
	WeightRate float64
	// WeightPower is the standard deviation of the Gaussian noise added to
	// every element of a perturbed tensor, as a multiple of sqrt(2/fan-in)
	// (the He scale of the node's weights).
	WeightPower float64
	// CrossoverRate is the chance that a child has two parents (of one
	// species) rather than one.
	CrossoverRate float64

	// Kernels are the conv2d kernel sizes mutations draw from: odd, so
	// that the default padding keeps the height and width.
	Kernels []int
	// MinChannels and MaxChannels bound the out_channels of a new or
	// resized conv2d.
	MinChannels, MaxChannels int
	// Activations are the activations mutations draw from.
	Activations []Activation
	// MaxFLOPs bounds a genome's FLOPs per image (2 × multiply-adds); a
	// mutation that exceeds it is refused.
	MaxFLOPs int64

	// CompatThreshold is the starting compatibility distance under which
	// a genome joins a species (see Distance).
	CompatThreshold float64
	// CompatDisjoint and CompatWeight weigh the topology and the weight
	// terms of the distance.
	CompatDisjoint, CompatWeight float64
	// SpeciesTarget, when > 0, moves the threshold by 5% each generation
	// towards this many species.
	SpeciesTarget int
	// Stagnation drops a species whose best fitness has not risen for this
	// many generations.
	Stagnation int
	// SpeciesElitism is how many species, the best by fitness, are kept
	// whatever their stagnation (≥ 1: the best species always stays).
	SpeciesElitism int
	// Elitism is how many of each species' best genomes go to the next
	// generation unchanged (with their fitness, not scored again). The
	// population's best genome always does.
	Elitism int
	// SurvivalThreshold is the share of each species, its best, that may
	// parent children.
	SurvivalThreshold float64
}

// DefaultEvolveConfig suits small CNNs on 28×28 images on a few cores: 40
// minimal genomes that grow convolutions of 4 to 32 channels, under 1
// MFLOP per image.
func DefaultEvolveConfig() EvolveConfig {
	return EvolveConfig{
		PopulationSize:    40,
		Seed:              1,
		Init:              InitMinimal,
		PAddConv:          0.15,
		PAddSkip:          0.08,
		PRemoveNode:       0.03,
		PChannels:         0.10,
		PKernel:           0.05,
		PActivation:       0.05,
		PConcat:           0.3,
		WeightRate:        0.8,
		WeightPower:       1.0,
		CrossoverRate:     0.8,
		Kernels:           []int{1, 3, 5},
		MinChannels:       4,
		MaxChannels:       32,
		Activations:       slices.Clone(Activations),
		MaxFLOPs:          300_000,
		CompatThreshold:   1.0,
		CompatDisjoint:    1.0,
		CompatWeight:      0.5,
		SpeciesTarget:     2,
		Stagnation:        15,
		SpeciesElitism:    1,
		Elitism:           1,
		SurvivalThreshold: 0.3,
	}
}

// Validate reports the first field of c an Evolution cannot work with.
func (c *EvolveConfig) Validate() error {
	switch {
	case c.PopulationSize < 2 || c.PopulationSize > 1<<20:
		return fmt.Errorf("population size %d, want 2 to %d", c.PopulationSize, 1<<20)
	case c.Init != InitMinimal && c.Init != InitGenerate:
		return fmt.Errorf("init %q, want %q or %q", c.Init, InitMinimal, InitGenerate)
	case len(c.Kernels) == 0 || slices.ContainsFunc(c.Kernels, func(k int) bool { return k < 1 || k > 63 || k%2 == 0 }):
		return fmt.Errorf("kernels %v, want a non-empty list of odd sizes 1 to 63", c.Kernels)
	case c.MinChannels < 1 || c.MaxChannels < c.MinChannels || c.MaxChannels > 1<<16:
		return fmt.Errorf("channels %d to %d, want 1 ≤ min ≤ max ≤ 65536", c.MinChannels, c.MaxChannels)
	case len(c.Activations) == 0:
		return fmt.Errorf("no activations")
	case c.MaxFLOPs < 1:
		return fmt.Errorf("max FLOPs %d, want ≥ 1", c.MaxFLOPs)
	case !(c.WeightPower >= 0) || math.IsInf(c.WeightPower, 1):
		return fmt.Errorf("weight power %v, want a finite number ≥ 0", c.WeightPower)
	case !(c.CompatThreshold > 0) || math.IsInf(c.CompatThreshold, 1):
		return fmt.Errorf("compatibility threshold %v, want a finite number > 0", c.CompatThreshold)
	case !(c.CompatDisjoint >= 0) || !(c.CompatWeight >= 0) || math.IsInf(c.CompatDisjoint+c.CompatWeight, 1):
		return fmt.Errorf("compatibility coefficients %v and %v, want finite numbers ≥ 0", c.CompatDisjoint, c.CompatWeight)
	case c.SpeciesTarget < 0:
		return fmt.Errorf("species target %d, want ≥ 0 (0: a fixed threshold)", c.SpeciesTarget)
	case c.Stagnation < 1:
		return fmt.Errorf("stagnation %d, want ≥ 1 generation", c.Stagnation)
	case c.SpeciesElitism < 1:
		return fmt.Errorf("species elitism %d, want ≥ 1 (the best species always stays)", c.SpeciesElitism)
	case c.Elitism < 0 || c.Elitism > c.PopulationSize:
		return fmt.Errorf("elitism %d, want 0 to the population size %d", c.Elitism, c.PopulationSize)
	case !(c.SurvivalThreshold > 0 && c.SurvivalThreshold <= 1):
		return fmt.Errorf("survival threshold %v, want a share in (0, 1]", c.SurvivalThreshold)
	}
	for _, a := range c.Activations {
		if !slices.Contains(Activations, a) {
			return fmt.Errorf("unknown activation %q", a)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"PAddConv", c.PAddConv}, {"PAddSkip", c.PAddSkip}, {"PRemoveNode", c.PRemoveNode},
		{"PChannels", c.PChannels}, {"PKernel", c.PKernel}, {"PActivation", c.PActivation},
		{"PConcat", c.PConcat}, {"WeightRate", c.WeightRate}, {"CrossoverRate", c.CrossoverRate},
	} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s %v, want a probability in [0, 1]", p.name, p.v)
		}
	}
	return nil
}
