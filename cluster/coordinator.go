package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
)

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// Identity is the run's (IdentityOf): Dataset, Data and Fitness are
	// required; Version and Format default to this build's.
	Identity Identity
	// Queue sets up the streams and the workers' consumer.
	Queue Queue
	// ItemGenomes is the mean genomes per item (default 16); ItemBytes
	// bounds an item's weights (default 256 MiB).
	ItemGenomes int
	ItemBytes   int64
	// MinItems, when above 1, makes items smaller than ItemGenomes where
	// the genomes to score would fill fewer items: with the coordinator's
	// workers known (the in-process ones), 16 per worker keeps the last
	// items from leaving some workers idle while one finishes (the items'
	// costs are estimated from FLOPs and bytes, and a small genome's time
	// is not: items of equal estimates took 0.8–1.6 s on the default run).
	MinItems int
	// WorkerTimeout: when no worker has been heard from for this long, the
	// coordinator gives up with a *NoWorkersError (default 30s).
	WorkerTimeout time.Duration
	// Logger receives the coordinator's events (nil: none).
	Logger *zerolog.Logger
}

// Coordinator scores populations on the workers of a broker: it splits
// them into items, stores their weights, publishes the items and collects
// the results. It has the evaluator's Evaluate method, so neat.Evolution
// runs over a cluster through evaluator.NEATFitness unchanged.
type Coordinator struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	o   CoordinatorOptions
	log *zerolog.Logger
}

var _ evaluator.Scorer = (*Coordinator)(nil)

// NewCoordinator makes a coordinator on a connection.
func NewCoordinator(nc *nats.Conn, o CoordinatorOptions) (*Coordinator, error) {
	if o.Identity.Dataset == "" || o.Identity.Data == "" || o.Identity.Fitness == "" {
		return nil, errors.New("coordinator: the identity needs a data set, its digest and a fitness (IdentityOf)")
	}
	if o.Identity.Version == "" {
		o.Identity.Version = run.Version()
	}
	if o.Identity.Format == "" {
		o.Identity.Format = neat.FormatV1
	}
	if o.ItemGenomes <= 0 {
		o.ItemGenomes = 16
	}
	if o.ItemBytes == 0 {
		o.ItemBytes = 256 << 20
	}
	if o.WorkerTimeout <= 0 {
		o.WorkerTimeout = 30 * time.Second
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	log := o.Logger
	if log == nil {
		nop := zerolog.Nop()
		log = &nop
	}
	return &Coordinator{nc: nc, js: js, o: o, log: log}, nil
}

// Job is a population to score on the cluster.
type Job struct {
	Pop    *neat.Population
	Digest string // the population's digest
	// Run is the run id (results.Header.RunID): results already on the
	// broker for it are taken, not scored again.
	Run string
	// Pending are the indexes to score (nil: every genome).
	Pending []int
	// Sample, when set, is the part of the data set the genomes are scored
	// on; the run id must tell it apart (Header.Dataset naming it).
	Sample *Sample
}

// Stats are what a Score did, for the run summary.
type Stats struct {
	Workers      int // workers whose results were taken
	Items        int // items published
	Redeliveries int // deliveries beyond the first, of the items finished
	Recovered    int // results found on the broker from an earlier coordinator
	// WeightBytes is the population files stored for the items.
	WeightBytes int64
}

// NoWorkersError is the coordinator's giving up when no worker was heard
// from for a while.
type NoWorkersError struct {
	Waited  time.Duration
	Pending int
}

func (e *NoWorkersError) Error() string {
	return fmt.Sprintf("no worker heard from in %s: %d genomes not scored", e.Waited.Round(time.Second), e.Pending)
}

// Evaluate scores every genome of pop on the cluster and returns one
// result per genome in population order, as evaluator.Evaluator.Evaluate.
func (c *Coordinator) Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]evaluator.Result) error) ([]evaluator.Result, error) {
	return c.Sampled(nil, nil).Evaluate(ctx, pop, onChunk)
}

// Sampled is a Scorer on the cluster that scores genomes on sample s of
// the workers' data set (nil: all of it), with fitness f of their metrics
// (nil: the workers' eval.fitness). A generation of `neateval evolve` is
// scored this way: every worker draws the generation's sample, and the
// coordinator applies the run's penalised fitness, exactly as the
// evaluator would (the metrics travel as float64 and round-trip exactly).
func (c *Coordinator) Sampled(s *Sample, f evaluator.FitnessFunc) evaluator.Scorer {
	return sampled{c: c, s: s, f: f}
}

type sampled struct {
	c *Coordinator
	s *Sample
	f evaluator.FitnessFunc
}

func (sc sampled) Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]evaluator.Result) error) ([]evaluator.Result, error) {
	c := sc.c
	digest := neat.ContentDigest(pop)
	h := results.Header{Population: digest, Genomes: len(pop.Genomes), Dataset: c.o.Identity.Dataset, Fitness: c.o.Identity.Fitness}
	if sc.s != nil {
		h.Dataset += ", " + sc.s.String()
	}
	out := make([]evaluator.Result, len(pop.Genomes))
	for i, g := range pop.Genomes {
		nan := math.NaN()
		out[i] = evaluator.Result{Index: i, GenomeID: g.ID, Fitness: nan, Accuracy: nan, Loss: nan, Err: evaluator.ErrNotEvaluated}
	}
	_, err := c.Score(ctx, Job{Pop: pop, Digest: digest, Run: h.RunID(), Sample: sc.s}, func(rs []evaluator.Result) error {
		for k, r := range rs {
			if sc.f != nil && r.OK() {
				rs[k].Fitness = sc.f(evaluator.Metrics{Accuracy: r.Accuracy, Loss: r.Loss, Images: r.Images, Params: r.Params, FLOPs: r.FLOPs})
			}
			out[r.Index] = rs[k]
		}
		if onChunk != nil {
			return onChunk(rs)
		}
		return nil
	})
	return out, err
}

// EvaluatorResult is a results-file line as an evaluator result.
func EvaluatorResult(r results.Result) evaluator.Result {
	nan := math.NaN()
	out := evaluator.Result{Index: r.Index, GenomeID: r.GenomeID, Fitness: nan, Accuracy: nan, Loss: nan,
		Images: r.Images, Params: r.Params, FLOPs: r.FLOPs, Seconds: r.Seconds}
	if r.Error != nil {
		out.Err = errors.New(*r.Error)
		return out
	}
	if r.Fitness != nil && r.Accuracy != nil && r.Loss != nil {
		out.Fitness, out.Accuracy, out.Loss = *r.Fitness, *r.Accuracy, *r.Loss
	}
	return out
}
