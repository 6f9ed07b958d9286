package neat_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

// tensor is a tensor of the given shape filled with a small ramp.
func tensor(shape ...int) *neat.Tensor {
	t := &neat.Tensor{Shape: shape}
	t.Data = make([]float32, t.Len())
	for i := range t.Data {
		t.Data[i] = float32(i%7-3) / 10
	}
	return t
}

func params(wshape ...int) *neat.Params {
	return &neat.Params{Weight: tensor(wshape...), Bias: tensor(wshape[0])}
}

var in8 = neat.Input{Channels: 1, Height: 8, Width: 8}

// baseGenome is valid on in8 with 3 classes:
// conv 1 [4 8 8] → maxpool 2 [4 4 4] → global_avg_pool 3 [4] → dense 4 [3].
func baseGenome() *neat.Genome {
	return &neat.Genome{
		ID:     7,
		Output: 4,
		Nodes: []neat.Node{
			{ID: 4, Op: neat.OpDense, Inputs: []int{3}, OutFeatures: 3},
			{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: 4, Kernel: 3, Padding: neat.PaddingDefault},
			{ID: 2, Op: neat.OpMaxPool2D, Inputs: []int{1}, Kernel: 2},
			{ID: 3, Op: neat.OpGlobalAvgPool, Inputs: []int{2}},
		},
		Params: map[int]*neat.Params{1: params(4, 1, 3, 3), 4: params(3, 4)},
	}
}

// node returns the listed node with the given id.
func node(g *neat.Genome, id int) *neat.Node {
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return &g.Nodes[i]
		}
	}
	panic("no such node")
}

