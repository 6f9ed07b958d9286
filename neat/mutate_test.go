package neat

import (
	"math/rand/v2"
	"slices"
	"testing"
)

var testIn = Input{Channels: 1, Height: 28, Width: 28}

// testGenomes are genomes mutations start from: minimal ones, and the
// generator's (with skips, concatenations, pools and hidden dense layers),
// renumbered as an Evolution does.
func testGenomes(t *testing.T) []*Genome {
	t.Helper()
	var gs []*Genome
	for _, init := range []string{InitMinimal, InitGenerate} {
		cfg := DefaultEvolveConfig()
		cfg.Init, cfg.PopulationSize, cfg.MaxFLOPs = init, 12, 3_000_000
		e, err := NewEvolution(testIn, 10, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, e.pop...)
	}
	return gs
}

func testMutator(seed uint64) *mutator {
	cfg := DefaultEvolveConfig()
	cfg.MaxFLOPs = 3_000_000
	return &mutator{r: rand.New(rand.NewPCG(seed, 1)), cfg: &cfg, in: testIn, nc: 10, inn: &innovations{next: 1000}}
}

// checkMarkings checks what every genome of a run keeps: positive node ids,
// unique and listed in increasing order, every weighted node with
// parameters, no node the output does not use, and a graph that compiles.
func checkMarkings(t *testing.T, g *Genome) {
	t.Helper()
	if _, err := Compile(g, testIn, 10); err != nil {
		t.Fatalf("genome %d does not compile: %v", g.ID, err)
	}
	for i := range g.Nodes {
		if g.Nodes[i].ID <= 0 || i > 0 && g.Nodes[i].ID <= g.Nodes[i-1].ID {
			t.Fatalf("genome %d: node ids not positive and increasing: %v", g.ID, nodeIDs(g))
		}
	}
	gr, _ := InferShapes(g, testIn, 10)
	if len(gr.Steps) != len(g.Nodes) {
		t.Fatalf("genome %d: %d nodes listed, %d reachable", g.ID, len(g.Nodes), len(gr.Steps))
	}
	for id := range g.Params {
		if nodeAt(g, id) < 0 {
			t.Fatalf("genome %d: parameters of node %d, which is not listed", g.ID, id)
		}
	}
}

func nodeIDs(g *Genome) []int {
	ids := make([]int, len(g.Nodes))
	for i := range g.Nodes {
		ids[i] = g.Nodes[i].ID
	}
	return ids
}

func sameTensor(a, b *Tensor) bool {
	return a != nil && b != nil && slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Data, b.Data)
}

// TestMutations applies each structural mutation many times to varied
// genomes: every child compiles within the FLOP limit, keeps the markings
// consistent, changes what the mutation says and nothing it should not,
// and leaves its parent untouched.
func TestMutations(t *testing.T) {
	parents := testGenomes(t)
	for _, mu := range mutations {
		t.Run(mu.name, func(t *testing.T) {
			m := testMutator(7)
			applied := 0
			for range 6 {
				for _, p := range parents {
					before := p.Clone(p.ID)
					c, ok := m.apply(p, mu.op)
					if !sameGenome(p, before) {
						t.Fatalf("genome %d: the parent changed", p.ID)
					}
					if !ok {
						continue
					}
					applied++
					checkMarkings(t, c)
					if gr, _ := Compile(c, testIn, 10); gr.FLOPs > m.cfg.MaxFLOPs {
						t.Fatalf("child of %d: %d FLOPs over the limit", p.ID, gr.FLOPs)
					}
					checkEffect(t, mu.name, p, c, m)
				}
			}
			if applied < len(parents) {
				t.Errorf("%s applied %d times in %d tries", mu.name, applied, 6*len(parents))
			}
		})
	}
}

func sameGenome(a, b *Genome) bool {
	if a.ID != b.ID || a.Output != b.Output || len(a.Nodes) != len(b.Nodes) || len(a.Params) != len(b.Params) {
		return false
	}
	for i := range a.Nodes {
		x, y := a.Nodes[i], b.Nodes[i]
		if !slices.Equal(x.Inputs, y.Inputs) {
			return false
		}
		if !sameSettings(x, y) {
			return false
		}
	}
	for id, p := range a.Params {
		q := b.Params[id]
		if q == nil || !sameTensor(p.Weight, q.Weight) || !sameTensor(p.Bias, q.Bias) {
			return false
		}
	}
	return true
}

