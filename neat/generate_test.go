package neat_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

var genInputs = []neat.Input{
	{Channels: 1, Height: 28, Width: 28},
	{Channels: 3, Height: 32, Width: 32},
	{Channels: 1, Height: 8, Width: 8},
	{Channels: 2, Height: 3, Width: 5},
	{Channels: 1, Height: 1, Width: 1},
}

// checkGenerated checks what every generated genome must be.
func checkGenerated(t *testing.T, pop *neat.Population, cfg neat.GenConfig) {
	t.Helper()
	for i, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			t.Fatalf("input %+v, genome #%d: %v", pop.Input, i, err)
		}
		if g.ID != int64(i) || g.Invalid != nil {
			t.Fatalf("genome #%d has id %d, invalid %v", i, g.ID, g.Invalid)
		}
		if gr.FLOPs > cfg.MaxFLOPs {
			t.Errorf("genome %d: %d FLOPs, more than %d", g.ID, gr.FLOPs, cfg.MaxFLOPs)
		}
		if !slices.IsSortedFunc(g.Nodes, func(a, b neat.Node) int { return a.ID - b.ID }) {
			t.Errorf("genome %d: nodes not listed in id order", g.ID)
		}
		convs := 0
		for j, n := range g.Nodes {
			if n.ID < 1 || j > 0 && n.ID == g.Nodes[j-1].ID || n.Problem != "" {
				t.Errorf("genome %d: node %+v", g.ID, n)
			}
		}
		for _, s := range gr.Steps {
			if s.Node.Op == neat.OpConv2D {
				convs++
				if s.Node.OutChannels < cfg.MinChannels || s.Node.OutChannels > cfg.MaxChannels {
					t.Errorf("genome %d, node %d: %d channels", g.ID, s.Node.ID, s.Node.OutChannels)
				}
				if !slices.Contains(cfg.Kernels, s.Node.Kernel) && s.Node.Kernel != 1 {
					t.Errorf("genome %d, node %d: kernel %d", g.ID, s.Node.ID, s.Node.Kernel)
				}
			}
		}
		if convs > cfg.MaxConv {
			t.Errorf("genome %d: %d convolutions", g.ID, convs)
		}
		for id, p := range g.Params {
			for _, ts := range []*neat.Tensor{p.Weight, p.Bias} {
				for _, v := range ts.Data {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 10 {
						t.Fatalf("genome %d, node %d: weight %v", g.ID, id, v)
					}
				}
			}
		}
	}
}

func TestGenerateManySeeds(t *testing.T) {
	cfg := neat.DefaultGenConfig()
	for seed := range int64(200) {
		in := genInputs[seed%int64(len(genInputs))]
		classes := []int{10, 2, 100}[seed%3]
		pop := neat.Generate(seed, 8, in, classes, cfg)
		if len(pop.Genomes) != 8 || pop.Input != in || pop.NumClasses != classes {
			t.Fatalf("seed %d: %d genomes, input %+v, %d classes", seed, len(pop.Genomes), pop.Input, pop.NumClasses)
		}
		checkGenerated(t, pop, cfg)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	in := genInputs[0]
	cfg := neat.DefaultGenConfig()
	a := neat.Generate(42, 16, in, 10, cfg)
	b := neat.Generate(42, 16, in, 10, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two populations from seed 42 differ")
	}
	if prefix := neat.Generate(42, 5, in, 10, cfg); !reflect.DeepEqual(prefix.Genomes, a.Genomes[:5]) {
		t.Error("genome i depends on the population size")
	}
	c := neat.Generate(43, 16, in, 10, cfg)
	same := 0
	for i := range a.Genomes {
		if reflect.DeepEqual(a.Genomes[i].Nodes, c.Genomes[i].Nodes) {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 42 and 43 give %d identical topologies of 16", same)
	}
	if len(neat.Generate(1, 0, in, 10, cfg).Genomes) != 0 {
		t.Error("a population of size 0 has genomes")
	}
}

// TestGenerateCoverage checks that one default population of 64 uses every
// op, activation and merge of the format, on reachable nodes, and the
// shapes NEAT produces: varied depth and width, strides, skips over unequal
// channel counts, flatten and hidden dense heads, unreachable nodes.
func TestGenerateCoverage(t *testing.T) {
	cfg := neat.DefaultGenConfig()
	pop := neat.Generate(1, 64, genInputs[0], 10, cfg)
	seen := map[string]bool{}
	var flops int64
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			t.Fatal(err)
		}
		flops += gr.FLOPs
		convs := 0
		if len(gr.Steps) < len(g.Nodes) {
			seen["unreachable node"] = true
		}
		for i, s := range gr.Steps {
			n := s.Node
			seen["op "+string(n.Op)] = true
			if n.Op == neat.OpConv2D || n.Op == neat.OpDense {
				seen["activation "+string(n.Activation)] = true
			}
			if n.Op == neat.OpConv2D {
				convs++
				seen["kernel "+string(rune('0'+n.Kernel))] = true
				seen["channels "+map[bool]string{true: "min", false: "other"}[n.OutChannels == cfg.MinChannels]] = true
				if n.OutChannels > 24 {
					seen["channels above 24"] = true
				}
				if n.Stride == 2 {
					seen["conv stride 2"] = true
				}
				if n.Padding == 0 && n.Kernel > 1 {
					seen["conv padding 0"] = true
				}
			}
			if (n.Op == neat.OpMaxPool2D || n.Op == neat.OpAvgPool2D) && n.Stride != n.Kernel {
				seen["pool stride ≠ kernel"] = true
			}
			if n.Op == neat.OpDense && !s.In.Flat {
				seen["flatten head"] = true
			}
			if n.Op == neat.OpDense && i < len(gr.Steps)-1 {
				seen["hidden dense"] = true
			}
			if len(s.Inputs) > 1 {
				seen["merge "+string(n.Merge)] = true
				if n.Merge == neat.MergeSum && s.InShapes[0].C != s.InShapes[1].C {
					if s.In.Flat {
						seen["2-D sum, unequal features"] = true
					} else {
						seen["4-D sum, unequal channels"] = true
					}
				}
				if slices.Contains(s.Inputs, -1) {
					seen["skip from the input"] = true
				}
				for _, in := range s.Inputs {
					if in >= 0 && in < i-1 {
						seen["skip across steps"] = true
					}
				}
			}
		}
		seen["depth "+string(rune('0'+convs))] = true
	}
	want := []string{"unreachable node", "flatten head", "hidden dense", "conv stride 2", "conv padding 0",
		"pool stride ≠ kernel", "merge sum", "merge concat", "2-D sum, unequal features", "4-D sum, unequal channels",
		"skip across steps", "skip from the input", "kernel 1", "kernel 3", "kernel 5", "channels min", "channels other",
		"channels above 24", "depth 1", "depth 4", "depth 8"}
	for _, op := range neat.Ops {
		want = append(want, "op "+string(op))
	}
	for _, a := range neat.Activations {
		want = append(want, "activation "+string(a))
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no genome has: %s", w)
		}
	}
	// The default population is small enough to score quickly.
	if mean := flops / int64(len(pop.Genomes)); mean > 1_500_000 {
		t.Errorf("mean FLOPs per image %d, want at most 1.5M", mean)
	}
}

