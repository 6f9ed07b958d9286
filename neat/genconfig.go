package neat

import (
	"fmt"
	"slices"
)

// GenConfig shapes the random genomes that Generate draws. The zero value is
// not usable; start from DefaultGenConfig or WideGenConfig.
type GenConfig struct {
	// MinConv and MaxConv bound the number of conv2d nodes on a genome's
	// main path. Fewer are drawn when MaxFLOPs leaves no room for more.
	MinConv, MaxConv int
	// MinChannels and MaxChannels bound each conv2d's out_channels.
	MinChannels, MaxChannels int
	// Kernels are the conv2d kernel sizes to draw from.
	Kernels []int
	// MinHidden and MaxHidden bound the width of a hidden dense layer.
	MinHidden, MaxHidden int
	// MaxFLOPs bounds each genome's FLOPs per image (2 × the multiply-adds
	// of its conv2d and dense nodes) on the population's input: convolutions
	// are narrowed, shrunk to 1×1, or left out to stay under it.
	MaxFLOPs int64
	// Activations are drawn from for conv2d and hidden dense nodes.
	Activations []Activation

	// Probabilities, each in [0, 1].

	// PDownsample is the chance of a pool before a conv2d, and of a stride
	// of 2 on a conv2d. Above 14×14 a pool is drawn at least 3 times in 4.
	PDownsample float64
	// PSkip is the chance that a node also takes an earlier value of the
	// same height and width (a skip connection), and that the dense head
	// also takes the pooled features of an earlier stage.
	PSkip float64
	// PConcat is the chance that a 4-D node with several inputs concatenates
	// them rather than summing them.
	PConcat float64
	// PFlatten is the chance that the head flattens the last feature map into
	// a dense node instead of a global_avg_pool, where FLOPs allow.
	PFlatten float64
	// PHidden is the chance of a hidden dense layer before the output.
	PHidden float64
	// PDangling is the chance of an extra node that the output does not
	// depend on, as NEAT leaves behind; it sometimes has no weights.
	PDangling float64
}

// DefaultGenConfig is the configuration of the default population: small
// CNNs (1 to 8 convolutions of 4 to 32 channels) of at most 3 MFLOP per
// image, about 1 MFLOP on average on 28×28 images, so that a population of
// 64 scores the 10,000 MNIST test images in seconds on two cores.
func DefaultGenConfig() GenConfig {
	return GenConfig{
		MinConv: 1, MaxConv: 8,
		MinChannels: 4, MaxChannels: 32,
		Kernels:   []int{1, 3, 5},
		MinHidden: 8, MaxHidden: 64,
		MaxFLOPs:    3_000_000,
		Activations: slices.Clone(Activations),
		PDownsample: 0.35,
		PSkip:       0.3,
		PConcat:     0.3,
		PFlatten:    0.25,
		PHidden:     0.35,
		PDangling:   0.15,
	}
}

// WideGenConfig is a configuration for benchmarks: wider convolutions (16
// to 128 channels) and up to 120 MFLOP per image, closer to what a GPU
// needs to be kept busy.
func WideGenConfig() GenConfig {
	c := DefaultGenConfig()
	c.MinChannels, c.MaxChannels = 16, 128
	c.MinHidden, c.MaxHidden = 32, 256
	c.MaxFLOPs = 120_000_000
	c.PDownsample = 0.25
	return c
}

// Validate reports the first field of c that Generate cannot work with.
func (c GenConfig) Validate() error {
	switch {
	case c.MinConv < 0 || c.MaxConv < c.MinConv || c.MaxConv > 64:
		return fmt.Errorf("conv count %d to %d, want 0 ≤ min ≤ max ≤ 64", c.MinConv, c.MaxConv)
	case c.MinChannels < 1 || c.MaxChannels < c.MinChannels || c.MaxChannels > 1<<16:
		return fmt.Errorf("channels %d to %d, want 1 ≤ min ≤ max ≤ 65536", c.MinChannels, c.MaxChannels)
	case c.MinHidden < 1 || c.MaxHidden < c.MinHidden || c.MaxHidden > 1<<16:
		return fmt.Errorf("hidden width %d to %d, want 1 ≤ min ≤ max ≤ 65536", c.MinHidden, c.MaxHidden)
	case len(c.Kernels) == 0 || slices.ContainsFunc(c.Kernels, func(k int) bool { return k < 1 || k > 64 }):
		return fmt.Errorf("kernels %v, want a non-empty list of sizes 1 to 64", c.Kernels)
	case c.MaxFLOPs < 1:
		return fmt.Errorf("max FLOPs %d, want ≥ 1", c.MaxFLOPs)
	case len(c.Activations) == 0:
		return fmt.Errorf("no activations")
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
		{"PDownsample", c.PDownsample}, {"PSkip", c.PSkip}, {"PConcat", c.PConcat},
		{"PFlatten", c.PFlatten}, {"PHidden", c.PHidden}, {"PDangling", c.PDangling},
	} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s %v, want a probability in [0, 1]", p.name, p.v)
		}
	}
	return nil
}
