package run

import (
	"context"
	"fmt"
	"slices"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// genScorer scores a generation: on the whole validation set (the run's
// one evaluator), or, with evolve.val_batch, on config.Evolve.ValBatchAt
// of its images drawn afresh for the generation by
// config.Evolve.ValSampleSeed; on the remote's workers when there is one.
type genScorer struct {
	cfg    *config.Config
	full   *evaluator.Evaluator
	b      evaluator.Backend
	val    *datasets.Dataset
	opts   evaluator.Options
	remote Remote // nil: score here
}

// genSample is what generation gen is scored on: the seed of its sample
// and how many images it draws (both 0 when it is scored on the whole
// validation set).
type genSample struct {
	seed int64
	size int
}

// sample is the scorer of generation gen and its sample; done releases
// the scorer.
func (s *genScorer) sample(gen int) (sc evaluator.Scorer, smp genSample, done func(), err error) {
	ec := &s.cfg.Evolve
	if size := ec.ValBatchAt(gen); size > 0 && size < s.val.N {
		smp = genSample{seed: ec.ValSampleSeed(gen), size: size}
	}
	if s.remote != nil {
		return s.remote.Scorer(smp.size, smp.seed, s.opts.Fitness), smp, func() {}, nil
	}
	if smp.size == 0 {
		return s.full, smp, func() {}, nil
	}
	idx, _ := s.val.Sample(smp.size, smp.seed)
	sub := s.val.Subset(idx, fmt.Sprintf("%s-gen%d", s.val.Name, gen))
	ev, err := evaluator.New(s.b, sub, s.cfg.StagingConfig(), s.opts)
	if err != nil {
		return nil, genSample{}, nil, err
	}
	return ev, smp, ev.Close, nil
}

// finalists are the genomes the run may end with: the best genome by its
// (sampled) fitness and, when generations are scored on samples, the last
// generation's best and the evolution strategy's centres of the next
// generation (neat.Evolution.Centres), for the best may owe its rank to a
// lucky sample and a centre is the strategy's estimate of what is best on
// average.
func finalists(cfg *config.Config, evo *neat.Evolution) []*neat.Genome {
	best, _, _ := evo.Best()
	gs := []*neat.Genome{best}
	h := evo.History()
	if cfg.Evolve.ValBatch == 0 || len(h) == 0 {
		return gs
	}
	if last := h[len(h)-1].BestGenome; last != best.ID {
		for _, g := range evo.Population().Genomes {
			if g.ID == last {
				gs = append(gs, g)
			}
		}
	}
	for _, c := range evo.Centres() {
		if !slices.Contains(gs, c) {
			gs = append(gs, c)
		}
	}
	return gs
}

// pickFinal scores the finalists on the whole validation set and returns
// the best of them with its result (the first on a tie).
func pickFinal(ctx context.Context, ev *evaluator.Evaluator, evo *neat.Evolution, gs []*neat.Genome) (*neat.Genome, evaluator.Result, error) {
	pop := evo.Population()
	pop.Genomes = gs
	rs, err := ev.Evaluate(ctx, pop, nil)
	if err != nil {
		return nil, evaluator.Result{}, err
	}
	k := 0
	for i, r := range rs {
		if r.Err != nil {
			if i == 0 {
				return nil, r, r.Err
			}
			continue
		}
		if r.Fitness > rs[k].Fitness {
			k = i
		}
	}
	return gs[k], rs[k], nil
}
