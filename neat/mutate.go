package neat

import (
	"math"
	"math/rand/v2"
	"slices"
)

// mutator applies NEAT's operators to genomes of one input shape and class
// count, drawing from one random stream and one innovation tracker.
type mutator struct {
	r   *rand.Rand
	cfg *EvolveConfig
	in  Input
	nc  int
	inn *innovations
}

// mutation edits g (a copy the mutator owns) in place, given its graph
// before the edit, and reports whether it found something to change. It
// leaves parameters to fitParams, except for nodes it creates.
type mutation func(m *mutator, g *Genome, gr *Graph, st map[int]*Step) bool

// mutations are the structural mutations, in the order a child is offered
// them, each with its chance.
var mutations = []struct {
	name string
	rate func(c *EvolveConfig) float64
	op   mutation
}{
	{"add_conv", func(c *EvolveConfig) float64 { return c.PAddConv }, addConv},
	{"add_skip", func(c *EvolveConfig) float64 { return c.PAddSkip }, addSkip},
	{"remove_node", func(c *EvolveConfig) float64 { return c.PRemoveNode }, removeNode},
	{"channels", func(c *EvolveConfig) float64 { return c.PChannels }, changeChannels},
	{"kernel", func(c *EvolveConfig) float64 { return c.PKernel }, changeKernel},
	{"activation", func(c *EvolveConfig) float64 { return c.PActivation }, changeActivation},
}

// mutationTries is how often a structural mutation is drawn again when its
// child is refused (invalid, or over MaxFLOPs) before it is given up.
const mutationTries = 3

func (m *mutator) chance(p float64) bool { return m.r.Float64() < p }

// mutate applies to child, which the caller owns, each structural mutation
// with its chance, then perturbs the weights. Every structural mutation is
// made on a copy that must Compile within MaxFLOPs, or it is drawn again
// and, after mutationTries, given up; so the result is as valid as child.
func (m *mutator) mutate(child *Genome) *Genome {
	for _, mu := range mutations {
		if m.cfg.Init == InitFixed || !m.chance(mu.rate(m.cfg)) {
			continue
		}
		for range mutationTries {
			if c, ok := m.apply(child, mu.op); ok {
				child = c
				break
			}
		}
	}
	m.perturb(child)
	return child
}

// apply runs op on a copy of g, prunes what the output no longer uses,
// refits the parameters and checks the result.
func (m *mutator) apply(g *Genome, op mutation) (*Genome, bool) {
	gr, err := InferShapes(g, m.in, m.nc)
	if err != nil {
		return nil, false
	}
	c := g.Clone(g.ID)
	if !op(m, c, gr, stepsByID(gr)) {
		return nil, false
	}
	prune(c)
	if fitParams(m.r, c, m.in, m.nc, layouts(gr)) != nil || !m.valid(c) {
		return nil, false
	}
	return c, true
}

// valid says whether g compiles, weights included, within MaxFLOPs.
func (m *mutator) valid(g *Genome) bool {
	gr, err := Compile(g, m.in, m.nc)
	return err == nil && gr.FLOPs <= m.cfg.MaxFLOPs
}

// newActivation is the activation of a new conv2d: relu when allowed, so
// that its identity weights pass non-negative inputs through unchanged.
func (m *mutator) newActivation() Activation {
	if slices.Contains(m.cfg.Activations, ActReLU) {
		return ActReLU
	}
	return m.cfg.Activations[0]
}

// addConv splits an edge src → dst whose value is 4-D with a conv2d of
// stride 1 and default padding, so the height and width stay. Its
// out_channels are src's, within MinChannels..MaxChannels; its weights are
// the identity on the channels it shares with src (new channels drawn
// afresh), so the child starts close to its parent.
func addConv(m *mutator, g *Genome, gr *Graph, st map[int]*Step) bool {
	var edges [][2]int
	for i := range g.Nodes {
		for _, s := range g.Nodes[i].Inputs {
			if !outShape(gr, st, s).Flat {
				edges = append(edges, [2]int{s, g.Nodes[i].ID})
			}
		}
	}
	if len(edges) == 0 {
		return false
	}
	e := edges[m.r.IntN(len(edges))]
	id := m.inn.split(e[0], e[1])
	if nodeAt(g, id) >= 0 {
		return false
	}
	srcC := outShape(gr, st, e[0]).C
	c := min(max(srcC, m.cfg.MinChannels), m.cfg.MaxChannels)
	k := m.cfg.Kernels[m.r.IntN(len(m.cfg.Kernels))]
	act := m.newActivation()
	dst := &g.Nodes[nodeAt(g, e[1])]
	dst.Inputs[slices.Index(dst.Inputs, e[0])] = id
	insertNode(g, Node{ID: id, Op: OpConv2D, Inputs: []int{e[0]}, OutChannels: c, Kernel: k, Padding: PaddingDefault, Activation: act})
	p := freshParams(m.r, act, []int{c, srcC, k, k})
	row := srcC * k * k
	for o := range min(c, srcC) {
		w := p.Weight.Data[o*row : (o+1)*row]
		clear(w)
		w[o*k*k+(k/2)*k+k/2] = 1
	}
	g.Params[id] = p
	return true
}