// sameSettings compares two nodes but for their inputs.
func sameSettings(a, b Node) bool {
	a.Inputs, b.Inputs = nil, nil
	type plain struct {
		ID                                                int
		Op                                                Op
		Merge                                             Merge
		OutChannels, OutFeatures, Kernel, Stride, Padding int
		Activation                                        Activation
		Problem                                           string
	}
	pa := plain{a.ID, a.Op, a.Merge, a.OutChannels, a.OutFeatures, a.Kernel, a.Stride, a.Padding, a.Activation, a.Problem}
	pb := plain{b.ID, b.Op, b.Merge, b.OutChannels, b.OutFeatures, b.Kernel, b.Stride, b.Padding, b.Activation, b.Problem}
	return pa == pb
}

// checkEffect checks what one mutation did to parent p, giving child c.
func checkEffect(t *testing.T, name string, p, c *Genome, m *mutator) {
	t.Helper()
	pids, cids := nodeIDs(p), nodeIDs(c)
	added := slices.DeleteFunc(slices.Clone(cids), func(id int) bool { return slices.Contains(pids, id) })
	removed := slices.DeleteFunc(slices.Clone(pids), func(id int) bool { return slices.Contains(cids, id) })
	switch name {
	case "add_conv":
		if len(added) != 1 || len(removed) != 0 {
			t.Fatalf("add_conv: added %v removed %v", added, removed)
		}
		n := c.Nodes[nodeAt(c, added[0])]
		if n.Op != OpConv2D || n.Stride != 0 || n.Padding != PaddingDefault || n.Kernel%2 != 1 {
			t.Fatalf("add_conv: new node %+v", n)
		}
		// The split edge: src fed some node that now reads the new node.
		src := n.Inputs[0]
		var dst int
		for _, x := range c.Nodes {
			if slices.Contains(x.Inputs, n.ID) {
				dst = x.ID
			}
		}
		if pd := p.Nodes[nodeAt(p, dst)]; !slices.Contains(pd.Inputs, src) {
			t.Fatalf("add_conv: edge %d → %d was not in the parent", src, dst)
		}
		if id := m.inn.split(src, dst); id != n.ID {
			t.Fatalf("add_conv: the split of %d → %d is node %d, the tracker says %d", src, dst, n.ID, id)
		}
		// Identity weights on the shared channels.
		w := c.Params[n.ID].Weight
		k, in := n.Kernel, w.Shape[1]
		for o := range min(w.Shape[0], in) {
			for i := range in {
				for tap := range k * k {
					want := float32(0)
					if i == o && tap == (k/2)*k+k/2 {
						want = 1
					}
					if got := w.Data[(o*in+i)*k*k+tap]; got != want {
						t.Fatalf("add_conv: weight[%d][%d] tap %d = %v, want %v", o, i, tap, got, want)
					}
				}
			}
		}
	case "add_skip":
		if len(added) != 0 || len(removed) != 0 {
			t.Fatalf("add_skip: added %v removed %v", added, removed)
		}
		grown := 0
		for i := range c.Nodes {
			cn, pn := c.Nodes[i], p.Nodes[i]
			switch {
			case len(cn.Inputs) == len(pn.Inputs)+1 && slices.Equal(cn.Inputs[:len(pn.Inputs)], pn.Inputs):
				grown++
				if len(cn.Inputs) == 2 && cn.Merge != MergeSum && cn.Merge != MergeConcat {
					t.Fatalf("add_skip: node %d has two inputs and merge %q", cn.ID, cn.Merge)
				}
			case !slices.Equal(cn.Inputs, pn.Inputs):
				t.Fatalf("add_skip: node %d inputs %v → %v", cn.ID, pn.Inputs, cn.Inputs)
			}
		}
		if grown != 1 {
			t.Fatalf("add_skip: %d nodes gained an input", grown)
		}
	case "remove_node":
		if len(added) != 0 || len(removed) < 1 || slices.Contains(removed, p.Output) {
			t.Fatalf("remove_node: added %v removed %v (output %d)", added, removed, p.Output)
		}
	case "channels", "kernel", "activation":
		if !slices.Equal(pids, cids) {
			t.Fatalf("%s: nodes %v → %v", name, pids, cids)
		}
		changed := 0
		for i := range c.Nodes {
			cn, pn := c.Nodes[i], p.Nodes[i]
			if !sameSettings(cn, pn) {
				changed++
				ok := false
				switch name {
				case "channels":
					ok = cn.OutChannels != pn.OutChannels || cn.OutFeatures != pn.OutFeatures
				case "kernel":
					ok = cn.Kernel != pn.Kernel && slices.Contains(m.cfg.Kernels, cn.Kernel)
				case "activation":
					ok = cn.Activation != pn.Activation && slices.Contains(m.cfg.Activations, cn.Activation)
				}
				if !ok {
					t.Fatalf("%s changed node %+v to %+v", name, pn, cn)
				}
			}
		}
		if changed != 1 {
			t.Fatalf("%s changed %d nodes", name, changed)
		}
	}
}

