package evaluator

import (
	"context"
	"math"

	"github.com/neateval/neateval/neat"
)

// Scorer is what scores a population: an *Evaluator on one device, or
// anything with its Evaluate method (a cluster of them, say).
type Scorer interface {
	Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]Result) error) ([]Result, error)
}

var _ Scorer = (*Evaluator)(nil)

// NEATFitness adapts a Scorer to neat.Evolution.Step: every genome handed
// to it is scored, and its fitness returned in population order, NaN for a
// genome that could not be scored (the evolution then leaves it out of
// selection):
//
//	st, err := evo.Step(ctx, evaluator.NEATFitness(e))
func NEATFitness(s Scorer) neat.Evaluate {
	return func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		rs, err := s.Evaluate(ctx, pop, nil)
		if err != nil {
			return nil, err
		}
		return Fitnesses(rs), nil
	}
}

// Fitnesses is each result's Fitness, NaN where the genome got an error.
func Fitnesses(rs []Result) []float64 {
	fs := make([]float64, len(rs))
	for i, r := range rs {
		fs[i] = math.NaN()
		if r.OK() {
			fs[i] = r.Fitness
		}
	}
	return fs
}
