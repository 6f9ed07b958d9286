package neat

import (
	"math"
	"slices"
)

// Evolution strategy on each species' weights (EvolveConfig.ESShare).
//
// Mutation and selection alone tune a few thousand weights slowly: most
// random steps in that many dimensions are worse, and selection keeps only
// the one that was luckiest. An evolution strategy uses every sample
// instead: each species keeps a centre genome μ, surrounds it with
// mirrored samples μ ± σ⊙ε (weights only, the topology unchanged), and
// after they are scored moves it as separable NES (SNES; Schaul,
// Glasmachers and Schmidhuber 2011) does, with the utilities uₖ of the
// samples' fitness ranks (summing to zero):
//
//	step = Σ uₖ (xₖ − μ)                       (the mean's natural gradient, times σ)
//	v'   = ESMomentum × v + a(t) × ESRate × step  (v = 0 without momentum)
//	μ'   = μ + v'
//	σ'   = σ ⊙ exp(η_σ/2 × Σ uₖ (εₖ² − 1))       (per parameter)
//
// where the samples were xₖ = μ ± s(t) σ⊙εₖ, and a(t) and s(t) are 1, or
// with ESAnneal > 0 fall along half a cosine to ESRateFinal and
// ESSigmaFinal over the first ESAnneal generations (Anneal).
//
// with η_σ = ESSigmaRate × (3 + ln d)/(5 √d) for d σ's, SNES's rate. σ
// starts at WeightPower × the He scale of each tensor's node and, with
// ESSigmaRate > 0, grows where the better samples stepped further than σ
// and shrinks where they stepped less: the search takes big steps while
// they pay and refines when they stop paying, without a schedule. With
// ESSigmaPerTensor (the default) the per-parameter updates of a tensor
// are averaged into one, and d counts tensors: with a few dozen samples
// for thousands of weights, one weight's update is mostly noise (σ per
// parameter drifts at random and the search is worse than with σ fixed),
// while a tensor's mean carries the signal. On MNIST σ then shrinks
// slowly (0.6 to about 0.5 He units over 1500 generations), which acts as
// the step-size decay a noisy gradient estimate needs to converge.
// The new centre is scored with the next generation, so it competes with
// the species' elites and its structural children as any genome does.
//
// What this adds to a run's state is which centre each sample was drawn
// around (Evolution.esParent) and each centre's σ and velocity
// (Evolution.esState); checkpoints keep both.

// esTensors are per-parameter values of a centre genome, by node id: [0]
// for the node's weight, [1] for its bias (nil when the node has none).
type esTensors map[int][2][]float32

// esState is what the evolution strategy keeps about a centre between
// generations.
type esState struct {
	// Sigma is each parameter's sampling standard deviation.
	Sigma esTensors `json:"sigma"`
	// Velocity is the last move of the centre (with ESMomentum > 0).
	Velocity esTensors `json:"velocity,omitempty"`
}

// esFamily is a centre's samples among the current generation's genomes,
// by population index.
func (e *Evolution) esFamily(centre int64) []int {
	var fam []int
	for i, g := range e.pop {
		if p, ok := e.esParent[g.ID]; ok && p == centre && !math.IsNaN(e.fitness[i]) {
			fam = append(fam, i)
		}
	}
	return fam
}

// esCentre is the centre species s samples around next, with its state:
// the member that parented scored samples this generation, moved by their
// ranked sum (a new genome, moved true); else the species' best member
// with a fresh state (not moved).
func (e *Evolution) esCentre(s *species) (g *Genome, st *esState, moved bool) {
	for _, i := range s.members {
		fam := e.esFamily(e.pop[i].ID)
		if len(fam) >= 2 {
			id := e.nextGenome
			e.nextGenome++
			g, st := e.esStep(e.pop[i], e.esSigma(e.pop[i]), fam, id)
			return g, st, true
		}
	}
	g = e.pop[s.members[0]]
	return g, &esState{Sigma: e.freshSigma(g)}, false
}

// esSigma is the state of centre g: the one kept for it, or a fresh one.
func (e *Evolution) esSigma(g *Genome) *esState {
	if st, ok := e.esState[g.ID]; ok && st.fits(g) {
		return st
	}
	return &esState{Sigma: e.freshSigma(g)}
}

// fits reports whether st has one value per parameter of g.
func (st *esState) fits(g *Genome) bool {
	for nid, p := range g.Params {
		s := st.Sigma[nid]
		for ti, t := range []*Tensor{p.Weight, p.Bias} {
			if t != nil && len(s[ti]) != len(t.Data) {
				return false
			}
		}
	}
	return true
}

