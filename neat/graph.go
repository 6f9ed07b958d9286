package neat

import (
	"fmt"
	"math"
	"sort"
)

// Shape is the per-image shape of a value: [C, H, W] for a 4-D value
// ([B, C, H, W] with the batch), or [C] for a 2-D one ([B, C]), when Flat.
// A flat shape has H = W = 1.
type Shape struct {
	C, H, W int
	Flat    bool
}

// Size is the number of elements of one image's value.
func (s Shape) Size() int { return s.C * s.H * s.W }

func (s Shape) String() string {
	if s.Flat {
		return fmt.Sprintf("[B %d]", s.C)
	}
	return fmt.Sprintf("[B %d %d %d]", s.C, s.H, s.W)
}

// Step is one reachable node of a compiled graph, with every default
// resolved and every shape known.
type Step struct {
	// Node is the listed node with Stride, Padding, Merge and Activation
	// resolved to the values in force.
	Node Node
	// Inputs are the values the node reads, in listed order: an index into
	// Graph.Steps, or -1 for the input batch.
	Inputs []int
	// InShapes are the shapes of Inputs; In is the shape after merging.
	InShapes []Shape
	In       Shape
	Out      Shape
	// Weight and Bias are the node's parameters (conv2d and dense), checked
	// against the shapes: Weight [out, in, k, k] or [out, in], Bias [out].
	Weight *Tensor
	Bias   *Tensor
	// Release lists the steps whose values are dead once this step has run:
	// their last consumer is this step, and none of them is the output.
	Release []int
	// FLOPs is 2 × the multiply-adds of this step for one image.
	FLOPs int64
}

// Graph is a genome compiled for evaluation: its reachable nodes in an order
// that respects every edge, shapes inferred, parameters checked.
//
// The order and Release lists are the liveness schedule that every backend
// follows; the memory figures are computed from that same schedule, so the
// figures and the allocations a backend makes agree.
type Graph struct {
	GenomeID   int64
	Input      Shape
	NumClasses int
	// Steps are the reachable nodes in evaluation order; the output is last.
	Steps []Step
	// Params is the number of weights and biases of the reachable nodes.
	Params int64
	// FLOPs is 2 × the multiply-adds of the reachable conv2d and dense nodes,
	// for one image.
	FLOPs int64
}

// WeightBytes is the memory of the graph's parameters with elemSize bytes per
// element (4 for float32, 2 for bfloat16).
func (g *Graph) WeightBytes(elemSize int) int64 { return g.Params * int64(elemSize) }

// Workspace, when given to PeakActivationBytes, says how many bytes of
// scratch memory a backend allocates while it runs step i for a batch of b
// images, beyond the step's merged input and output.
type Workspace func(g *Graph, i int, b int) int64

// PeakActivationBytes is the largest amount of activation memory live at
// once during a forward of b images with elemSize bytes per element,
// following the graph's liveness schedule: at step i, the values still to be
// read, the merged input (for a node with several inputs), the step's output
// and its workspace are live together; after it, the merged input, the
// workspace and the values in Release are freed. The input batch is not
// counted: it is the caller's. The output stays live to the end.
func (g *Graph) PeakActivationBytes(b, elemSize int, ws Workspace) int64 {
	var live, peak int64
	size := func(i int) int64 { return int64(g.Steps[i].Out.Size()) * int64(b) * int64(elemSize) }
	for i := range g.Steps {
		s := &g.Steps[i]
		var merged int64
		if len(s.Inputs) > 1 {
			merged = int64(s.In.Size()) * int64(b) * int64(elemSize)
		}
		var w int64
		if ws != nil {
			w = ws(g, i, b)
		}
		out := size(i)
		if p := live + merged + w + out; p > peak {
			peak = p
		}
		live += out
		for _, r := range s.Release {
			live -= size(r)
		}
	}
	return peak
}