// addSkip gives a node another input: the input batch or a node that does
// not depend on it, whose value has the same height and width (4-D) or is
// 2-D like the node's input. A node that had one input now sums them, or
// concatenates 4-D ones with chance PConcat; one that had several keeps its
// merge.
func addSkip(m *mutator, g *Genome, gr *Graph, st map[int]*Step) bool {
	var cands [][2]int
	for i := range g.Nodes {
		d := &g.Nodes[i]
		in := st[d.ID].In
		down := downstream(g, d.ID)
		for j := -1; j < len(g.Nodes); j++ {
			s := InputNode
			if j >= 0 {
				s = g.Nodes[j].ID
			}
			if down[s] || slices.Contains(d.Inputs, s) {
				continue
			}
			sh := outShape(gr, st, s)
			if sh.Flat != in.Flat || !sh.Flat && (sh.H != in.H || sh.W != in.W) {
				continue
			}
			cands = append(cands, [2]int{s, d.ID})
		}
	}
	if len(cands) == 0 {
		return false
	}
	e := cands[m.r.IntN(len(cands))]
	d := &g.Nodes[nodeAt(g, e[1])]
	d.Inputs = append(d.Inputs, e[0])
	if len(d.Inputs) == 2 {
		d.Merge = MergeSum
		if !st[d.ID].In.Flat && m.chance(m.cfg.PConcat) {
			d.Merge = MergeConcat
		}
	}
	return true
}

// removeNode deletes a node other than the output; each of its consumers
// reads the node's inputs in its place (each input once).
func removeNode(m *mutator, g *Genome, _ *Graph, _ map[int]*Step) bool {
	if len(g.Nodes) < 2 {
		return false
	}
	var cands []int
	for i := range g.Nodes {
		if g.Nodes[i].ID != g.Output {
			cands = append(cands, i)
		}
	}
	at := cands[m.r.IntN(len(cands))]
	n := g.Nodes[at]
	for i := range g.Nodes {
		c := &g.Nodes[i]
		j := slices.Index(c.Inputs, n.ID)
		if j < 0 {
			continue
		}
		var ins []int
		for _, s := range slices.Concat(c.Inputs[:j], n.Inputs, c.Inputs[j+1:]) {
			if !slices.Contains(ins, s) {
				ins = append(ins, s)
			}
		}
		c.Inputs = ins
		if len(ins) == 1 {
			c.Merge = ""
		}
	}
	g.Nodes = slices.Delete(g.Nodes, at, at+1)
	delete(g.Params, n.ID)
	return true
}

// resizable lists the nodes whose width or activation a mutation may
// change: conv2d nodes and dense nodes other than the output.
func resizable(g *Genome) []int {
	var ids []int
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Op == OpConv2D || n.Op == OpDense && n.ID != g.Output {
			ids = append(ids, i)
		}
	}
	return ids
}

// changeChannels moves a conv2d's out_channels (a hidden dense node's
// out_features) up or down by up to half, within MinChannels..MaxChannels.
// Rows it keeps keep their weights and new rows are drawn afresh;
// consumers keep the weights of the channels that stay and read new ones
// with weights 0 (fitParams).
func changeChannels(m *mutator, g *Genome, _ *Graph, _ map[int]*Step) bool {
	ids := resizable(g)
	if len(ids) == 0 {
		return false
	}
	n := &g.Nodes[ids[m.r.IntN(len(ids))]]
	out := &n.OutChannels
	if n.Op == OpDense {
		out = &n.OutFeatures
	}
	old := *out
	delta := 1 + m.r.IntN(max(1, old/2))
	if m.r.IntN(2) == 0 {
		delta = -delta
	}
	clamp := func(v int) int { return min(max(v, m.cfg.MinChannels), m.cfg.MaxChannels) }
	v := clamp(old + delta)
	if v == old {
		v = clamp(old - delta)
	}
	*out = v
	return v != old
}

// changeKernel gives a conv2d another of Kernels; its weights keep their
// centred taps.
func changeKernel(m *mutator, g *Genome, _ *Graph, _ map[int]*Step) bool {
	var convs []int
	for i := range g.Nodes {
		if g.Nodes[i].Op == OpConv2D {
			convs = append(convs, i)
		}
	}
	if len(convs) == 0 {
		return false
	}
	n := &g.Nodes[convs[m.r.IntN(len(convs))]]
	ks := slices.DeleteFunc(slices.Clone(m.cfg.Kernels), func(k int) bool { return k == n.Kernel })
	if len(ks) == 0 {
		return false
	}
	n.Kernel = ks[m.r.IntN(len(ks))]
	return true
}

// changeActivation gives a conv2d or hidden dense node another activation.
func changeActivation(m *mutator, g *Genome, _ *Graph, st map[int]*Step) bool {
	ids := resizable(g)
	if len(ids) == 0 {
		return false
	}
	n := &g.Nodes[ids[m.r.IntN(len(ids))]]
	cur := st[n.ID].Node.Activation // resolved
	acts := slices.DeleteFunc(slices.Clone(m.cfg.Activations), func(a Activation) bool { return a == cur })
	if len(acts) == 0 {
		return false
	}
	n.Activation = acts[m.r.IntN(len(acts))]
	return true
}

// perturb adds Gaussian noise of standard deviation power × the He scale
// of the node's weights to each weight and bias tensor of g, each with
// chance WeightRate; power is WeightPower, spread log-normally by
// WeightPowerSpread (one draw per child, made only when the spread is set,
// so runs without it draw as before). g is the caller's own copy.
func (m *mutator) perturb(g *Genome) {
	power := m.cfg.WeightPower
	if m.cfg.WeightPowerSpread > 0 {
		power *= math.Exp(m.cfg.WeightPowerSpread * m.r.NormFloat64())
	}
	for i := range g.Nodes {
		p := g.Params[g.Nodes[i].ID]
		if p == nil || p.Weight == nil {
			continue
		}
		std := power * heScale(p.Weight.Shape)
		for _, t := range []*Tensor{p.Weight, p.Bias} {
			if t == nil || !m.chance(m.cfg.WeightRate) {
				continue
			}
			for j := range t.Data {
				t.Data[j] += float32(m.r.NormFloat64() * std)
			}
		}
	}
}