func TestCompileValidation(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(g *neat.Genome)
		want   string // "" for a valid genome
		atNode int
	}{
		{"valid", func(g *neat.Genome) {}, "", 0},
		{"cycle", func(g *neat.Genome) { node(g, 1).Inputs = []int{0, 2} },
			"genome 7, node 1: the graph has a cycle through this node", 1},
		{"self loop", func(g *neat.Genome) { node(g, 2).Inputs = []int{2} },
			"genome 7, node 2: the graph has a cycle through this node", 2},
		{"cycle among unreachable nodes", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 8, Op: "x", Inputs: []int{9}}, neat.Node{ID: 9, Op: "x", Inputs: []int{8}})
		}, "genome 7, node 8: the graph has a cycle through this node", 8},
		{"unknown op", func(g *neat.Genome) { node(g, 2).Op = "maxpool" },
			`genome 7, node 2: unknown op "maxpool"`, 2},
		{"missing op", func(g *neat.Genome) { node(g, 2).Op = "" },
			`genome 7, node 2: op is missing`, 2},
		{"unknown activation", func(g *neat.Genome) { node(g, 1).Activation = "swish" },
			`genome 7, node 1: unknown activation "swish"`, 1},
		{"missing weight", func(g *neat.Genome) { delete(g.Params, 1) },
			"genome 7, node 1: conv2d weight shape none, want [4 1 3 3]", 1},
		{"missing bias", func(g *neat.Genome) { g.Params[4].Bias = nil },
			"genome 7, node 4: dense bias shape none, want [3]", 4},
		{"misshapen weight", func(g *neat.Genome) { g.Params[1].Weight = tensor(4, 2, 3, 3) },
			"genome 7, node 1: conv2d weight shape [4 2 3 3], want [4 1 3 3]", 1},
		{"misshapen bias", func(g *neat.Genome) { g.Params[4].Bias = tensor(1, 3) },
			"genome 7, node 4: dense bias shape [1 3], want [3]", 4},
		{"short data", func(g *neat.Genome) { g.Params[4].Weight.Data = g.Params[4].Weight.Data[:5] },
			"genome 7, node 4: dense weight has 5 values for shape [3 4]", 4},
		{"NaN weight", func(g *neat.Genome) { g.Params[1].Weight.Data[5] = float32(math.NaN()) },
			"genome 7, node 1: conv2d weight has a non-finite value (NaN) at flat index 5", 1},
		{"Inf bias", func(g *neat.Genome) { g.Params[4].Bias.Data[2] = float32(math.Inf(-1)) },
			"genome 7, node 4: dense bias has a non-finite value (-Inf) at flat index 2", 4},
		{"unsupported dtype", func(g *neat.Genome) { g.Params[1].Weight = &neat.Tensor{Shape: []int{4, 1, 3, 3}, DType: "I32"} },
			"genome 7, node 1: conv2d weight dtype I32 (shape [4 1 3 3]), want F32, F16 or BF16", 1},
		{"spatial mismatch at a merge", func(g *neat.Genome) { node(g, 3).Inputs = []int{2, 1} },
			"genome 7, node 3: sum merge of inputs with different spatial sizes (input 2 is [B 4 4 4], input 1 is [B 4 8 8])", 3},
		{"spatial mismatch at a concat", func(g *neat.Genome) { n := node(g, 3); n.Inputs = []int{1, 2}; n.Merge = neat.MergeConcat },
			"genome 7, node 3: concat merge of inputs with different spatial sizes (input 1 is [B 4 8 8], input 2 is [B 4 4 4])", 3},
		{"rank mismatch", func(g *neat.Genome) { node(g, 4).Inputs = []int{3, 2} },
			"genome 7, node 4: cannot merge a 2-D and a 4-D input (input 3 is [B 4], input 2 is [B 4 4 4])", 4},
		{"output is 2-D of the wrong width", func(g *neat.Genome) { g.Output = 3 },
			"genome 7, node 3: output shape [B 4], want [B 3]", 3},
		{"output is 4-D", func(g *neat.Genome) { g.Output = 2 },
			"genome 7, node 2: output shape [B 4 4 4], want [B 3]", 2},
		{"dense output of the wrong width", func(g *neat.Genome) { node(g, 4).OutFeatures = 5; g.Params[4] = params(5, 4) },
			"genome 7, node 4: output shape [B 5], want [B 3]", 4},
		{"concat of 2-D values", func(g *neat.Genome) { n := node(g, 4); n.Inputs = []int{3, 3}; n.Merge = neat.MergeConcat },
			"genome 7, node 4: concat merge of 2-D inputs", 4},
		{"unknown merge", func(g *neat.Genome) { n := node(g, 4); n.Inputs = []int{3, 3}; n.Merge = "avg" },
			`genome 7, node 4: unknown merge "avg" (want sum or concat)`, 4},
		{"pool on a 2-D input", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 5, Op: neat.OpAvgPool2D, Inputs: []int{3}, Kernel: 1})
			node(g, 4).Inputs = []int{5}
		}, "genome 7, node 5: avgpool2d needs a 4-D input, got [B 4]", 5},
		{"conv on a 2-D input", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 5, Op: neat.OpConv2D, Inputs: []int{3}, OutChannels: 4, Kernel: 1})
			node(g, 4).Inputs = []int{5}
		}, "genome 7, node 5: conv2d needs a 4-D input, got [B 4]", 5},
		{"global_avg_pool on a 2-D input", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 5, Op: neat.OpGlobalAvgPool, Inputs: []int{3}})
			node(g, 4).Inputs = []int{5}
		}, "genome 7, node 5: global_avg_pool needs a 4-D input, got [B 4]", 5},
		{"pool output below 1", func(g *neat.Genome) { node(g, 2).Kernel = 9 },
			"genome 7, node 2: maxpool2d kernel 9 stride 9 padding 0 on input [B 4 8 8] gives an output below 1×1", 2},
		{"conv output below 1", func(g *neat.Genome) { n := node(g, 1); n.Kernel = 9; n.Padding = 0; g.Params[1] = params(4, 1, 9, 9) },
			"genome 7, node 1: conv2d kernel 9 stride 1 padding 0 on input [B 1 8 8] gives an output below 1×1", 1},
		{"merge ignored on a single-input node", func(g *neat.Genome) { node(g, 2).Merge = "bogus" }, "", 0},
		{"sum merge with unequal channels", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 5, Op: neat.OpConv2D, Inputs: []int{2}, OutChannels: 6, Kernel: 1, Padding: 0})
			g.Params[5] = params(6, 4, 1, 1)
			node(g, 3).Inputs = []int{2, 5}
			g.Params[4] = params(3, 6)
		}, "", 0},
		{"sum merge of 2-D values with unequal features", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 5, Op: neat.OpDense, Inputs: []int{3}, OutFeatures: 9})
			g.Params[5] = params(9, 4)
			node(g, 4).Inputs = []int{3, 5}
			g.Params[4] = params(3, 9)
		}, "", 0},
		{"unreachable nodes may be broken", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes,
				neat.Node{ID: 20, Op: "bogus", Inputs: []int{1}},
				neat.Node{ID: 21, Op: neat.OpConv2D, Inputs: []int{3}, OutChannels: 0, Activation: "swish"},
				neat.Node{ID: 22, Op: neat.OpConv2D, Inputs: []int{21, 20}, Merge: "x", Problem: "conv2d kernel: want a JSON integer, got \"3\""},
				neat.Node{ID: 23, Op: neat.OpDense, Inputs: []int{1}, OutFeatures: 2})
			g.Params[21] = &neat.Params{Weight: &neat.Tensor{Shape: []int{2}, DType: "I32"}}
			g.Params[23] = &neat.Params{Weight: &neat.Tensor{Shape: []int{2, 256}, Data: make([]float32, 512)}}
			g.Params[23].Weight.Data[0] = float32(math.NaN())
		}, "", 0},
		{"duplicate node ids", func(g *neat.Genome) {
			g.Nodes = append(g.Nodes, neat.Node{ID: 2, Op: neat.OpGlobalAvgPool, Inputs: []int{1}})
		},
			"genome 7, node 2: duplicate node id", 2},
		{"input that does not exist", func(g *neat.Genome) { node(g, 2).Inputs = []int{42} },
			"genome 7, node 2: input 42 does not exist", 2},
		{"unreachable node's input that does not exist", func(g *neat.Genome) { g.Nodes = append(g.Nodes, neat.Node{ID: 9, Op: neat.OpDense, Inputs: []int{-4}}) },
			"genome 7, node 9: input -4 does not exist", 9},
		{"no inputs", func(g *neat.Genome) { node(g, 2).Inputs = nil },
			"genome 7, node 2: no inputs", 2},
		{"node id not positive", func(g *neat.Genome) { node(g, 2).ID = -3; node(g, 3).Inputs = []int{-3} },
			"genome 7: node id -3: node ids must be positive", 0},
		{"output is the input", func(g *neat.Genome) { g.Output = 0 },
			"genome 7: output is the input node 0; it must be a listed node", 0},
		{"output does not exist", func(g *neat.Genome) { g.Output = 99 },
			"genome 7: output node 99 does not exist", 0},
		{"loader problem on a reachable node", func(g *neat.Genome) { node(g, 2).Problem = `maxpool2d kernel: want a JSON integer, got 3.0` },
			"genome 7, node 2: maxpool2d kernel: want a JSON integer, got 3.0", 2},
		{"loader problem on the genome", func(g *neat.Genome) { g.Invalid = &neat.GenomeError{Genome: 7, Msg: "output is missing"} },
			"genome 7: output is missing", 0},
		{"kernel 0", func(g *neat.Genome) { node(g, 2).Kernel = 0 },
			"genome 7, node 2: maxpool2d kernel 0, want ≥ 1", 2},
		{"negative stride", func(g *neat.Genome) { node(g, 1).Stride = -1 },
			"genome 7, node 1: conv2d stride -1, want ≥ 1", 1},
		{"negative padding", func(g *neat.Genome) { node(g, 1).Padding = -2 },
			"genome 7, node 1: conv2d padding -2, want ≥ 0", 1},
		{"padding beyond the limit", func(g *neat.Genome) { node(g, 1).Padding = 1 << 40 },
			"genome 7, node 1: conv2d padding 1099511627776, want ≤ 2147483648", 1},
		{"out_channels 0", func(g *neat.Genome) { node(g, 1).OutChannels = 0 },
			"genome 7, node 1: conv2d out_channels 0, want ≥ 1", 1},
		{"out_features 0", func(g *neat.Genome) { node(g, 4).OutFeatures = 0 },
			"genome 7, node 4: dense out_features 0, want ≥ 1", 4},
		{"value too large", func(g *neat.Genome) { n := node(g, 1); n.Padding = 1 << 30; n.OutChannels = 8 },
			"genome 7, node 1: conv2d output [B 8 2147483654 2147483654] has more than 2147483648 elements per image", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := baseGenome()
			c.edit(g)
			gr, err := neat.Compile(g, in8, 3)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Compile: %v, want a valid genome", err)
				}
				if gr.Steps[len(gr.Steps)-1].Node.ID != g.Output {
					t.Errorf("last step is node %d, want the output %d", gr.Steps[len(gr.Steps)-1].Node.ID, g.Output)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile succeeded, want %q", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("Compile error\n got %q\nwant %q", err, c.want)
			}
			var ge *neat.GenomeError
			if !errors.As(err, &ge) || ge.Genome != 7 || ge.Node != c.atNode {
				t.Errorf("error %#v, want a *GenomeError for genome 7, node %d", err, c.atNode)
			}
		})
	}
}

