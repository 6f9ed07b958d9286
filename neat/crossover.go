package neat

// crossover makes a child of a and b, a being the fitter parent, as NEAT
// does: nodes are aligned by their historical marking (node id). The child
// has a's topology: its nodes, its edges and the genes a alone has
// (disjoint and excess genes come from the fitter parent). Each node both
// parents have, with the same op, takes its settings (width, kernel,
// activation, stride, padding) from either parent with equal chance, and
// its weights with them; where both parents' weights of the node are laid
// out alike (same shapes, same inputs), each weight and bias element is
// then taken from either parent with equal chance, as NEAT inherits each
// matching connection weight. (Recombining element by element is what lets
// a species pool what its members learnt, rather than pick one member's
// tensor whole.) Weights that no longer fit their node's inputs are
// refitted as a mutation's are, keeping what overlaps. A child that does
// not compile is drawn again, and after mutationTries the child is a copy
// of a.
func (m *mutator) crossover(a, b *Genome, id int64) *Genome {
	ga, errA := InferShapes(a, m.in, m.nc)
	gb, errB := InferShapes(b, m.in, m.nc)
	if errA != nil || errB != nil {
		return a.Clone(id)
	}
	la, lb := layouts(ga), layouts(gb)
	for range mutationTries {
		c := a.Clone(id)
		before := make(map[int]layout, len(la))
		for i := range c.Nodes {
			n := &c.Nodes[i]
			if l, ok := la[n.ID]; ok {
				before[n.ID] = l
			}
			j := nodeAt(b, n.ID)
			if j < 0 || b.Nodes[j].Op != n.Op {
				continue
			}
			bl, okB := lb[n.ID]
			if l, ok := la[n.ID]; ok && okB && l.equal(&bl) && c.Params[n.ID] != nil && b.Params[n.ID] != nil {
				if m.cfg.CrossoverBlend {
					blendParams(c.Params[n.ID], b.Params[n.ID])
				} else {
					mixParams(m, c.Params[n.ID], b.Params[n.ID])
				}
			}
			if !m.chance(0.5) {
				continue
			}
			bn := &b.Nodes[j]
			n.OutChannels, n.Kernel, n.Stride, n.Padding, n.Activation = bn.OutChannels, bn.Kernel, bn.Stride, bn.Padding, bn.Activation
			if n.ID != c.Output {
				n.OutFeatures = bn.OutFeatures
			}
			if l, ok := la[n.ID]; ok && okB && l.equal(&bl) {
				continue // the settings are a's or alike, the elements mixed
			}
			delete(c.Params, n.ID)
			delete(before, n.ID)
			if p := b.Params[n.ID]; p != nil {
				c.Params[n.ID] = cloneParams(p)
				if okB {
					before[n.ID] = bl
				}
			}
		}
		if fitParams(m.r, c, m.in, m.nc, before) == nil && m.valid(c) {
			return c
		}
	}
	return a.Clone(id)
}

// mixParams replaces each element of p's tensors by q's with chance 1/2.
// p and q are laid out alike; p is the child's own copy.
func mixParams(m *mutator, p, q *Params) {
	for _, t := range [][2]*Tensor{{p.Weight, q.Weight}, {p.Bias, q.Bias}} {
		dst, src := t[0], t[1]
		if dst == nil || src == nil || len(dst.Data) != len(src.Data) {
			continue
		}
		var bits uint64
		for i := range dst.Data {
			if i%64 == 0 {
				bits = m.r.Uint64()
			}
			if bits&1 != 0 {
				dst.Data[i] = src.Data[i]
			}
			bits >>= 1
		}
	}
}

// blendParams replaces each element of p's tensors by the mean of it and
// q's: intermediate recombination, as evolution strategies recombine, which
// averages out the parents' independent noise where discrete recombination
// keeps it. p and q are laid out alike; p is the child's own copy.
func blendParams(p, q *Params) {
	for _, t := range [][2]*Tensor{{p.Weight, q.Weight}, {p.Bias, q.Bias}} {
		dst, src := t[0], t[1]
		if dst == nil || src == nil || len(dst.Data) != len(src.Data) {
			continue
		}
		for i := range dst.Data {
			dst.Data[i] = (dst.Data[i] + src.Data[i]) / 2
		}
	}
}
