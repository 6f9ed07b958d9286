package neat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// Evaluate scores the genomes of pop and returns one fitness per genome,
// in order; higher is better. NaN (or ±Inf) marks a genome that could not
// be scored: it ranks below every scored genome and does not parent
// children. An error stops the generation and leaves the Evolution as it
// was, so Step can be called again (or the run resumed from a checkpoint).
type Evaluate func(ctx context.Context, pop *Population) ([]float64, error)

// GenStats sums up one evaluated generation.
type GenStats struct {
	Generation int
	// Best is the highest fitness of the generation, Mean the mean over
	// the genomes that were scored (NaN when none was).
	Best, Mean float64
	// BestGenome is the id of the genome with fitness Best, and
	// BestParams, BestFLOPs and BestNodes its size.
	BestGenome int64
	BestParams int64
	BestFLOPs  int64
	BestNodes  int
	// Evaluated counts the genomes handed to Evaluate (the others were
	// elites whose fitness was known), Failed those it gave NaN.
	Evaluated, Failed int
	// Species is the number of species after speciation and stagnation,
	// Threshold the compatibility threshold used.
	Species   int
	Threshold float64
	// ESSigma is the evolution strategy's mean step size σ over its
	// centres' parameters, in units of each node's He scale, that the
	// generation's samples were drawn with (NaN without samples).
	ESSigma float64
	// ESRate is the learning rate of the strategy's centre in this
	// generation's step, ESRate × its schedule's share (EvolveConfig.ESAnneal;
	// NaN without samples).
	ESRate float64
}

// Evolution is a NEAT run over CNN genomes. Each Step evaluates the
// current generation, speciates it, and breeds the next one: elites carried
// over unchanged, children by crossover within a species and by mutation.
// The whole run follows one seeded random stream, drawn in a fixed order,
// so the same config and seed give the same genomes, fitness for fitness,
// and a run resumed from a checkpoint continues exactly as if it had never
// stopped.
//
// An Evolution is not safe for concurrent use.
type Evolution struct {
	cfg EvolveConfig
	in  Input
	nc  int

	src *rand.PCG
	r   *rand.Rand
	inn innovations

	gen         int
	nextGenome  int64
	nextSpecies int
	threshold   float64

	pop     []*Genome // never changed once made: elites are shared, children are new
	fitness []float64
	known   []bool // fitness known (carried-over elites) or evaluated
	species []*species

	best    *Genome
	bestFit float64
	bestGen int
	history []GenStats
	// histDir and histSaved: the checkpoint folder whose history file
	// holds history[:histSaved] (SaveCheckpoint appends the rest).
	// histLost: a Snapshot's Write failed, so the file's end is unknown
	// and the next checkpoint rewrites it whole (set by Write, which may
	// run on another goroutine).
	histDir   string
	histSaved int
	histLost  atomic.Bool
	mut       *mutator
	// esParent maps each evolution-strategy sample of the current
	// generation to the centre it was drawn around (see es.go).
	esParent map[int64]int64
	// esState is the σ and velocity of each centre the current
	// generation's samples were drawn around, by its genome id.
	esState map[int64]*esState
}

// NewEvolution starts a run for images of shape in and numClasses classes:
// generation 0, drawn as cfg.Init says, not yet evaluated.
func NewEvolution(in Input, numClasses int, cfg EvolveConfig) (*Evolution, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("neat: evolve config: %w", err)
	}
	if numClasses < 1 || in.Channels < 1 || in.Height < 1 || in.Width < 1 {
		return nil, fmt.Errorf("neat: evolve: input %d×%d×%d, %d classes: want all ≥ 1", in.Channels, in.Height, in.Width, numClasses)
	}
	cfg = cloneConfig(cfg)
	e := &Evolution{cfg: cfg, in: in, nc: numClasses, threshold: cfg.CompatThreshold, bestFit: math.Inf(-1), esParent: map[int64]int64{}, esState: map[int64]*esState{}}
	e.src = rand.NewPCG(uint64(cfg.Seed), 0x6e656174) // "neat"
	e.setup()
	e.inn.next = 1
	var err error
	switch cfg.Init {
	case InitGenerate:
		err = e.initGenerated()
	case InitConv:
		err = e.initConv()
	case InitFixed:
		err = e.initFixed()
	default:
		err = e.initMinimal()
	}
	if err != nil {
		return nil, err
	}
	e.fitness = make([]float64, len(e.pop))
	e.known = make([]bool, len(e.pop))
	return e, nil
}