func TestCompileResolvesDefaults(t *testing.T) {
	g := baseGenome()
	node(g, 2).Merge = "bogus" // single input: ignored
	gr, err := neat.Compile(g, in8, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]neat.Node{
		1: {ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, Merge: neat.MergeSum, OutChannels: 4, Kernel: 3, Stride: 1, Padding: 1, Activation: neat.ActReLU},
		2: {ID: 2, Op: neat.OpMaxPool2D, Inputs: []int{1}, Merge: neat.MergeSum, Kernel: 2, Stride: 2},
		3: {ID: 3, Op: neat.OpGlobalAvgPool, Inputs: []int{2}, Merge: neat.MergeSum},
		4: {ID: 4, Op: neat.OpDense, Inputs: []int{3}, Merge: neat.MergeSum, OutFeatures: 3, Activation: neat.ActIdentity},
	}
	wantOut := map[int]neat.Shape{1: {C: 4, H: 8, W: 8}, 2: {C: 4, H: 4, W: 4}, 3: {C: 4, H: 1, W: 1, Flat: true}, 4: {C: 3, H: 1, W: 1, Flat: true}}
	if len(gr.Steps) != 4 {
		t.Fatalf("%d steps, want 4", len(gr.Steps))
	}
	for i, s := range gr.Steps {
		w := want[s.Node.ID]
		if s.Node.Op != w.Op || s.Node.Merge != w.Merge || s.Node.Stride != w.Stride || s.Node.Padding != w.Padding ||
			s.Node.Activation != w.Activation || s.Node.Kernel != w.Kernel {
			t.Errorf("step %d: node %+v, want %+v", i, s.Node, w)
		}
		if s.Out != wantOut[s.Node.ID] {
			t.Errorf("step %d (node %d): out %v, want %v", i, s.Node.ID, s.Out, wantOut[s.Node.ID])
		}
	}
	// Compile does not change the genome.
	if n := node(g, 1); n.Padding != neat.PaddingDefault || n.Stride != 0 || n.Activation != "" {
		t.Errorf("Compile changed the genome's node: %+v", *n)
	}
}