// TestChannelsKeepOverlap changes a conv's width and checks the weights:
// rows kept are the parent's, and every consumer keeps the weights of the
// channels that stay and reads new channels with weight 0.
func TestChannelsKeepOverlap(t *testing.T) {
	m := testMutator(3)
	for _, p := range testGenomes(t) {
		c, ok := m.apply(p, changeChannels)
		if !ok {
			continue
		}
		pg, _ := InferShapes(p, testIn, 10)
		cg, _ := InferShapes(c, testIn, 10)
		ps, cs := stepsByID(pg), stepsByID(cg)
		for id, cp := range c.Params {
			pp := p.Params[id]
			if pp == nil {
				t.Fatalf("genome %d node %d: parameters from nowhere", p.ID, id)
			}
			ol, nl := layoutOf(ps[id]), layoutOf(cs[id])
			cm := channelMap(&ol, &nl)
			oldRow, newRow := pp.Weight.Len()/ol.out, cp.Weight.Len()/nl.out
			taps := newRow / max(nl.in.C, 1)
			for row := range min(ol.out, nl.out) {
				for ch, oc := range cm {
					for tap := range taps {
						got := cp.Weight.Data[row*newRow+ch*taps+tap]
						want := float32(0)
						if oc >= 0 {
							want = pp.Weight.Data[row*oldRow+oc*taps+tap]
						}
						if got != want {
							t.Fatalf("genome %d node %d: weight row %d channel %d tap %d = %v, want %v", p.ID, id, row, ch, tap, got, want)
						}
					}
				}
			}
		}
	}
}

func TestChannelMapConcat(t *testing.T) {
	o := layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{5, 7}, chans: []int{2, 3}, in: Shape{C: 5, H: 4, W: 4}}
	tests := []struct {
		name string
		n    layout
		want []int
	}{
		{"first input wider", layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{5, 7}, chans: []int{4, 3}, in: Shape{C: 7, H: 4, W: 4}},
			[]int{0, 1, -1, -1, 2, 3, 4}},
		{"second input narrower", layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{5, 7}, chans: []int{2, 1}, in: Shape{C: 3, H: 4, W: 4}},
			[]int{0, 1, 2}},
		{"a third input", layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{5, 7, 9}, chans: []int{2, 3, 2}, in: Shape{C: 7, H: 4, W: 4}},
			[]int{0, 1, 2, 3, 4, -1, -1}},
		{"first input removed", layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{3, 7}, chans: []int{1, 3}, in: Shape{C: 4, H: 4, W: 4}},
			[]int{-1, 2, 3, 4}},
		{"now summed", layout{op: OpConv2D, out: 4, kernel: 1, srcs: []int{7, 9}, chans: []int{3, 1}, in: Shape{C: 3, H: 4, W: 4}},
			[]int{2, 3, 4}},
	}
	for _, tt := range tests {
		if got := channelMap(&o, &tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	sum := layout{op: OpConv2D, out: 4, kernel: 1, srcs: []int{5}, chans: []int{3}, in: Shape{C: 3, H: 4, W: 4}}
	cat := layout{op: OpConv2D, out: 4, kernel: 1, concat: true, srcs: []int{5, 8}, chans: []int{3, 2}, in: Shape{C: 5, H: 4, W: 4}}
	if got := channelMap(&sum, &cat); !slices.Equal(got, []int{0, 1, 2, -1, -1}) {
		t.Errorf("skip concatenated: %v", got)
	}
}

// TestRemapKernel checks that a kernel change keeps the centred taps.
func TestRemapKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	o := layout{op: OpConv2D, out: 1, kernel: 3, srcs: []int{0}, chans: []int{1}, in: Shape{C: 1, H: 8, W: 8}}
	p := &Params{Weight: &Tensor{Shape: []int{1, 1, 3, 3}, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}}, Bias: &Tensor{Shape: []int{1}, Data: []float32{0.5}}}
	n := o
	n.kernel = 5
	got := remap(r, p, &o, &n, ActReLU)
	want := []float32{0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 7, 8, 9, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(got.Weight.Data, want) || got.Bias.Data[0] != 0.5 {
		t.Errorf("3 → 5: %v bias %v", got.Weight.Data, got.Bias.Data)
	}
	n.kernel = 1
	if got := remap(r, p, &o, &n, ActReLU); !slices.Equal(got.Weight.Data, []float32{5}) {
		t.Errorf("3 → 1: %v", got.Weight.Data)
	}
}

