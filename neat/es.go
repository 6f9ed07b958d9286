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
// instead: each species keeps a centre genome, surrounds it with mirrored
// samples (centre ± σε, weights only, the topology unchanged), and after
// they are scored moves the centre to the rank-weighted sum of its
// samples, as SNES moves its mean (Schaul, Glasmachers and Schmidhuber
// 2011): centre' = centre + Σ uᵢ (sampleᵢ − centre), with the utilities uᵢ
// of the samples' fitness ranks, summing to zero. The new centre is scored
// with the next generation, so it competes with the species' elites and
// its structural children as any genome does. Which genome a sample was
// drawn around is the one piece of state this adds (Evolution.esParent);
// checkpoints keep it.

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

// esCentre is the centre species s samples around next: the member that
// parented scored samples this generation, moved by their ranked sum (a
// new genome, moved true); else the species' best member (a fresh start,
// not moved).
func (e *Evolution) esCentre(s *species) (g *Genome, moved bool) {
	for _, i := range s.members {
		fam := e.esFamily(e.pop[i].ID)
		if len(fam) >= 2 {
			id := e.nextGenome
			e.nextGenome++
			return e.esStep(e.pop[i], fam, id), true
		}
	}
	return e.pop[s.members[0]], false
}

// esBreed fills n of species s's seats the evolution strategy's way: the
// moved centre (when it moved) and samples around it, appended to pop and
// fit; next records the samples' centre.
func (e *Evolution) esBreed(s *species, n int, pop []*Genome, fit []float64, next map[int64]int64) ([]*Genome, []float64) {
	centre, moved := e.esCentre(s)
	if moved {
		pop, fit, n = append(pop, centre), append(fit, math.NaN()), n-1
	}
	pop = e.esSamples(centre, n, pop, next)
	for len(fit) < len(pop) {
		fit = append(fit, math.NaN())
	}
	return pop, fit
}

// esStep is centre + Σ uᵢ (sampleᵢ − centre) over the family's samples,
// ranked by fitness, as a new genome id.
func (e *Evolution) esStep(centre *Genome, fam []int, id int64) *Genome {
	slices.SortStableFunc(fam, func(a, b int) int { return e.better(a, b) })
	u := esUtilities(len(fam))
	c := centre.Clone(id)
	for nid, p := range c.Params {
		for ti, t := range []*Tensor{p.Weight, p.Bias} {
			if t == nil {
				continue
			}
			base := t.Data
			sum := make([]float64, len(base))
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
					sum[j] += u[k] * float64(v-base[j])
				}
			}
			for j := range base {
				base[j] += float32(sum[j])
			}
		}
	}
	return c
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

// esSamples appends n mirrored samples around centre (weights perturbed
// by ±σε, σ = WeightPower × the He scale of each tensor's node, the power
// spread per pair as perturb spreads it per child; the last one
// unmirrored when n is odd), recording each sample's centre in next.
func (e *Evolution) esSamples(centre *Genome, n int, pop []*Genome, next map[int64]int64) []*Genome {
	for k := 0; k < n; k += 2 {
		a := centre.Clone(e.nextGenome)
		e.nextGenome++
		var b *Genome
		if k+1 < n {
			b = centre.Clone(e.nextGenome)
			e.nextGenome++
		}
		power := e.cfg.WeightPower
		if e.cfg.WeightPowerSpread > 0 {
			power *= math.Exp(e.cfg.WeightPowerSpread * e.r.NormFloat64())
		}
		for _, n := range a.Nodes {
			p := a.Params[n.ID]
			if p == nil || p.Weight == nil {
				continue
			}
			std := power * heScale(p.Weight.Shape)
			for ti, t := range []*Tensor{p.Weight, p.Bias} {
				if t == nil {
					continue
				}
				var mirror []float32
				if b != nil {
					mirror = []*Tensor{b.Params[n.ID].Weight, b.Params[n.ID].Bias}[ti].Data
				}
				for j := range t.Data {
					d := float32(e.r.NormFloat64() * std)
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
