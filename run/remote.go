package run

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
)

// Remote scores a run's genomes somewhere else than this process's device:
// on the workers of a cluster (package cluster). Run hands it the pending
// genomes and writes what it delivers exactly as a local run's; Evolve
// scores each generation through its Scorer.
type Remote interface {
	// ScoreRun scores the genomes of pop at the pending indexes, calling
	// onChunk with their results (Index: the population index) as they
	// come. h identifies the run: results that an earlier attempt left
	// with the remote may be delivered instead of scored again.
	ScoreRun(ctx context.Context, h results.Header, pop *neat.Population, pending []int,
		onChunk func([]evaluator.Result) error) (RemoteStats, error)
	// Scorer scores genomes on size images of the data set drawn by seed
	// (datasets.Dataset.Sample; size 0: all of them), with fitness f of
	// their metrics: what an Evolve generation scores on.
	Scorer(size int, seed int64, f evaluator.FitnessFunc) evaluator.Scorer
	// Close ends the remote's work and connections.
	Close() error
}

// OpenRemote starts a Remote for a run of cfg on data set ds (the data set
// the run scores on: remote workers must have the same): what
// Spec.Remote holds, cluster.OpenRemote say.
type OpenRemote func(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (Remote, error)

// RemoteStats are what a Remote reports for the run summary.
type RemoteStats struct {
	Workers      int // workers whose results were taken
	Items        int // work items published
	Redeliveries int // deliveries of items beyond their first
}

// scoreRemote is scorePending on spec.Remote.
func scoreRemote(ctx context.Context, spec Spec, r Remote, h results.Header, pop *neat.Population, pending []int,
	all []results.Result, w *results.Writer) (RemoteStats, error) {
	return r.ScoreRun(ctx, h, pop, pending, func(rs []evaluator.Result) error {
		out := make([]results.Result, len(rs))
		for k, r := range rs {
			out[k] = ResultLine(r, r.Index)
			all[r.Index] = out[k]
			if spec.Progress != nil {
				spec.Progress.Add(1, int64(r.Images))
			}
		}
		return w.Append(out)
	})
}