func (e *Evolution) setup() {
	e.r = rand.New(e.src)
	e.mut = &mutator{r: e.r, cfg: &e.cfg, in: e.in, nc: e.nc, inn: &e.inn}
}

func cloneConfig(c EvolveConfig) EvolveConfig {
	c.Kernels = slices.Clone(c.Kernels)
	c.Activations = slices.Clone(c.Activations)
	return c
}

// Config is the run's configuration.
func (e *Evolution) Config() EvolveConfig { return cloneConfig(e.cfg) }

// Generation is the number of the generation the next Step evaluates,
// from 0.
func (e *Evolution) Generation() int { return e.gen }

// Population is the generation the next Step evaluates. Its genomes are
// the Evolution's: read them, do not change them.
func (e *Evolution) Population() *Population {
	return &Population{Input: e.in, NumClasses: e.nc, Genomes: slices.Clone(e.pop)}
}

// Best is the best genome evaluated so far, its fitness and the generation
// it was found in; nil before the first Step. The genome is the
// Evolution's: do not change it.
func (e *Evolution) Best() (g *Genome, fitness float64, generation int) {
	return e.best, e.bestFit, e.bestGen
}

// History is the GenStats of every generation evaluated so far, in order.
func (e *Evolution) History() []GenStats { return slices.Clone(e.history) }

// Step evaluates the current generation (the genomes whose fitness is not
// known yet), records its statistics, and breeds the next generation:
//
//  1. speciation: each genome joins the first species whose
//     representative (a member of the last generation) is within the
//     compatibility threshold, or founds one; the threshold then moves
//     towards SpeciesTarget species;
//  2. stagnation: a species whose best fitness has not risen for
//     Stagnation generations is dropped, unless it is among the
//     SpeciesElitism best;
//  3. fitness sharing shares the seats of the next generation among the
//     species (see offspring);
//  4. each species keeps its Elitism best genomes as they are, fitness
//     included (and the species of the best genome keeps at least that
//     one, so the best fitness never falls), and fills its other seats
//     with children of its best SurvivalThreshold share: crossover of two
//     parents with chance CrossoverRate, else a copy of one, then
//     mutation.
//
// When eval fails, Step returns its error and nothing has changed.
func (e *Evolution) Step(ctx context.Context, eval Evaluate) (GenStats, error) {
	var todo []int
	sub := &Population{Input: e.in, NumClasses: e.nc}
	for i, g := range e.pop {
		if !e.known[i] {
			todo = append(todo, i)
			sub.Genomes = append(sub.Genomes, g)
		}
	}
	if len(todo) > 0 {
		fs, err := eval(ctx, sub)
		if err != nil {
			return GenStats{}, err
		}
		if len(fs) != len(todo) {
			return GenStats{}, fmt.Errorf("neat: evolve: Evaluate returned %d fitness values for %d genomes", len(fs), len(todo))
		}
		if err := ctx.Err(); err != nil {
			return GenStats{}, err
		}
		for k, i := range todo {
			f := fs[k]
			if math.IsInf(f, 0) {
				f = math.NaN()
			}
			e.fitness[i], e.known[i] = f, true
		}
	}
	if err := ctx.Err(); err != nil {
		return GenStats{}, err
	}
	st := e.stats(len(todo))
	champ := e.champion()
	if f := e.fitness[champ]; f > e.bestFit {
		e.best, e.bestFit, e.bestGen = e.pop[champ], f, e.gen
	}
	e.speciate()
	if len(e.species) == 0 {
		return GenStats{}, errors.New("neat: evolve: no genome of the generation compiles")
	}
	e.cull()
	st.Species, st.Threshold = len(e.species), e.threshold
	e.reproduce()
	e.history = append(e.history, st)
	e.gen++
	return st, nil
}

