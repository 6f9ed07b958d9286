package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// finish writes the best genome and scores it on the validation set (with
// the run's evaluator ev, which it closes) and then on the test set (with
// an evaluator of its own, once the validation set is off the device).
func finish(ctx context.Context, cfg *config.Config, evo *neat.Evolution, ev *evaluator.Evaluator, b evaluator.Backend,
	test *datasets.Dataset, opts evaluator.Options) (*EvolveResult, error) {
	best, fit, gen := evo.Best()
	if best == nil {
		ev.Close()
		return nil, errors.New("evolve: no generation was evaluated")
	}
	final, vr, err := pickFinal(ctx, ev, evo, finalists(cfg, evo))
	ev.Close()
	if err != nil {
		return nil, fmt.Errorf("evolve: best genome on the validation set: %w", err)
	}
	if final != best {
		best, fit, gen = final, vr.Fitness, evo.Generation()-1
	}
	if err := writeGenome(cfg.Evolve.Best, evo, best); err != nil {
		return nil, err
	}
	pop := evo.Population()
	pop.Genomes = []*neat.Genome{best}
	te, err := evaluator.New(b, test, cfg.StagingConfig(), opts)
	if err != nil {
		return nil, err
	}
	tr, err := scoreOne(ctx, te, pop)
	te.Close()
	if err != nil {
		return nil, fmt.Errorf("evolve: best genome on the test set: %w", err)
	}
	return &EvolveResult{Best: best, Generation: gen, Generations: evo.Generation(), Fitness: fit,
		Validation: vr, Test: tr, BestFile: cfg.Evolve.Best}, nil
}

func logEvolveDone(log *zerolog.Logger, r *EvolveResult, took time.Duration) {
	vr, tr := r.Validation, r.Test
	event(log, zerolog.InfoLevel, EventEvolveDone).Int64(KeyBestGenome, r.Best.ID).Int(KeyGen, r.Generation).
		Float64(KeyBest, r.Fitness).Float64(KeyValAccuracy, vr.Accuracy).Float64(KeyValLoss, vr.Loss).
		Float64(KeyTestAccuracy, tr.Accuracy).Float64(KeyTestLoss, tr.Loss).Int(KeyTestImages, tr.Images).
		Int64(KeyParams, tr.Params).Int64(KeyFLOPs, tr.FLOPs).Int(KeyGenerations, r.Generations).
		Str(KeyBestFile, r.BestFile).Dur(KeySeconds, took).
		Msgf("best genome %d (generation %d): validation accuracy %.4f, test accuracy %.4f", r.Best.ID, r.Generation, vr.Accuracy, tr.Accuracy)
}

// scoreOne evaluates a population of one genome and returns its result,
// or the genome's error.
func scoreOne(ctx context.Context, ev *evaluator.Evaluator, pop *neat.Population) (evaluator.Result, error) {
	rs, err := ev.Evaluate(ctx, pop, nil)
	if err != nil {
		return evaluator.Result{}, err
	}
	if rs[0].Err != nil {
		return rs[0], rs[0].Err
	}
	return rs[0], nil
}
