package onnxexport_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/neat"
)

// mnist is the input of every test model: the MNIST images they run on.
var mnist = neat.Input{Channels: 1, Height: 28, Width: 28}

const classes = 10

func node(id int, op neat.Op, inputs ...int) neat.Node {
	return neat.Node{ID: id, Op: op, Inputs: inputs, Padding: neat.PaddingDefault}
}

func randTensor(rng *rand.Rand, scale float64, shape ...int) *neat.Tensor {
	t := &neat.Tensor{Shape: shape}
	t.Data = make([]float32, t.Len())
	for i := range t.Data {
		t.Data[i] = float32((rng.Float64()*2 - 1) * scale)
	}
	return t
}

// edgeCases are the genomes of the population format's edge cases, on
// MNIST's input: every conv kernel, stride and padding (explicit and
// default), every activation on conv2d and on dense, both pools with their
// default, equal and other strides (wider than the kernel too), sum merges
// of unequal channel counts (4-D, from the input too) and feature counts
// (2-D), concat, a dense on a flattened 4-D value and on the input itself,
// the same value merged with itself, and nodes the output does not need
// (without weights).
func edgeCases(t testing.TB) []*neat.Genome {
	rng := rand.New(rand.NewPCG(3, 4))
	var gs []*neat.Genome
	add := func(output int, nodes ...neat.Node) {
		g := &neat.Genome{ID: int64(1000 + len(gs)), Output: output, Nodes: nodes, Params: map[int]*neat.Params{}}
		gr, err := neat.InferShapes(g, mnist, classes)
		if err != nil {
			t.Fatalf("edge case %d: %v", len(gs), err)
		}
		for _, s := range gr.Steps {
			if ws := s.WeightShape(); ws != nil {
				fanIn := 1
				for _, d := range ws[1:] {
					fanIn *= d
				}
				g.Params[s.Node.ID] = &neat.Params{Weight: randTensor(rng, 2/math.Sqrt(float64(fanIn)), ws...),
					Bias: randTensor(rng, 0.5, ws[0])}
			}
		}
		gs = append(gs, g)
	}
	head := func(from, gapID, denseID int, act neat.Activation) []neat.Node {
		d := node(denseID, neat.OpDense, gapID)
		d.OutFeatures, d.Activation = classes, act
		return []neat.Node{node(gapID, neat.OpGlobalAvgPool, from), d}
	}
	for _, k := range []int{1, 2, 3, 5} {
		for _, s := range []int{1, 2, 3} {
			for _, p := range []int{0, 1, 2, neat.PaddingDefault} {
				c := node(1, neat.OpConv2D, 0)
				c.OutChannels, c.Kernel, c.Stride, c.Padding = 3, k, s, p
				add(3, append([]neat.Node{c}, head(1, 2, 3, "")...)...)
			}
		}
	}
	for _, a := range neat.Activations {
		c := node(1, neat.OpConv2D, 0)
		c.OutChannels, c.Kernel, c.Activation = 5, 3, a
		add(3, append([]neat.Node{c}, head(1, 2, 3, a)...)...)
	}
	for _, op := range []neat.Op{neat.OpMaxPool2D, neat.OpAvgPool2D} {
		for _, k := range []int{1, 2, 3} {
			for _, s := range []int{0, 1, 2, 4} {
				c := node(1, neat.OpConv2D, 0)
				c.OutChannels, c.Kernel, c.Activation = 4, 3, neat.ActTanh
				p := node(2, op, 1)
				p.Kernel, p.Stride = k, s
				add(4, append([]neat.Node{c, p}, head(2, 3, 4, "")...)...)
			}
		}
	}
	// Sums over unequal channels with a skip from the input, and concat.
	for _, m := range []neat.Merge{neat.MergeSum, neat.MergeConcat} {
		c1 := node(1, neat.OpConv2D, 0)
		c1.OutChannels, c1.Kernel = 6, 3
		c2 := node(2, neat.OpConv2D, 1, 0)
		c2.OutChannels, c2.Kernel, c2.Merge, c2.Activation = 4, 3, m, neat.ActTanh
		c3 := node(3, neat.OpConv2D, 2, 1, 0)
		c3.OutChannels, c3.Kernel, c3.Merge = 3, 1, m
		add(5, append([]neat.Node{c1, c2, c3}, head(3, 4, 5, "")...)...)
	}
	// A 2-D sum of unequal features, and a dense on a flattened 4-D value.
	{
		c1 := node(1, neat.OpConv2D, 0)
		c1.OutChannels, c1.Kernel, c1.Stride = 3, 3, 2
		d2 := node(2, neat.OpDense, 1)
		d2.OutFeatures, d2.Activation = 7, neat.ActGELU
		g3 := node(3, neat.OpGlobalAvgPool, 1)
		d4 := node(4, neat.OpDense, 2, 3)
		d4.OutFeatures = classes
		add(4, c1, d2, g3, d4)
	}
	// A dense on the input itself, and a pool of the input summed with
	// itself and with a wider conv.
	{
		d := node(1, neat.OpDense, 0)
		d.OutFeatures, d.Activation = classes, neat.ActSigmoid
		add(1, d)
		c := node(2, neat.OpConv2D, 0)
		c.OutChannels, c.Kernel, c.Activation = 2, 1, neat.ActLeakyReLU
		p := node(3, neat.OpAvgPool2D, 0, 0, 2)
		p.Kernel = 2
		add(5, append([]neat.Node{c, p}, head(3, 4, 5, "")...)...)
	}
	// Nodes the output does not depend on, one without weights, and a
	// concat of three values of the same size, one of them twice.
	{
		c1 := node(7, neat.OpConv2D, 0)
		c1.OutChannels, c1.Kernel, c1.Stride = 2, 5, 2
		c2 := node(8, neat.OpConv2D, 7)
		c2.OutChannels, c2.Kernel, c2.Activation = 3, 3, neat.ActGELU
		cat := node(9, neat.OpMaxPool2D, 7, 8, 7)
		cat.Kernel, cat.Merge = 2, neat.MergeConcat
		lost := node(20, neat.OpConv2D, 9) // no weights: never computed
		lost.OutChannels, lost.Kernel = 64, 7
		lost2 := node(21, neat.OpDense, 20)
		lost2.OutFeatures = 3
		d := node(10, neat.OpDense, 9)
		d.OutFeatures = classes
		add(10, c1, c2, cat, lost, lost2, d)
	}
	return gs
}

// generated is n genomes of each preset, drawn with seed.
func generated(seed int64, small, wide int) []*neat.Genome {
	gs := neat.Generate(seed, small, mnist, classes, neat.DefaultGenConfig()).Genomes
	for _, g := range neat.Generate(seed, wide, mnist, classes, neat.WideGenConfig()).Genomes {
		g.ID += 100000
		gs = append(gs, g)
	}
	return gs
}
