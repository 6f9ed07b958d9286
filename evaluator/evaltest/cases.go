package evaltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

func tensor(shape []int, data ...float32) *neat.Tensor {
	return &neat.Tensor{Shape: shape, Data: data}
}

func node(id int, op neat.Op, inputs ...int) neat.Node {
	return neat.Node{ID: id, Op: op, Inputs: inputs, Padding: neat.PaddingDefault}
}

// HandChecked scores tiny genomes whose logits were worked out by hand.
func HandChecked(t *testing.T, nb NewBackend) {
	b := backend(t, nb, vram.Float32)
	type tc struct {
		name      string
		g         *neat.Genome
		image     []float32
		label     uint8
		classes   int
		acc, loss float64
	}
	// conv 1×1 (×2 +1) → maxpool 2 → global_avg_pool → dense [1, −1]:
	// logits [9, −9].
	c1 := node(1, neat.OpConv2D, 0)
	c1.OutChannels, c1.Kernel, c1.Padding, c1.Activation = 1, 1, 0, neat.ActIdentity
	p2 := node(2, neat.OpMaxPool2D, 1)
	p2.Kernel = 2
	d4 := node(4, neat.OpDense, 3)
	d4.OutFeatures = 2
	a := &neat.Genome{ID: 10, Output: 4, Nodes: []neat.Node{c1, p2, node(3, neat.OpGlobalAvgPool, 2), d4},
		Params: map[int]*neat.Params{
			1: {Weight: tensor([]int{1, 1, 1, 1}, 2), Bias: tensor([]int{1}, 1)},
			4: {Weight: tensor([]int{2, 1}, 1, -1), Bias: tensor([]int{2}, 0, 0)},
		}}
	// conv 1×1 to 2 channels (x, −x); avgpool 2 over the sum of the input
	// (1 channel, zero-padded) and the conv: [(1+2+3+4)·2/4, −10/4] = [5, −2.5].
	b1 := node(1, neat.OpConv2D, 0)
	b1.OutChannels, b1.Kernel, b1.Activation = 2, 1, neat.ActIdentity
	b2 := node(2, neat.OpAvgPool2D, 0, 1)
	b2.Kernel = 2
	b4 := node(4, neat.OpDense, 3)
	b4.OutFeatures = 2
	bg := &neat.Genome{ID: 11, Output: 4, Nodes: []neat.Node{b4, b2, b1, node(3, neat.OpGlobalAvgPool, 2)},
		Params: map[int]*neat.Params{
			1: {Weight: tensor([]int{2, 1, 1, 1}, 1, -1), Bias: tensor([]int{2}, 0, 0)},
			4: {Weight: tensor([]int{2, 2}, 1, 0, 0, 1), Bias: tensor([]int{2}, 0, 0)},
		}}
	// relu(conv 1×1) of [−1, 2, −3, 4] is [0, 2, 0, 4]; global_avg_pool of the
	// concat [input, conv] is [0.5, 1.5]; dense gives [0.5, 1.5, 0].
	e1 := node(1, neat.OpConv2D, 0)
	e1.OutChannels, e1.Kernel = 1, 1
	e2 := node(2, neat.OpGlobalAvgPool, 0, 1)
	e2.Merge = neat.MergeConcat
	e3 := node(3, neat.OpDense, 2)
	e3.OutFeatures = 3
	cg := &neat.Genome{ID: 12, Output: 3, Nodes: []neat.Node{e1, e2, e3},
		Params: map[int]*neat.Params{
			1: {Weight: tensor([]int{1, 1, 1, 1}, 1), Bias: tensor([]int{1}, 0)},
			3: {Weight: tensor([]int{3, 2}, 1, 0, 0, 1, 1, 1), Bias: tensor([]int{3}, 0, 0, -2)},
		}}
	for _, c := range []tc{
		{"conv-maxpool-gap-dense", a, []float32{1, 2, 3, 4}, 1, 2, 0, 18 + math.Log1p(math.Exp(-18))},
		{"sum-merge-unequal-channels-avgpool", bg, []float32{1, 2, 3, 4}, 0, 2, 1, math.Log1p(math.Exp(-7.5))},
		{"concat-relu", cg, []float32{-1, 2, -3, 4}, 1, 3, 1, math.Log(math.Exp(0.5)+math.Exp(1.5)+1) - 1.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := &datasets.Dataset{Name: c.name, Channels: 1, Height: 2, Width: 2, NumClasses: c.classes,
				N: 1, Images: c.image, Labels: []uint8{c.label}}
			pop := &neat.Population{Input: neat.Input{Channels: 1, Height: 2, Width: 2}, NumClasses: c.classes, Genomes: []*neat.Genome{c.g}}
			r := Evaluate(t, b, ds, pop, staging.DefaultConfig(), defaultOptions())[0]
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Accuracy != c.acc || math.Abs(r.Loss-c.loss) > 1e-5*math.Max(1, c.loss) {
				t.Errorf("accuracy %v loss %.9g, want %v and %.9g", r.Accuracy, r.Loss, c.acc, c.loss)
			}
		})
	}
}

