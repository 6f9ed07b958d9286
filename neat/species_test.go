package neat

import (
	"math"
	"slices"
	"testing"
)

// chain grows g by n convolutions on the edge into its output.
func chain(t *testing.T, m *mutator, g *Genome, n int) *Genome {
	t.Helper()
	for range n {
		gr, err := InferShapes(g, testIn, 10)
		if err != nil {
			t.Fatal(err)
		}
		c := g.Clone(g.ID)
		out := c.Nodes[nodeAt(c, c.Output)]
		src := out.Inputs[0]
		id := m.inn.split(src, c.Output)
		c.Nodes[nodeAt(c, c.Output)].Inputs[0] = id
		insertNode(c, Node{ID: id, Op: OpConv2D, Inputs: []int{src}, OutChannels: 4, Kernel: 3, Padding: PaddingDefault})
		if err := fitParams(m.r, c, testIn, 10, layouts(gr)); err != nil {
			t.Fatal(err)
		}
		g = c
	}
	checkMarkings(t, g)
	return g
}

func TestDistance(t *testing.T) {
	m := testMutator(4)
	gs := testGenomes(t)
	a, b := gs[0], gs[1] // minimal: same nodes and edges, other weights
	d := func(x, y *Genome, c1, c3 float64) float64 { return Distance(x, y, testIn, 10, c1, c3) }
	if got := d(a, a, 1, 1); got != 0 {
		t.Errorf("δ(a, a) = %v", got)
	}
	if d(a, b, 1, 0) != 0 || d(a, b, 0, 1) <= 0 {
		t.Errorf("two minimal genomes: topology term %v (want 0), weight term %v (want > 0)", d(a, b, 1, 0), d(a, b, 0, 1))
	}
	if d(a, b, 1, 1) != d(b, a, 1, 1) {
		t.Error("δ is not symmetric")
	}
	// One conv on the pool → dense edge: a new node and two new edges, one
	// edge gone: 4 differing genes of 6 (pool, dense, 0→pool, pool→conv,
	// conv→dense, conv) in the larger genome.
	c := chain(t, m, a, 1)
	if got := d(a, c, 1, 0); math.Abs(got-4.0/6) > 1e-12 {
		t.Errorf("one split: topology term %v, want 4/6", got)
	}
	// Weight term of a genome against its own perturbed copy: the noise
	// is one He scale, so the dense node's weights differ by sqrt(2/π) ≈
	// 0.8 He scales on average; the pool has none: 0.4 over the two nodes.
	p := a.Clone(a.ID)
	m.cfg.WeightRate, m.cfg.WeightPower = 1, 1
	m.perturb(p)
	if got := d(a, p, 0, 1); got < 0.3 || got > 0.5 {
		t.Errorf("perturbed copy: weight term %v, want ≈ 0.4", got)
	}
	// Settings that differ count 1 each.
	q := c.Clone(c.ID)
	for i := range q.Nodes {
		if q.Nodes[i].Op == OpConv2D {
			q.Nodes[i].Activation = ActTanh
		}
	}
	if got := d(c, q, 0, 1); math.Abs(got-1.0/3) > 1e-12 { // 3 matching nodes, 1 setting differs
		t.Errorf("activation changed: weight term %v, want 1/3", got)
	}
}

// TestSpeciation puts two groups of unlike genomes into two species, shares
// the seats by fitness, and drops a stagnant species but not the best.
func TestSpeciation(t *testing.T) {
	cfg := DefaultEvolveConfig()
	cfg.PopulationSize, cfg.SpeciesTarget, cfg.Stagnation = 12, 0, 5
	e, err := NewEvolution(testIn, 10, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Half of the population grows a chain of three convolutions.
	for i := 6; i < 12; i++ {
		e.pop[i] = chain(t, e.mut, e.pop[i], 3)
	}
	e.threshold = 0.5 // within a group the topology term is 0, across it is 1
	e.cfg.CompatWeight = 0
	e.speciate()
	if len(e.species) != 2 {
		t.Fatalf("%d species, want 2", len(e.species))
	}
	for k, s := range e.species {
		want := []int{0, 1, 2, 3, 4, 5}
		if k == 1 {
			want = []int{6, 7, 8, 9, 10, 11}
		}
		if !slices.Equal(s.members, want) {
			t.Errorf("species %d members %v, want %v", s.id, s.members, want)
		}
	}

	// Fitness sharing: the chains score 0.6, the minimal genomes 0.2; scaled
	// to [0, 1] over the population, the minimal species has nothing to
	// share and gets no seat.
	for i := range e.fitness {
		e.fitness[i] = 0.2
		if i >= 6 {
			e.fitness[i] = 0.6
		}
		e.known[i] = true
	}
	e.cull()
	if seats := e.offspring(); !slices.Equal(seats, []int{0, 12}) {
		t.Errorf("seats %v, want [0 12]", seats)
	}
	// Unequal but overlapping fitness: seats in proportion to the mean
	// scaled fitness, summing to the population.
	for i := range e.fitness {
		e.fitness[i] = 0.1 * float64(i%6+1) // 0.1 … 0.6 in each species
		if i >= 6 {
			e.fitness[i] += 0.05
		}
	}
	e.cull()
	seats := e.offspring()
	if seats[0]+seats[1] != 12 || seats[1] <= seats[0] || seats[0] < 4 {
		t.Errorf("seats %v, want 12 in all, the better species more", seats)
	}
	// NaN genomes count as the worst.
	e.fitness[7] = math.NaN()
	e.cull()
	if e.species[1].members[len(e.species[1].members)-1] != 7 {
		t.Errorf("NaN genome not sorted last: %v", e.species[1].members)
	}

	// Stagnation: species 1 (the minimal genomes, the worse) has not
	// improved for 5 generations and goes; the other stays though it has
	// not improved either, being the best.
	e.gen = 10
	for _, s := range e.species {
		s.lastImproved = 4
		s.best = math.Inf(1) // nothing improves on it
	}
	e.cull()
	if len(e.species) != 1 || e.species[0].members[0] != 11 {
		t.Fatalf("after stagnation: %d species, first %v", len(e.species), e.species[0].members)
	}
	if seats := e.offspring(); !slices.Equal(seats, []int{12}) {
		t.Errorf("seats %v, want [12]", seats)
	}
}