// freshSigma is σ = WeightPower × the He scale of each node's weights,
// for every parameter of g.
func (e *Evolution) freshSigma(g *Genome) esTensors {
	sig := esTensors{}
	for nid, p := range g.Params {
		if p == nil || p.Weight == nil {
			continue
		}
		std := float32(e.cfg.WeightPower * heScale(p.Weight.Shape))
		var pair [2][]float32
		for ti, t := range []*Tensor{p.Weight, p.Bias} {
			if t == nil {
				continue
			}
			pair[ti] = make([]float32, len(t.Data))
			for j := range pair[ti] {
				pair[ti][j] = std
			}
		}
		sig[nid] = pair
	}
	return sig
}

// esBreed fills n of species s's seats the evolution strategy's way: the
// moved centre (when it moved) and samples around it, appended to pop and
// fit; next records the samples' centre, states the centre's state.
func (e *Evolution) esBreed(s *species, n int, pop []*Genome, fit []float64, next map[int64]int64, states map[int64]*esState) ([]*Genome, []float64) {
	centre, st, moved := e.esCentre(s)
	if moved {
		pop, fit, n = append(pop, centre), append(fit, math.NaN()), n-1
	}
	states[centre.ID] = st
	pop = e.esSamples(centre, st.Sigma, n, pop, next)
	for len(fit) < len(pop) {
		fit = append(fit, math.NaN())
	}
	return pop, fit
}

// esStep moves centre (with state st) by the family's samples, ranked by
// fitness, as SNES does (see the top of this file): a new genome id and
// its state. st is not changed.
func (e *Evolution) esStep(centre *Genome, st *esState, fam []int, id int64) (*Genome, *esState) {
	slices.SortStableFunc(fam, func(a, b int) int { return e.better(a, b) })
	u := esUtilities(len(fam))
	etaSigma := e.cfg.ESSigmaRate * snesSigmaRate(centre, e.cfg.ESSigmaScope == ESSigmaPerTensor)
	c := centre.Clone(id)
	next := &esState{Sigma: esTensors{}}
	if e.cfg.ESMomentum > 0 {
		next.Velocity = esTensors{}
	}
	for nid, p := range c.Params {
		sig, ok := st.Sigma[nid]
		if !ok {
			continue
		}
		var nsig, nvel [2][]float32
		for ti, t := range []*Tensor{p.Weight, p.Bias} {
			if t == nil {
				continue
			}
			nsig[ti], nvel[ti] = e.esMove(t.Data, sig[ti], st.Velocity[nid][ti], fam, u, nid, ti, etaSigma)
		}
		next.Sigma[nid] = nsig
		if next.Velocity != nil {
			next.Velocity[nid] = nvel
		}
	}
	return c, next
}

// esMove moves base (one tensor of the new centre, a copy of the old) in
// place and returns the tensor's new σ and velocity (nil without
// momentum); vel is the old velocity (nil: none).
func (e *Evolution) esMove(base, sig, vel []float32, fam []int, u []float64, nid, ti int, etaSigma float64) (nsig, nvel []float32) {
	step := make([]float64, len(base))
	gsig := make([]float64, len(base))
	drawn := e.sigmaScale(e.gen - 1) // the samples were drawn a generation ago
	for k, i := range fam {
		q := e.pop[i].Params[nid]
		if q == nil {
			continue
		}
		st := []*Tensor{q.Weight, q.Bias}[ti]
		if st == nil || len(st.Data) != len(base) {
			continue
		}
		for j, v := range st.Data {
			d := float64(v - base[j])
			step[j] += u[k] * d
			if s := float64(sig[j]) * drawn; s > 0 {
				eps := d / s
				gsig[j] += u[k] * (eps*eps - 1)
			}
		}
	}
	nsig = make([]float32, len(base))
	if e.cfg.ESMomentum > 0 {
		nvel = make([]float32, len(base))
	}
	if e.cfg.ESSigmaScope == ESSigmaPerTensor {
		var mean float64
		for _, g := range gsig {
			mean += g
		}
		mean /= float64(len(gsig))
		for j := range gsig {
			gsig[j] = mean
		}
	}
	rate := e.esRate()
	for j := range base {
		mv := rate * step[j]
		if nvel != nil {
			if vel != nil {
				mv += e.cfg.ESMomentum * float64(vel[j])
			}
			nvel[j] = float32(mv)
		}
		base[j] += float32(mv)
		nsig[j] = float32(float64(sig[j]) * math.Exp(etaSigma/2*gsig[j]))
	}
	return nsig, nvel
}

// Anneal is the share of its start a schedule is at in generation gen: 1
// without a schedule (over ≤ 0), falling along half a cosine to final at
// generation over and staying there. The strategy's a(t) and s(t) are
// Anneal(gen, ESAnneal, ESRateFinal) and Anneal(gen, ESAnneal,
// ESSigmaFinal); a caller can hang its own schedules on the same curve
// (config.Evolve.ValBatchAt does).
func Anneal(gen, over int, final float64) float64 {
	if over <= 0 {
		return 1
	}
	t := min(float64(max(gen, 0))/float64(over), 1)
	return final + (1-final)*(1+math.Cos(math.Pi*t))/2
}

