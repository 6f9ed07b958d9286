package cluster

import (
	"fmt"
	"runtime"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// IdentityOf is the identity of runs of cfg on data set ds.
func IdentityOf(cfg *config.Config, ds *datasets.Dataset) Identity {
	return Identity{Version: run.Version(), Format: neat.FormatV1, Dataset: ds.Identity(), Data: ds.Digest(), Fitness: cfg.Eval.Fitness}
}

// Local is a worker's scoring on this process's device: the backend cfg
// names, an evaluator on the worker's data set (the embedded
// *evaluator.Evaluator: WorkerOptions.Scorer) and evaluators on samples of
// it (Sample: WorkerOptions.Sampler), all on the one backend.
type Local struct {
	*evaluator.Evaluator
	b    evaluator.Backend
	cfg  *config.Config
	ds   *datasets.Dataset
	opts evaluator.Options
	id   Identity
}

// OpenLocal opens the backend cfg names and an evaluator on ds.
func OpenLocal(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (*Local, error) {
	return openLocal(cfg, ds, IdentityOf(cfg, ds), log)
}

// openLocal is OpenLocal with the identity known (the in-process workers
// share the session's: the data set's digest is computed once).
func openLocal(cfg *config.Config, ds *datasets.Dataset, id Identity, log *zerolog.Logger) (*Local, error) {
	b, err := run.OpenBackend(cfg, log)
	if err != nil {
		return nil, err
	}
	l := &Local{b: b, cfg: cfg.WithParallel(b), ds: ds, id: id}
	l.opts = l.cfg.EvaluatorOptions(log)
	l.Evaluator, err = evaluator.New(b, ds, l.cfg.StagingConfig(), l.opts)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("worker: %w", err)
	}
	return l, nil
}

// Sample is an evaluator on sample s of the data set (the images
// ds.Sample(s.Size, s.Seed) draws, as `neateval evolve` draws a
// generation's); done closes it.
func (l *Local) Sample(s Sample) (ev evaluator.Scorer, done func(), err error) {
	idx, _ := l.ds.Sample(s.Size, s.Seed)
	e, err := evaluator.New(l.b, l.ds.Subset(idx, fmt.Sprintf("%s-sample%d", l.ds.Name, s.Seed)), l.cfg.StagingConfig(), l.opts)
	if err != nil {
		return nil, nil, err
	}
	return e, e.Close, nil
}

// Options are the worker options that score on l.
func (l *Local) Options() WorkerOptions {
	return WorkerOptions{Identity: l.id, Scorer: l.Evaluator, Sampler: l.Sample}
}

// Close closes the evaluator and the backend.
func (l *Local) Close() {
	l.Evaluator.Close()
	l.b.Close()
}

// LocalWorkerConfig is the config of local worker k (from 0) of the
// cfg.Cluster.Workers that `neateval run --workers N` starts: each takes
// its share of eval.threads (at least one) and its own GPU, eval.device +
// k (the CPU backend ignores the index). cfg is not changed.
func LocalWorkerConfig(cfg *config.Config, k int) *config.Config {
	wc := *cfg
	total := cfg.Eval.Threads
	if total == 0 {
		total = runtime.NumCPU()
	}
	wc.Eval.Threads = max(1, total/max(cfg.Cluster.Workers, 1))
	wc.Eval.Device = cfg.Eval.Device + k
	return &wc
}