// stats sums up the evaluated current generation.
func (e *Evolution) stats(evaluated int) GenStats {
	st := GenStats{Generation: e.gen, Evaluated: evaluated, Mean: math.NaN(), Best: math.NaN()}
	var sum float64
	n := 0
	for _, f := range e.fitness {
		if math.IsNaN(f) {
			st.Failed++
			continue
		}
		sum += f
		n++
	}
	if n > 0 {
		st.Mean = sum / float64(n)
	}
	champ := e.champion()
	g := e.pop[champ]
	st.Best, st.BestGenome, st.BestNodes = e.fitness[champ], g.ID, len(g.Nodes)
	st.ESSigma, st.ESRate = e.esSigmaMean(), math.NaN()
	if !math.IsNaN(st.ESSigma) {
		st.ESRate = e.esRate()
	}
	if gr, err := InferShapes(g, e.in, e.nc); err == nil {
		st.BestParams, st.BestFLOPs = gr.Params, gr.FLOPs
	}
	return st
}

// reproduce breeds the next generation from the speciated, culled current
// one and picks each species' representative for the next speciation.
func (e *Evolution) reproduce() {
	seats := e.offspring()
	champ := e.champion()
	e.inn.newGeneration()
	var pop []*Genome
	var fit []float64
	esNext, esStates := map[int64]int64{}, map[int64]*esState{}
	for k, s := range e.species {
		n := seats[k]
		elites := min(e.cfg.Elitism, n, len(s.members))
		if s.members[0] == champ {
			elites = max(elites, min(n, 1))
		}
		for _, i := range s.members[:elites] {
			if !math.IsNaN(e.fitness[i]) {
				pop = append(pop, e.pop[i])
				fit = append(fit, e.fitness[i])
				n--
			}
		}
		parents := s.members[:max(1, int(math.Ceil(e.cfg.SurvivalThreshold*float64(len(s.members)))))]
		if firstNaN := slices.IndexFunc(parents, func(i int) bool { return math.IsNaN(e.fitness[i]) }); firstNaN > 0 {
			parents = parents[:firstNaN] // members are sorted: NaN last
		}
		if nES := int(math.Round(e.cfg.ESShare * float64(n))); nES > 0 {
			pop, fit = e.esBreed(s, nES, pop, fit, esNext, esStates)
			n -= nES
		}
		for range n {
			pop = append(pop, e.child(parents))
			fit = append(fit, math.NaN())
		}
	}
	e.esParent, e.esState = esNext, esStates
	for _, s := range e.species {
		s.rep = e.pop[s.members[e.r.IntN(len(s.members))]]
	}
	e.pop, e.fitness = pop, fit
	e.known = make([]bool, len(pop))
	for i := range e.known {
		e.known[i] = !math.IsNaN(fit[i]) && !e.cfg.RescoreElites
	}
}

// child breeds one new genome from a species' parents.
func (e *Evolution) child(parents []int) *Genome {
	m := e.mut
	id := e.nextGenome
	e.nextGenome++
	ia := e.r.IntN(len(parents))
	a := parents[ia]
	var c *Genome
	if len(parents) > 1 && m.chance(e.cfg.CrossoverRate) {
		ib := e.r.IntN(len(parents) - 1)
		if ib >= ia {
			ib++
		}
		b := parents[ib]
		if e.better(b, a) < 0 {
			a, b = b, a
		}
		c = m.crossover(e.pop[a], e.pop[b], id)
	} else {
		c = e.pop[a].Clone(id)
	}
	return m.mutate(c)
}