// TestSplitInnovations: the same split in the same generation gets the same
// node id in every genome; in another generation, a new one.
func TestSplitInnovations(t *testing.T) {
	var inn innovations
	inn.next = 10
	a, b := inn.split(3, 4), inn.split(3, 4)
	c := inn.split(0, 3)
	if a != b || a == c || a != 10 || c != 11 {
		t.Fatalf("splits %d %d %d", a, b, c)
	}
	inn.newGeneration()
	if d := inn.split(3, 4); d != 12 {
		t.Fatalf("next generation's split of 3 → 4 is %d, want a new id 12", d)
	}

	// Two minimal genomes (the same topology) that split the same edge, in
	// the same generation, share the new node's id.
	m := testMutator(1)
	var ids [][]int
	for _, g := range testGenomes(t)[:2] {
		gr, _ := InferShapes(g, testIn, 10)
		c := g.Clone(g.ID)
		m.r = rand.New(rand.NewPCG(5, 5)) // the same draws: the same edge
		if !addConv(m, c, gr, stepsByID(gr)) {
			t.Fatal("add_conv found no edge")
		}
		ids = append(ids, nodeIDs(c))
	}
	if !slices.Equal(ids[0], ids[1]) || len(ids[0]) != 3 {
		t.Errorf("the same split gave ids %v and %v", ids[0], ids[1])
	}
}

// TestPerturb changes values, never shapes, and leaves the parent alone.
func TestPerturb(t *testing.T) {
	m := testMutator(2)
	m.cfg.WeightRate = 1
	for _, p := range testGenomes(t) {
		c := p.Clone(p.ID + 100)
		m.perturb(c)
		checkMarkings(t, c)
		for id, cp := range c.Params {
			pp := p.Params[id]
			if !slices.Equal(cp.Weight.Shape, pp.Weight.Shape) || sameTensor(cp.Weight, pp.Weight) || sameTensor(cp.Bias, pp.Bias) {
				t.Fatalf("genome %d node %d: perturbation kept the values or changed the shape", p.ID, id)
			}
		}
	}
	m.cfg.WeightRate = 0
	p := testGenomes(t)[0]
	c := p.Clone(p.ID)
	m.perturb(c)
	if !sameGenome(p, c) {
		t.Error("weight_mutate_rate 0 changed weights")
	}
}

// TestCrossover: children compile, have the fitter parent's topology, and
// each weight of a node both parents lay out alike comes from one of them.
func TestCrossover(t *testing.T) {
	m := testMutator(9)
	m.cfg.PAddConv, m.cfg.PAddSkip, m.cfg.PChannels = 0.5, 0.5, 0.5
	base := testGenomes(t)[:6] // minimal: they share their node ids
	// Grow them apart a little, with shared splits.
	var gs []*Genome
	for i, g := range base {
		c := g.Clone(int64(100 + i))
		for range 3 {
			c = m.mutate(c)
		}
		gs = append(gs, c)
	}
	for i := range gs {
		for j := range gs {
			if i == j {
				continue
			}
			a, b := gs[i], gs[j]
			c := m.crossover(a, b, 999)
			checkMarkings(t, c)
			if c.ID != 999 || c.Output != a.Output || !slices.Equal(nodeIDs(c), nodeIDs(a)) {
				t.Fatalf("child of %d × %d: ids %v, fitter parent %v", a.ID, b.ID, nodeIDs(c), nodeIDs(a))
			}
			for k := range c.Nodes {
				if !slices.Equal(c.Nodes[k].Inputs, a.Nodes[k].Inputs) {
					t.Fatalf("child of %d × %d: node %d inputs %v, fitter parent's %v", a.ID, b.ID, c.Nodes[k].ID, c.Nodes[k].Inputs, a.Nodes[k].Inputs)
				}
			}
			ga, _ := InferShapes(a, testIn, 10)
			gb, _ := InferShapes(b, testIn, 10)
			la, lb := layouts(ga), layouts(gb)
			for id, cp := range c.Params {
				pa, pb := a.Params[id], b.Params[id]
				x, y := la[id], lb[id]
				if pb == nil || !x.equal(&y) {
					continue
				}
				fromA, fromB := 0, 0
				for x, v := range cp.Weight.Data {
					switch v {
					case pa.Weight.Data[x]:
						if v != pb.Weight.Data[x] {
							fromA++
						}
					case pb.Weight.Data[x]:
						fromB++
					default:
						t.Fatalf("child of %d × %d node %d: weight %d is %v, neither parent's (%v, %v)", a.ID, b.ID, id, x, v, pa.Weight.Data[x], pb.Weight.Data[x])
					}
				}
				if fromA+fromB >= 64 && (fromA == 0 || fromB == 0) {
					t.Errorf("child of %d × %d node %d: %d weights from a, %d from b", a.ID, b.ID, id, fromA, fromB)
				}
			}
		}
	}
}