// randTensor fills a tensor with values uniform in ±scale.
func randTensor(rng *rand.Rand, scale float32, shape ...int) *neat.Tensor {
	t := &neat.Tensor{Shape: shape}
	t.Data = make([]float32, t.Len())
	for i := range t.Data {
		t.Data[i] = (rng.Float32()*2 - 1) * scale
	}
	return t
}

// EveryOp scores, against the reference, one genome per combination of op
// and parameter: conv kernels 1–5 with strides 1–3 and paddings 0–2 and the
// default, every activation on conv and dense, both pools with strides,
// sum merges of unequal channels (4-D) and features (2-D), and concat.
func EveryOp(t *testing.T, nb NewBackend) {
	b := backend(t, nb, vram.Float32)
	rng := rand.New(rand.NewPCG(1, 2))
	in := neat.Input{Channels: 2, Height: 9, Width: 8}
	const classes = 4
	var gs []*neat.Genome
	add := func(nodes []neat.Node, output int) {
		g := &neat.Genome{ID: int64(len(gs)), Output: output, Nodes: nodes, Params: map[int]*neat.Params{}}
		gr, err := neat.InferShapes(g, in, classes)
		if err != nil {
			t.Fatalf("case %d: %v", len(gs), err)
		}
		for _, s := range gr.Steps {
			switch s.Node.Op {
			case neat.OpConv2D:
				k := s.Node.Kernel
				g.Params[s.Node.ID] = &neat.Params{
					Weight: randTensor(rng, float32(1/math.Sqrt(float64(s.In.C*k*k))), s.Out.C, s.In.C, k, k),
					Bias:   randTensor(rng, 0.5, s.Out.C)}
			case neat.OpDense:
				g.Params[s.Node.ID] = &neat.Params{
					Weight: randTensor(rng, float32(1/math.Sqrt(float64(s.In.Size()))), s.Out.C, s.In.Size()),
					Bias:   randTensor(rng, 0.5, s.Out.C)}
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
				add(append([]neat.Node{c}, head(1, 2, 3, "")...), 3)
			}
		}
	}
	for _, a := range neat.Activations {
		c := node(1, neat.OpConv2D, 0)
		c.OutChannels, c.Kernel, c.Activation = 5, 3, a
		add(append([]neat.Node{c}, head(1, 2, 3, a)...), 3)
	}
	for _, op := range []neat.Op{neat.OpMaxPool2D, neat.OpAvgPool2D} {
		for _, k := range []int{1, 2, 3} {
			for _, s := range []int{0, 1, 2} {
				p := node(1, op, 0)
				p.Kernel, p.Stride = k, s
				add(append([]neat.Node{p}, head(1, 2, 3, "")...), 3)
			}
		}
	}
	// Sum of unequal channels with a skip from the input, and concat.
	for _, m := range []neat.Merge{neat.MergeSum, neat.MergeConcat} {
		c1 := node(1, neat.OpConv2D, 0)
		c1.OutChannels, c1.Kernel = 6, 3
		c2 := node(2, neat.OpConv2D, 1, 0)
		c2.OutChannels, c2.Kernel, c2.Merge, c2.Activation = 4, 3, m, neat.ActTanh
		c3 := node(3, neat.OpConv2D, 2, 1, 0)
		c3.OutChannels, c3.Kernel, c3.Merge = 3, 1, m
		add(append([]neat.Node{c1, c2, c3}, head(3, 4, 5, "")...), 5)
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
		add([]neat.Node{c1, d2, g3, d4}, 4)
	}
	pop := &neat.Population{Input: in, NumClasses: classes, Genomes: gs}
	ds := datasets.Synthetic(23, in.Channels, in.Height, in.Width, classes, 5)
	for _, bs := range []int{1, 5, 23} {
		t.Run(fmt.Sprintf("batch%d", bs), func(t *testing.T) {
			o := defaultOptions()
			o.EvalBatchSize = bs
			rs := Evaluate(t, b, ds, pop, staging.DefaultConfig(), o)
			CheckAgainstReference(t, pop, ds, rs)
		})
	}
}