func TestCompilePoolAndConvArithmetic(t *testing.T) {
	cases := []struct {
		n    neat.Node
		in   neat.Input
		want neat.Shape
	}{
		{neat.Node{Op: neat.OpConv2D, OutChannels: 2, Kernel: 3, Padding: neat.PaddingDefault}, neat.Input{Channels: 1, Height: 7, Width: 5}, neat.Shape{C: 2, H: 7, W: 5}},
		{neat.Node{Op: neat.OpConv2D, OutChannels: 2, Kernel: 3, Stride: 2, Padding: neat.PaddingDefault}, neat.Input{Channels: 1, Height: 7, Width: 6}, neat.Shape{C: 2, H: 4, W: 3}},
		{neat.Node{Op: neat.OpConv2D, OutChannels: 2, Kernel: 5, Stride: 3, Padding: 0}, neat.Input{Channels: 3, Height: 11, Width: 5}, neat.Shape{C: 2, H: 3, W: 1}},
		{neat.Node{Op: neat.OpConv2D, OutChannels: 2, Kernel: 4, Padding: neat.PaddingDefault}, neat.Input{Channels: 1, Height: 4, Width: 4}, neat.Shape{C: 2, H: 5, W: 5}},
		{neat.Node{Op: neat.OpConv2D, OutChannels: 2, Kernel: 1, Padding: 2}, neat.Input{Channels: 1, Height: 1, Width: 1}, neat.Shape{C: 2, H: 5, W: 5}},
		{neat.Node{Op: neat.OpMaxPool2D, Kernel: 2}, neat.Input{Channels: 3, Height: 7, Width: 5}, neat.Shape{C: 3, H: 3, W: 2}},
		{neat.Node{Op: neat.OpAvgPool2D, Kernel: 3, Stride: 2}, neat.Input{Channels: 3, Height: 7, Width: 4}, neat.Shape{C: 3, H: 3, W: 1}},
		{neat.Node{Op: neat.OpMaxPool2D, Kernel: 2, Stride: 1}, neat.Input{Channels: 1, Height: 2, Width: 3}, neat.Shape{C: 1, H: 1, W: 2}},
	}
	for _, c := range cases {
		n := c.n
		n.ID, n.Inputs = 1, []int{0}
		g := &neat.Genome{ID: 1, Output: 3, Nodes: []neat.Node{n,
			{ID: 2, Op: neat.OpGlobalAvgPool, Inputs: []int{1}},
			{ID: 3, Op: neat.OpDense, Inputs: []int{2}, OutFeatures: 2}},
			Params: map[int]*neat.Params{3: params(2, c.want.C)}}
		if n.Op == neat.OpConv2D {
			g.Params[1] = params(2, c.in.Channels, n.Kernel, n.Kernel)
		}
		gr, err := neat.Compile(g, c.in, 2)
		if err != nil {
			t.Errorf("%+v on %+v: %v", c.n, c.in, err)
			continue
		}
		if got := gr.Steps[0].Out; got != c.want {
			t.Errorf("%+v on %+v: out %v, want %v", c.n, c.in, got, c.want)
		}
	}
}

