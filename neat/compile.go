package neat

import "sort"

// MaxSize bounds the magnitude of node ids and of every integer field of a
// node, the input's size, and the number of elements of every value per
// image. The format sets no upper limit; this one keeps the shape arithmetic
// exact in int64 and is far beyond what any device could hold. A genome that
// exceeds it is invalid.
const MaxSize = 1 << 31

// Compile validates a genome against the population's input shape and class
// count and returns its graph. Every error is a *GenomeError naming the genome
// and, where there is one, the node.
//
// The structural rules (positive unique node ids, inputs that exist, no
// cycle, an output that is a listed node) are checked on every listed node;
// ops, fields, shapes and weights only on the nodes the output depends on,
// as the format says. Where a genome breaks several rules, the error is the
// first one met in that order, and among reachable nodes, in evaluation order.
func Compile(g *Genome, in Input, numClasses int) (*Graph, error) {
	return compile(g, in, numClasses, true)
}

// InferShapes is Compile without the parameters: it checks everything
// Compile checks but the weights, and returns the graph with every shape
// known, Weight and Bias nil, and the Params and FLOPs figures the shapes
// give. It tells a program that builds or mutates genomes which weights a
// genome needs.
func InferShapes(g *Genome, in Input, numClasses int) (*Graph, error) {
	return compile(g, in, numClasses, false)
}

func compile(g *Genome, in Input, numClasses int, withParams bool) (*Graph, error) {
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
		if s.Node.Problem != "" {
			return nil, genomeErr(gid, id, "%s", s.Node.Problem)
		}
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
		if err := inferStep(gid, s, g.Params[id], withParams); err != nil {
			return nil, err
		}
		gr.FLOPs = satAdd(gr.FLOPs, s.FLOPs)
		gr.Params = satAdd(gr.Params, s.params())
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
// inputs in listed order. The graph is known to be acyclic, so a node is
// never met again while it is on the stack.
func reachableOrder(output int, byID map[int]*Node) []int {
	var order []int
	seen := map[int]bool{output: true}
	type frame struct{ id, next int }
	stack := []frame{{output, 0}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		n := byID[f.id]
		if f.next == len(n.Inputs) {
			order = append(order, f.id)
			stack = stack[:len(stack)-1]
			continue
		}
		src := n.Inputs[f.next]
		f.next++
		if src == InputNode || seen[src] {
			continue
		}
		seen[src] = true
		stack = append(stack, frame{src, 0})
	}
	return order
}

// satAdd and satMul are int64 arithmetic that saturates instead of wrapping,
// for figures of absurd genomes.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}

func satMul(a ...int64) int64 {
	p := int64(1)
	for _, v := range a {
		if v == 0 {
			return 0
		}
		if p > (1<<63-1)/v {
			p = 1<<63 - 1
			continue
		}
		p *= v
	}
	return p
}
