package neat

import (
	"math"
	"slices"
)

// Distance is NEAT's compatibility distance between two genomes of the
// same input shape and class count:
//
//	δ = cDisjoint · (D + E) / N + cWeight · W̄
//
// Genes are nodes, by id (their historical marking), and edges, by the ids
// of their ends. D + E counts the genes one genome has and the other has
// not (disjoint and excess genes alike), N the genes of the larger genome.
// W̄ is the mean, over the nodes both have, of the mean absolute
// difference of their weights over the part of the tensors that overlaps
// (0 for nodes without weights), in units of the He scale sqrt(2/fan-in) so
// that wide and narrow layers count alike, plus 1 for each setting (op,
// width, kernel, activation) that differs. A genome that does not compile
// is at distance +Inf.
func Distance(a, b *Genome, in Input, numClasses int, cDisjoint, cWeight float64) float64 {
	ga, errA := InferShapes(a, in, numClasses)
	gb, errB := InferShapes(b, in, numClasses)
	if errA != nil || errB != nil {
		return math.Inf(1)
	}
	return distance(a, b, stepsByID(ga), stepsByID(gb), cDisjoint, cWeight)
}

func distance(a, b *Genome, sa, sb map[int]*Step, cDisjoint, cWeight float64) float64 {
	genes := func(g *Genome) map[[2]int]bool {
		m := make(map[[2]int]bool, 2*len(g.Nodes))
		for i := range g.Nodes {
			n := &g.Nodes[i]
			m[[2]int{-1, n.ID}] = true // the node
			for _, s := range n.Inputs {
				m[[2]int{s, n.ID}] = true // an edge
			}
		}
		return m
	}
	ka, kb := genes(a), genes(b)
	diff := 0
	for k := range ka {
		if !kb[k] {
			diff++
		}
	}
	for k := range kb {
		if !ka[k] {
			diff++
		}
	}
	n := max(len(ka), len(kb), 1)

	var wsum float64
	matched := 0
	for i := range a.Nodes {
		id := a.Nodes[i].ID
		x, okA := sa[id]
		y, okB := sb[id]
		if !okA || !okB {
			continue
		}
		matched++
		nx, ny := &x.Node, &y.Node
		if nx.Op != ny.Op {
			wsum++
			continue
		}
		for _, d := range []bool{nx.OutChannels != ny.OutChannels, nx.OutFeatures != ny.OutFeatures,
			nx.Kernel != ny.Kernel, nx.Activation != ny.Activation} {
			if d {
				wsum++
			}
		}
		pa, pb := a.Params[id], b.Params[id]
		if pa != nil && pb != nil && pa.Weight != nil && pb.Weight != nil {
			wsum += overlapDiff(pa.Weight, pb.Weight) / heScale(pa.Weight.Shape)
		}
	}
	w := 0.0
	if matched > 0 {
		w = wsum / float64(matched)
	}
	return cDisjoint*float64(diff)/float64(n) + cWeight*w
}

// overlapDiff is the mean absolute difference of two tensors of the same
// rank over the index box both shapes hold (0 when none).
func overlapDiff(a, b *Tensor) float64 {
	if len(a.Shape) != len(b.Shape) {
		return 0
	}
	box := make([]int, len(a.Shape))
	total := 1
	for i := range box {
		box[i] = min(a.Shape[i], b.Shape[i])
		total *= box[i]
	}
	if total == 0 {
		return 0
	}
	idx := make([]int, len(box))
	var sum float64
	for range total {
		oa, ob := 0, 0
		for i := range idx {
			oa = oa*a.Shape[i] + idx[i]
			ob = ob*b.Shape[i] + idx[i]
		}
		sum += math.Abs(float64(a.Data[oa]) - float64(b.Data[ob]))
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < box[i] {
				break
			}
			idx[i] = 0
		}
	}
	return sum / float64(total)
}

// species is a set of genomes within the compatibility threshold of its
// representative, a member of the generation before.
type species struct {
	id           int
	created      int // generation
	lastImproved int // generation its best fitness last rose
	best         float64
	rep          *Genome
	members      []int // population indexes, this generation
}

