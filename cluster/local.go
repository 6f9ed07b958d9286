package cluster

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// IdentityOf is the identity of runs of cfg on data set ds.
func IdentityOf(cfg *config.Config, ds *datasets.Dataset) Identity {
	return Identity{Version: run.Version(), Format: neat.FormatV1, Dataset: ds.Identity(), Fitness: cfg.Eval.Fitness}
}

// NewEvaluator opens the backend cfg names and an evaluator on ds: a
// worker's scorer. close releases both.
func NewEvaluator(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (ev *evaluator.Evaluator, close func(), err error) {
	b, err := run.OpenBackend(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	ev, err = evaluator.New(b, ds, cfg.StagingConfig(), cfg.EvaluatorOptions(log))
	if err != nil {
		b.Close()
		return nil, nil, fmt.Errorf("worker: %w", err)
	}
	return ev, func() { ev.Close(); b.Close() }, nil
}