// Compile validates a genome against the population's input shape and class
// count and returns its graph. Every error is a *GenomeError naming the genome
// and, where there is one, the node.
func Compile(g *Genome, in Input, numClasses int) (*Graph, error) {
	if g.Invalid != nil {
		return nil, g.Invalid
	}
	gid := g.ID
	byID := make(map[int]*Node, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.ID <= 0 {
			return nil, genomeErr(gid, 0, "node id %d: node ids must be positive", n.ID)
		}
		if _, dup := byID[n.ID]; dup {
			return nil, genomeErr(gid, n.ID, "duplicate node id")
		}
		byID[n.ID] = n
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if len(n.Inputs) == 0 {
			return nil, genomeErr(gid, n.ID, "no inputs")
		}
		for _, src := range n.Inputs {
			if src == InputNode {
				continue
			}
			if _, ok := byID[src]; !ok {
				return nil, genomeErr(gid, n.ID, "input %d does not exist", src)
			}
		}
	}
	if cyc := findCycle(g.Nodes, byID); cyc != 0 {
		return nil, genomeErr(gid, cyc, "the graph has a cycle through this node")
	}
	if g.Output == InputNode {
		return nil, genomeErr(gid, 0, "output is the input node 0; it must be a listed node")
	}
	if _, ok := byID[g.Output]; !ok {
		return nil, genomeErr(gid, 0, "output node %d does not exist", g.Output)
	}

	order := reachableOrder(g.Output, byID)
	gr := &Graph{
		GenomeID:   gid,
		Input:      Shape{C: in.Channels, H: in.Height, W: in.Width},
		NumClasses: numClasses,
		Steps:      make([]Step, len(order)),
	}
	index := make(map[int]int, len(order))
	for i, id := range order {
		index[id] = i
	}
	for i, id := range order {
		s := &gr.Steps[i]
		s.Node = *byID[id]
		s.Node.Inputs = append([]int(nil), s.Node.Inputs...)
		s.Inputs = make([]int, len(s.Node.Inputs))
		s.InShapes = make([]Shape, len(s.Node.Inputs))
		for j, src := range s.Node.Inputs {
			if src == InputNode {
				s.Inputs[j] = -1
				s.InShapes[j] = gr.Input
			} else {
				s.Inputs[j] = index[src]
				s.InShapes[j] = gr.Steps[index[src]].Out
			}
		}
		if err := inferStep(gid, s, g.Params[id]); err != nil {
			return nil, err
		}
		gr.FLOPs += s.FLOPs
		if s.Weight != nil {
			gr.Params += int64(s.Weight.Len()) + int64(s.Bias.Len())
		}
	}
	out := gr.Steps[len(gr.Steps)-1]
	if !out.Out.Flat || out.Out.C != numClasses {
		return nil, genomeErr(gid, out.Node.ID, "output shape %v, want [B %d]", out.Out, numClasses)
	}
	// Liveness: a value dies after its last consumer, except the output.
	last := make([]int, len(gr.Steps))
	for i := range last {
		last[i] = -1
	}
	for i := range gr.Steps {
		for _, src := range gr.Steps[i].Inputs {
			if src >= 0 {
				last[src] = i
			}
		}
	}
	for v, at := range last {
		if at >= 0 && v != len(gr.Steps)-1 {
			gr.Steps[at].Release = append(gr.Steps[at].Release, v)
		}
	}
	return gr, nil
}

// findCycle returns a node id on a cycle, or 0 when the listed graph is
// acyclic. Nodes are visited in id order so the answer is deterministic.
func findCycle(nodes []Node, byID map[int]*Node) int {
	const (
		white = iota
		grey
		black
	)
	color := make(map[int]int, len(nodes))
	ids := make([]int, 0, len(nodes))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	type frame struct{ id, next int }
	for _, root := range ids {
		if color[root] != white {
			continue
		}
		stack := []frame{{root, 0}}
		color[root] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			n := byID[f.id]
			if f.next == len(n.Inputs) {
				color[f.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			src := n.Inputs[f.next]
			f.next++
			if src == InputNode {
				continue
			}
			switch color[src] {
			case grey:
				return src
			case white:
				color[src] = grey
				stack = append(stack, frame{src, 0})
			}
		}
	}
	return 0
}

// reachableOrder lists the nodes from which output can be reached, each after
// all of its inputs, by a depth-first post-order from the output that visits
// inputs in listed order. The graph is known to be acyclic.
func reachableOrder(output int, byID map[int]*Node) []int {
	var order []int
	done := map[int]bool{}
	type frame struct{ id, next int }
	stack := []frame{{output, 0}}
	onStack := map[int]bool{output: true}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		n := byID[f.id]
		if f.next == len(n.Inputs) {
			order = append(order, f.id)
			done[f.id] = true
			stack = stack[:len(stack)-1]
			continue
		}
		src := n.Inputs[f.next]
		f.next++
		if src == InputNode || done[src] || onStack[src] {
			continue
		}
		onStack[src] = true
		stack = append(stack, frame{src, 0})
	}
	return order
}