// speciate puts each genome of pop, in order, into the first species (by
// id) whose representative is within threshold, or into a new species it
// represents. Species left without members are dropped. Genomes that do not
// compile join no species.
func (e *Evolution) speciate() {
	steps := make([]map[int]*Step, len(e.pop))
	for i, g := range e.pop {
		if gr, err := InferShapes(g, e.in, e.nc); err == nil {
			steps[i] = stepsByID(gr)
		}
	}
	repSteps := make([]map[int]*Step, len(e.species))
	for k, s := range e.species {
		s.members = s.members[:0]
		if gr, err := InferShapes(s.rep, e.in, e.nc); err == nil {
			repSteps[k] = stepsByID(gr)
		}
	}
	for i, g := range e.pop {
		if steps[i] == nil {
			continue
		}
		placed := false
		for k, s := range e.species {
			if repSteps[k] == nil {
				continue
			}
			if distance(g, s.rep, steps[i], repSteps[k], e.cfg.CompatDisjoint, e.cfg.CompatWeight) < e.threshold {
				s.members = append(s.members, i)
				placed = true
				break
			}
		}
		if !placed {
			e.nextSpecies++
			e.species = append(e.species, &species{id: e.nextSpecies, created: e.gen, lastImproved: e.gen,
				best: math.Inf(-1), rep: g, members: []int{i}})
			repSteps = append(repSteps, steps[i])
		}
	}
	e.species = slices.DeleteFunc(e.species, func(s *species) bool { return len(s.members) == 0 })
	if t := e.cfg.SpeciesTarget; t > 0 {
		switch n := len(e.species); {
		case n < t:
			e.threshold *= 0.95
		case n > t:
			e.threshold *= 1.05
		}
	}
}

// better orders population indexes by fitness, highest first, NaN last,
// ties by position.
func (e *Evolution) better(i, j int) int {
	fi, fj := e.fitness[i], e.fitness[j]
	switch {
	case math.IsNaN(fi) && math.IsNaN(fj), fi == fj:
		return i - j
	case math.IsNaN(fi):
		return 1
	case math.IsNaN(fj):
		return -1
	case fi > fj:
		return -1
	}
	return 1
}

// cull updates each species' best fitness and drops the species that have
// not improved for Stagnation generations, except the SpeciesElitism best
// ones. Members are left sorted best first.
func (e *Evolution) cull() {
	for _, s := range e.species {
		slices.SortFunc(s.members, e.better)
		if f := e.fitness[s.members[0]]; f > s.best {
			s.best, s.lastImproved = f, e.gen
		}
	}
	byBest := slices.Clone(e.species)
	slices.SortStableFunc(byBest, func(a, b *species) int { return e.better(a.members[0], b.members[0]) })
	keep := map[int]bool{}
	for k, s := range byBest {
		if k < e.cfg.SpeciesElitism || e.gen-s.lastImproved < e.cfg.Stagnation {
			keep[s.id] = true
		}
	}
	e.species = slices.DeleteFunc(e.species, func(s *species) bool { return !keep[s.id] })
}

// offspring shares the population among the species by fitness sharing:
// each genome's fitness, scaled to [0, 1] over the population (NaN as 0),
// is divided by its species' size, and a species gets seats in proportion
// to the sum over its members (largest remainders, ties by species order).
// The species of the best genome gets at least one seat.
func (e *Evolution) offspring() []int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range e.fitness {
		if !math.IsNaN(f) {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	share := make([]float64, len(e.species))
	var total float64
	for k, s := range e.species {
		for _, i := range s.members {
			f := e.fitness[i]
			switch {
			case math.IsNaN(f):
			case hi > lo:
				share[k] += (f - lo) / (hi - lo)
			default:
				share[k]++
			}
		}
		share[k] /= float64(len(s.members))
		total += share[k]
	}
	n := e.cfg.PopulationSize
	seats := make([]int, len(e.species))
	if total == 0 {
		for k := range share {
			share[k] = 1
		}
		total = float64(len(share))
	}
	rem := make([]float64, len(share))
	given := 0
	for k := range share {
		q := share[k] / total * float64(n)
		seats[k] = int(q)
		rem[k] = q - float64(seats[k])
		given += seats[k]
	}
	order := make([]int, len(share))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for k := 0; given < n; k = (k + 1) % len(order) {
		seats[order[k]]++
		given++
	}
	// The best genome's species (the first, after cull's sort, whose best
	// is the population's) keeps a seat for it.
	champ := e.champion()
	for k, s := range e.species {
		if s.members[0] == champ && seats[k] == 0 {
			most := 0
			for j := range seats {
				if seats[j] > seats[most] {
					most = j
				}
			}
			seats[most]--
			seats[k]++
		}
	}
	return seats
}

// champion is the population index of the best genome (the first, on ties).
func (e *Evolution) champion() int {
	best := 0
	for i := range e.pop {
		if e.better(i, best) < 0 {
			best = i
		}
	}
	return best
}