func TestGenerateWide(t *testing.T) {
	cfg := neat.WideGenConfig()
	pop := neat.Generate(3, 24, genInputs[1], 10, cfg)
	checkGenerated(t, pop, cfg)
	widest := 0
	for _, g := range pop.Genomes {
		for _, n := range g.Nodes {
			widest = max(widest, n.OutChannels)
		}
	}
	if widest < 96 {
		t.Errorf("the widest convolution has %d channels, want some near 128", widest)
	}
}

func TestGenerateTightBudget(t *testing.T) {
	cfg := neat.DefaultGenConfig()
	cfg.MaxFLOPs = 20_000 // below any 28×28 convolution but the smallest
	pop := neat.Generate(5, 32, genInputs[0], 10, cfg)
	checkGenerated(t, pop, cfg)
}

func TestGenConfigValidate(t *testing.T) {
	cases := []struct {
		edit func(c *neat.GenConfig)
		want string
	}{
		{func(c *neat.GenConfig) {}, ""},
		{func(c *neat.GenConfig) { c.MinConv, c.MaxConv = 3, 2 }, "conv count 3 to 2"},
		{func(c *neat.GenConfig) { c.MinConv = -1 }, "conv count -1 to 8"},
		{func(c *neat.GenConfig) { c.MinChannels = 0 }, "channels 0 to 32"},
		{func(c *neat.GenConfig) { c.MaxHidden = 2 }, "hidden width 8 to 2"},
		{func(c *neat.GenConfig) { c.Kernels = nil }, "kernels []"},
		{func(c *neat.GenConfig) { c.Kernels = []int{3, 0} }, "kernels [3 0]"},
		{func(c *neat.GenConfig) { c.MaxFLOPs = 0 }, "max FLOPs 0"},
		{func(c *neat.GenConfig) { c.Activations = nil }, "no activations"},
		{func(c *neat.GenConfig) { c.Activations = []neat.Activation{"relu6"} }, `unknown activation "relu6"`},
		{func(c *neat.GenConfig) { c.PSkip = 1.5 }, "PSkip 1.5, want a probability in [0, 1]"},
		{func(c *neat.GenConfig) { c.PConcat = math.NaN() }, "PConcat NaN"},
	}
	for _, c := range cases {
		cfg := neat.DefaultGenConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
	}
	if err := neat.WideGenConfig().Validate(); err != nil {
		t.Errorf("WideGenConfig: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "neat: Generate: max FLOPs 0") {
			t.Errorf("Generate with a bad config: panic %v", r)
		}
	}()
	cfg := neat.DefaultGenConfig()
	cfg.MaxFLOPs = 0
	neat.Generate(1, 1, genInputs[0], 10, cfg)
}