func inferStep(gid int64, s *Step, p *Params) error {
	n := &s.Node
	id := n.ID
	// Resolve defaults.
	if n.Merge == "" {
		n.Merge = MergeSum
	}
	if len(n.Inputs) > 1 && n.Merge != MergeSum && n.Merge != MergeConcat {
		return genomeErr(gid, id, "unknown merge %q (want sum or concat)", n.Merge)
	}
	switch n.Op {
	case OpConv2D, OpMaxPool2D, OpAvgPool2D:
		if n.Kernel < 1 {
			return genomeErr(gid, id, "%s kernel %d, want ≥ 1", n.Op, n.Kernel)
		}
		if n.Stride == 0 {
			if n.Op == OpConv2D {
				n.Stride = 1
			} else {
				n.Stride = n.Kernel
			}
		}
		if n.Stride < 1 {
			return genomeErr(gid, id, "%s stride %d, want ≥ 1", n.Op, n.Stride)
		}
	}
	switch n.Op {
	case OpConv2D:
		if n.Padding == PaddingDefault {
			n.Padding = n.Kernel / 2
		}
		if n.Padding < 0 {
			return genomeErr(gid, id, "conv2d padding %d, want ≥ 0", n.Padding)
		}
		if n.OutChannels < 1 {
			return genomeErr(gid, id, "conv2d out_channels %d, want ≥ 1", n.OutChannels)
		}
		if n.Activation == "" {
			n.Activation = ActReLU
		}
	case OpDense:
		if n.OutFeatures < 1 {
			return genomeErr(gid, id, "dense out_features %d, want ≥ 1", n.OutFeatures)
		}
		if n.Activation == "" {
			n.Activation = ActIdentity
		}
	case OpMaxPool2D, OpAvgPool2D:
		n.Padding = 0
	case OpGlobalAvgPool:
	default:
		return genomeErr(gid, id, "unknown op %q", n.Op)
	}
	if n.Op == OpConv2D || n.Op == OpDense {
		if !validActivation(n.Activation) {
			return genomeErr(gid, id, "unknown activation %q", n.Activation)
		}
	}

	// Merge the inputs.
	in := s.InShapes[0]
	for j, sh := range s.InShapes[1:] {
		if sh.Flat != in.Flat {
			return genomeErr(gid, id, "cannot merge a 2-D and a 4-D input (input %d is %v, input %d is %v)",
				n.Inputs[0], s.InShapes[0], n.Inputs[j+1], sh)
		}
		if !sh.Flat && (sh.H != in.H || sh.W != in.W) {
			return genomeErr(gid, id, "%s merge of inputs with different spatial sizes (input %d is %v, input %d is %v)",
				n.Merge, n.Inputs[0], s.InShapes[0], n.Inputs[j+1], sh)
		}
	}
	if len(s.InShapes) > 1 {
		switch n.Merge {
		case MergeSum:
			for _, sh := range s.InShapes[1:] {
				in.C = max(in.C, sh.C)
			}
		case MergeConcat:
			if in.Flat {
				return genomeErr(gid, id, "concat merge of 2-D inputs")
			}
			for _, sh := range s.InShapes[1:] {
				in.C += sh.C
			}
		}
	}
	s.In = in

	// Output shape and parameters.
	switch n.Op {
	case OpConv2D, OpMaxPool2D, OpAvgPool2D:
		if in.Flat {
			return genomeErr(gid, id, "%s needs a 4-D input, got %v", n.Op, in)
		}
		h := (in.H+2*n.Padding-n.Kernel)/n.Stride + 1
		w := (in.W+2*n.Padding-n.Kernel)/n.Stride + 1
		if in.H+2*n.Padding < n.Kernel || in.W+2*n.Padding < n.Kernel || h < 1 || w < 1 {
			return genomeErr(gid, id, "%s kernel %d stride %d padding %d on input %v gives an output below 1×1",
				n.Op, n.Kernel, n.Stride, n.Padding, in)
		}
		c := in.C
		if n.Op == OpConv2D {
			c = n.OutChannels
		}
		s.Out = Shape{C: c, H: h, W: w}
	case OpGlobalAvgPool:
		if in.Flat {
			return genomeErr(gid, id, "global_avg_pool needs a 4-D input, got %v", in)
		}
		s.Out = Shape{C: in.C, H: 1, W: 1, Flat: true}
	case OpDense:
		s.Out = Shape{C: n.OutFeatures, H: 1, W: 1, Flat: true}
	}

	switch n.Op {
	case OpConv2D:
		wshape := []int{n.OutChannels, in.C, n.Kernel, n.Kernel}
		if err := checkParams(gid, n, p, wshape); err != nil {
			return err
		}
		s.Weight, s.Bias = p.Weight, p.Bias
		s.FLOPs = 2 * int64(n.OutChannels) * int64(in.C) * int64(n.Kernel*n.Kernel) * int64(s.Out.H*s.Out.W)
	case OpDense:
		wshape := []int{n.OutFeatures, in.Size()}
		if err := checkParams(gid, n, p, wshape); err != nil {
			return err
		}
		s.Weight, s.Bias = p.Weight, p.Bias
		s.FLOPs = 2 * int64(n.OutFeatures) * int64(in.Size())
	}
	return nil
}

func validActivation(a Activation) bool {
	for _, v := range Activations {
		if a == v {
			return true
		}
	}
	return false
}

func checkParams(gid int64, n *Node, p *Params, wshape []int) error {
	var w, b *Tensor
	if p != nil {
		w, b = p.Weight, p.Bias
	}
	if err := checkTensor(gid, n, "weight", w, wshape); err != nil {
		return err
	}
	return checkTensor(gid, n, "bias", b, wshape[:1])
}

func checkTensor(gid int64, n *Node, name string, t *Tensor, want []int) error {
	if t == nil {
		return genomeErr(gid, n.ID, "%s %s shape none, want %v", n.Op, name, want)
	}
	if !equalInts(t.Shape, want) {
		return genomeErr(gid, n.ID, "%s %s shape %v, want %v", n.Op, name, t.Shape, want)
	}
	if len(t.Data) != t.Len() {
		return genomeErr(gid, n.ID, "%s %s has %d values for shape %v", n.Op, name, len(t.Data), t.Shape)
	}
	for i, v := range t.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return genomeErr(gid, n.ID, "%s %s has a non-finite value (%v) at flat index %d", n.Op, name, v, i)
		}
	}
	return nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
