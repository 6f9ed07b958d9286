package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// finishEvolve writes the best genome and scores it on the validation set
// (with the run's evaluator, *ev) and then on the test set (with an
// evaluator of its own, once the validation set is off the device). It
// logs the evolve_done line and prints a summary on stdout.
func finishEvolve(ctx context.Context, cfg *Config, evo *neat.Evolution, ev **evaluator.Evaluator, b evaluator.Backend,
	test *datasets.Dataset, opts evaluator.Options, start time.Time, log *zerolog.Logger, stdout io.Writer) error {
	best, fit, gen := evo.Best()
	if best == nil {
		return errors.New("evolve: no generation was evaluated")
	}
	if err := writeBest(cfg.Evolve.Best, evo); err != nil {
		return err
	}
	pop := evo.Population()
	pop.Genomes = []*neat.Genome{best}
	vr, err := scoreOne(ctx, *ev, pop)
	if err != nil {
		return fmt.Errorf("evolve: best genome on the validation set: %w", err)
	}
	(*ev).Close()
	*ev = nil
	te, err := evaluator.New(b, test, stagingConfig(cfg), opts)
	if err != nil {
		return err
	}
	tr, err := scoreOne(ctx, te, pop)
	te.Close()
	if err != nil {
		return fmt.Errorf("evolve: best genome on the test set: %w", err)
	}
	logEvent(log, zerolog.InfoLevel, EvEvolveDone).Int64(KeyBestGenome, best.ID).Int(KeyGen, gen).
		Float64(KeyBest, fit).Float64("val_accuracy", vr.Accuracy).Float64("val_loss", vr.Loss).
		Float64("test_accuracy", tr.Accuracy).Float64("test_loss", tr.Loss).Int("test_images", tr.Images).
		Int64(KeyParams, tr.Params).Int64(KeyFLOPs, tr.FLOPs).Int("generations", evo.Generation()).
		Str("best_file", cfg.Evolve.Best).Dur(KeySeconds, time.Since(start)).
		Msgf("best genome %d (generation %d): validation accuracy %.4f, test accuracy %.4f", best.ID, gen, vr.Accuracy, tr.Accuracy)
	_, err = fmt.Fprintf(stdout, "best genome %d (generation %d of %d): fitness %.4f, validation accuracy %.4f, test accuracy %.4f on %d images, %d params, %d FLOPs/image; written to %s\n",
		best.ID, gen, evo.Generation(), fit, vr.Accuracy, tr.Accuracy, tr.Images, tr.Params, tr.FLOPs, cfg.Evolve.Best)
	return err
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