// esRate is the centre's learning rate in this generation's step:
// ESRate × a(t).
func (e *Evolution) esRate() float64 {
	return e.cfg.ESRate * Anneal(e.gen, e.cfg.ESAnneal, e.cfg.ESRateFinal)
}

// sigmaScale is s(gen): the share of σ the samples drawn in generation
// gen are drawn with.
func (e *Evolution) sigmaScale(gen int) float64 {
	return Anneal(gen, e.cfg.ESAnneal, e.cfg.ESSigmaFinal)
}

// snesSigmaRate is SNES's default learning rate of σ for d dimensions,
// (3 + ln d)/(5 √d): d is g's parameters, or its tensors when perTensor
// (each tensor's σ is then one dimension).
func snesSigmaRate(g *Genome, perTensor bool) float64 {
	d := 0
	for _, p := range g.Params {
		for _, t := range []*Tensor{p.Weight, p.Bias} {
			switch {
			case t == nil:
			case perTensor:
				d++
			default:
				d += len(t.Data)
			}
		}
	}
	if d == 0 {
		return 0
	}
	return (3 + math.Log(float64(d))) / (5 * math.Sqrt(float64(d)))
}

// esUtilities are SNES's rank utilities for n samples, best first:
// max(0, log(n/2+1) − log(k)) normalised to sum 1, less 1/n.
func esUtilities(n int) []float64 {
	u := make([]float64, n)
	var sum float64
	for k := range u {
		u[k] = max(0, math.Log(float64(n)/2+1)-math.Log(float64(k+1)))
		sum += u[k]
	}
	for k := range u {
		u[k] = u[k]/sum - 1/float64(n)
	}
	return u
}

// esSamples appends n mirrored samples around centre (each parameter
// perturbed by ±σε, σ from sig, the spread of WeightPowerSpread drawn per
// pair as perturb draws it per child; the last one unmirrored when n is
// odd), recording each sample's centre in next.
func (e *Evolution) esSamples(centre *Genome, sig esTensors, n int, pop []*Genome, next map[int64]int64) []*Genome {
	for k := 0; k < n; k += 2 {
		a := centre.Clone(e.nextGenome)
		e.nextGenome++
		var b *Genome
		if k+1 < n {
			b = centre.Clone(e.nextGenome)
			e.nextGenome++
		}
		spread := e.sigmaScale(e.gen)
		if e.cfg.WeightPowerSpread > 0 {
			spread *= math.Exp(e.cfg.WeightPowerSpread * e.r.NormFloat64())
		}
		for _, n := range a.Nodes {
			p := a.Params[n.ID]
			s, ok := sig[n.ID]
			if p == nil || p.Weight == nil || !ok {
				continue
			}
			for ti, t := range []*Tensor{p.Weight, p.Bias} {
				if t == nil {
					continue
				}
				var mirror []float32
				if b != nil {
					mirror = []*Tensor{b.Params[n.ID].Weight, b.Params[n.ID].Bias}[ti].Data
				}
				for j := range t.Data {
					d := float32(e.r.NormFloat64() * spread * float64(s[ti][j]))
					t.Data[j] += d
					if mirror != nil {
						mirror[j] -= d
					}
				}
			}
		}
		next[a.ID] = centre.ID
		pop = append(pop, a)
		if b != nil {
			next[b.ID] = centre.ID
			pop = append(pop, b)
		}
	}
	return pop
}

// esSigmaMean is the mean over the centres' parameters of σ in units of
// each node's He scale, times the schedule's s(t) (NaN without centres):
// the step size the generation's samples were drawn with, as
// weight_mutate_power states it.
func (e *Evolution) esSigmaMean() float64 {
	var sum float64
	n := 0
	seen := map[int64]bool{}
	for _, g := range e.pop {
		id := g.ID
		if _, ok := e.esState[id]; !ok {
			id = e.esParent[g.ID]
		}
		st, ok := e.esState[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		for _, nd := range g.Nodes { // in order: the sum is the same every run
			p, pair := g.Params[nd.ID], st.Sigma[nd.ID]
			if p == nil || p.Weight == nil {
				continue
			}
			he := heScale(p.Weight.Shape)
			for _, s := range pair {
				for _, v := range s {
					sum += float64(v) / he
					n++
				}
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n) * e.sigmaScale(e.gen-1)
}

// Centres are the genomes of the current generation that the evolution
// strategy draws its samples around, in population order (none without
// ESShare). A centre is the strategy's estimate of where its samples are
// best on average: on a noisy, sampled fitness it is often a better pick
// than the sample that was luckiest on one draw. The genomes are the
// Evolution's: do not change them.
func (e *Evolution) Centres() []*Genome {
	var cs []*Genome
	for _, g := range e.pop {
		if _, ok := e.esState[g.ID]; ok {
			cs = append(cs, g)
		}
	}
	return cs
}
