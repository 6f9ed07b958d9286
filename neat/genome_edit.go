package neat

import "slices"

// Clone returns a deep copy of g with the given id: nodes, inputs and
// tensors are copied, so that changing one genome never changes the other.
func (g *Genome) Clone(id int64) *Genome {
	c := &Genome{ID: id, Output: g.Output, Invalid: g.Invalid, Nodes: make([]Node, len(g.Nodes)), Params: make(map[int]*Params, len(g.Params))}
	for i, n := range g.Nodes {
		n.Inputs = slices.Clone(n.Inputs)
		c.Nodes[i] = n
	}
	for id, p := range g.Params { // order does not matter: each entry is copied
		c.Params[id] = cloneParams(p)
	}
	return c
}

func cloneParams(p *Params) *Params {
	if p == nil {
		return nil
	}
	return &Params{Weight: cloneTensor(p.Weight), Bias: cloneTensor(p.Bias)}
}

func cloneTensor(t *Tensor) *Tensor {
	if t == nil {
		return nil
	}
	return &Tensor{Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data), DType: t.DType}
}

// nodeAt returns the index of node id in g.Nodes, or -1.
func nodeAt(g *Genome, id int) int {
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}

// insertNode adds n to g keeping the nodes in id order.
func insertNode(g *Genome, n Node) {
	i, _ := slices.BinarySearchFunc(g.Nodes, n.ID, func(a Node, id int) int { return a.ID - id })
	g.Nodes = slices.Insert(g.Nodes, i, n)
}

// prune removes the nodes the output does not depend on, and their
// parameters. g must be acyclic with an existing output.
func prune(g *Genome) {
	keep := map[int]bool{g.Output: true}
	stack := []int{g.Output}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i := nodeAt(g, id)
		if i < 0 {
			continue
		}
		for _, src := range g.Nodes[i].Inputs {
			if src != InputNode && !keep[src] {
				keep[src] = true
				stack = append(stack, src)
			}
		}
	}
	g.Nodes = slices.DeleteFunc(g.Nodes, func(n Node) bool { return !keep[n.ID] })
	for id := range g.Params {
		if !keep[id] {
			delete(g.Params, id)
		}
	}
}

// downstream returns the nodes that depend on id (id included): adding an
// edge from any of them into id would close a cycle.
func downstream(g *Genome, id int) map[int]bool {
	down := map[int]bool{id: true}
	for changed := true; changed; {
		changed = false
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if down[n.ID] {
				continue
			}
			for _, src := range n.Inputs {
				if down[src] {
					down[n.ID] = true
					changed = true
					break
				}
			}
		}
	}
	return down
}

// stepsByID indexes a graph's steps by node id.
func stepsByID(gr *Graph) map[int]*Step {
	m := make(map[int]*Step, len(gr.Steps))
	for i := range gr.Steps {
		m[gr.Steps[i].Node.ID] = &gr.Steps[i]
	}
	return m
}

// outShape is the shape of value id (InputNode: the input).
func outShape(gr *Graph, steps map[int]*Step, id int) Shape {
	if id == InputNode {
		return gr.Input
	}
	return steps[id].Out
}