func TestInferShapes(t *testing.T) {
	g := baseGenome()
	g.Params = nil
	if _, err := neat.Compile(g, in8, 3); err == nil {
		t.Fatal("Compile of a genome without weights succeeded")
	}
	gr, err := neat.InferShapes(g, in8, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]int{1: {4, 1, 3, 3}, 2: nil, 3: nil, 4: {3, 4}}
	for _, s := range gr.Steps {
		if got := s.WeightShape(); !slices.Equal(got, want[s.Node.ID]) || s.Weight != nil || s.Bias != nil {
			t.Errorf("node %d: weight shape %v (weight %v), want %v", s.Node.ID, got, s.Weight, want[s.Node.ID])
		}
	}
	// The figures are those Compile gives once the weights are there.
	full, err := neat.Compile(baseGenome(), in8, 3)
	if err != nil {
		t.Fatal(err)
	}
	if gr.Params != 55 || full.Params != 55 || gr.FLOPs != full.FLOPs || gr.FLOPs != 2*(4*9*64+3*4) {
		t.Errorf("InferShapes: %d params, %d FLOPs; Compile: %d params, %d FLOPs; want 55 params, %d FLOPs",
			gr.Params, gr.FLOPs, full.Params, full.FLOPs, 2*(4*9*64+3*4))
	}
	// Everything but the weights is still checked.
	node(g, 2).Kernel = 9
	if _, err := neat.InferShapes(g, in8, 3); err == nil || !strings.Contains(err.Error(), "gives an output below 1×1") {
		t.Errorf("InferShapes: %v, want the output-size error", err)
	}
}
