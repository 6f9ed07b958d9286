package cluster

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
)

// Session is a run's cluster: a connection to the broker and a coordinator
// on it; with [cluster] workers and no nats_url, also an in-process broker
// and the local workers. It is the run.Remote of `neateval run --nats` and
// `--workers`.
type Session struct {
	*Coordinator
	nc      *nats.Conn
	broker  *Broker
	stop    context.CancelFunc
	wg      sync.WaitGroup
	closers []func()
}

var _ run.Remote = (*Session)(nil)

// Open starts the cluster cfg's [cluster] table describes for scoring on
// data set ds (its identity is the items'); Close ends it. log receives the
// cluster's events (nil: none).
func Open(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (*Session, error) {
	if log == nil {
		nop := zerolog.Nop()
		log = &nop
	}
	s := &Session{}
	cc := &cfg.Cluster
	var err error
	if cc.NATSURL != "" {
		s.nc, err = Connect(cc.NATSURL, "neateval coordinator", cc)
	} else {
		s.broker, err = StartBroker(BrokerOptions{Port: -1})
		if err == nil {
			s.nc, err = s.broker.Connect("neateval coordinator")
		}
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	q := QueueOf(cc, s.broker != nil)
	s.Coordinator, err = NewCoordinator(s.nc, CoordinatorOptions{
		Identity: IdentityOf(cfg, ds), Queue: q, ItemGenomes: cc.ItemGenomes, ItemBytes: int64(cc.ItemBytes),
		WorkerTimeout: seconds(cc.WorkerTimeoutSeconds), Logger: log, MinItems: 16 * cc.Workers,
	})
	if err == nil && s.broker != nil {
		err = s.startLocal(cfg, ds, q, log)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// QueueOf is the queue settings of [cluster]; memory for an in-process
// broker.
func QueueOf(cc *config.ClusterConfig, memory bool) Queue {
	return Queue{AckWait: seconds(cc.AckWaitSeconds), MaxDeliver: cc.MaxDeliver, Memory: memory}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// startLocal starts cfg.Cluster.Workers workers on the in-process broker,
// each with the config LocalWorkerConfig gives it. They open their
// backends at the same time: a run waits for the slowest, not for the sum.
func (s *Session) startLocal(cfg *config.Config, ds *datasets.Dataset, q Queue, log *zerolog.Logger) error {
	n := cfg.Cluster.Workers
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	workers := make([]*Worker, n)
	closers := make([][]func(), n)
	var g errgroup.Group
	for k := range n {
		g.Go(func() (err error) {
			workers[k], closers[k], err = s.openWorker(LocalWorkerConfig(cfg, k), ds, q, k, log)
			return err
		})
	}
	err := g.Wait()
	for _, c := range closers {
		s.closers = append(s.closers, c...)
	}
	if err != nil {
		return err
	}
	for _, w := range workers {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); w.Run(ctx) }()
	}
	return nil
}

// openWorker opens local worker k and its connection; closers release
// what was opened, even on an error.
func (s *Session) openWorker(wc *config.Config, ds *datasets.Dataset, q Queue, k int, log *zerolog.Logger) (w *Worker, closers []func(), err error) {
	l, err := openLocal(wc, ds, s.o.Identity, log)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, l.Close)
	nc, err := s.broker.Connect("neateval worker " + strconv.Itoa(k))
	if err != nil {
		return nil, closers, err
	}
	closers = append(closers, nc.Close)
	o := l.Options()
	o.Name, o.Queue, o.Logger = "local-"+strconv.Itoa(k), q, log
	w, err = NewWorker(nc, o)
	return w, closers, err
}

// ScoreRun is run.Remote's method: Score on the run's header.
func (s *Session) ScoreRun(ctx context.Context, h results.Header, pop *neat.Population, pending []int,
	onChunk func([]evaluator.Result) error) (run.RemoteStats, error) {
	if pending == nil {
		pending = []int{}
	}
	st, err := s.Score(ctx, Job{Pop: pop, Digest: h.Population, Run: h.RunID(), Pending: pending}, onChunk)
	return run.RemoteStats{Workers: st.Workers, Items: st.Items, Redeliveries: st.Redeliveries}, err
}

// Scorer is run.Remote's method: the coordinator's Sampled on size images
// drawn by seed (size 0: the whole data set).
func (s *Session) Scorer(size int, seed int64, f evaluator.FitnessFunc) evaluator.Scorer {
	if size == 0 {
		return s.Sampled(nil, f)
	}
	return s.Sampled(&Sample{Size: size, Seed: seed}, f)
}

// Close stops the local workers and the broker, and closes the connection.
func (s *Session) Close() error {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
	for _, c := range s.closers {
		c()
	}
	if s.nc != nil {
		s.nc.Drain()
		s.nc.Close()
	}
	if s.broker != nil {
		s.broker.Shutdown()
	}
	return nil
}

// OpenRemote is Open as a run.OpenRemote: set run.Spec.Remote to it to
// score a run on the cluster [cluster] describes.
func OpenRemote(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (run.Remote, error) {
	s, err := Open(cfg, ds, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}
