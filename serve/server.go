package serve

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/run"
)

// Server is the scoring service: the backend, its device and the data set,
// opened once and kept for every request. Make one with New, serve with
// Serve or ListenAndServe, and Close it.
type Server struct {
	cfg     *config.Config
	opts    *checked
	log     *zerolog.Logger
	backend evaluator.Backend // nil when Options.NewScorer replaces it
	ds      *datasets.Dataset // the whole set, before any limit
	scorers *scorers
	queue   *queue
	metrics *metrics
	started time.Time

	running atomic.Pointer[progress] // the evaluation running, nil when none

	// drain is cancelled when shutdown begins (waiting requests leave the
	// queue); stop when the grace period ends (the running one is
	// cancelled).
	drain, stop             context.Context
	cancelDrain, cancelStop context.CancelFunc
	stoppedRunning          atomic.Bool // an evaluation was cancelled by stop
	closeOnce               sync.Once
}

// progress is the running evaluation, for GET /v1/status and Retry-After.
type progress struct {
	genomes, images int
	started         time.Time
	done            atomic.Int64
}

// New opens the data set and the backend cfg describes (cfg validated, as
// config.Load returns it) and prepares the scorer of the default limit
// (cfg's dataset.limit), so that the first request finds the data set on
// the device. It refuses an address that is not loopback without a token
// (ErrTokenRequired), and TLS files or allowed folders it cannot read.
func New(cfg *config.Config, opts Options) (*Server, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, opts: o, log: opts.Logger, started: time.Now()}
	if s.log == nil {
		nop := zerolog.Nop()
		s.log = &nop
	}
	full := *cfg
	full.Dataset.Limit = 0 // the whole set; each request takes its first images
	if s.ds, err = run.OpenDataset(&full, s.log); err != nil {
		return nil, err
	}
	newScorer := opts.NewScorer
	if newScorer == nil {
		if s.backend, err = run.OpenBackend(cfg, s.log); err != nil {
			return nil, err
		}
		newScorer = s.evaluatorFor
	}
	s.scorers = newScorers(s.ds, newScorer)
	if _, _, err := s.scorers.get(cfg.Dataset.Limit); err != nil {
		s.Close()
		return nil, err
	}
	s.queue = newQueue(o.Queue)
	s.metrics = newMetrics(s.queue, s.device())
	s.drain, s.cancelDrain = context.WithCancel(context.Background())
	s.stop, s.cancelStop = context.WithCancel(context.Background())
	return s, nil
}

// evaluatorFor is the default scorer: an evaluator on the server's backend
// with the config's options. Its fitness is the config's; each request's
// is applied to the metrics afterwards (refit).
func (s *Server) evaluatorFor(ds *datasets.Dataset) (evaluator.Scorer, error) {
	e, err := evaluator.New(s.backend, ds, s.cfg.StagingConfig(), s.cfg.EvaluatorOptions(s.log))
	if err != nil {
		return nil, fmt.Errorf("preparing the data set %s: %w", ds.Identity(), err)
	}
	return e, nil
}

// Close releases the scorers, the data set on the device and the backend.
// Call it once Serve has returned.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.scorers.close()
		if s.backend != nil {
			err = s.backend.Close()
		}
	})
	return err
}

// Handler is the service's HTTP API (docs/http-api.md), for tests and for
// programs that serve it themselves; Serve serves it with shutdown.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/health", s.only("GET", s.handleHealth))
	mux.HandleFunc("/v1/status", s.only("GET", s.handleStatus))
	mux.HandleFunc("/v1/evaluate", s.only("POST", s.handleEvaluate))
	mux.Handle("/metrics", s.only("GET", s.metrics.handler().ServeHTTP))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "no such path %q", r.URL.Path))
	})
	return s.logged(s.authorized(mux))
}

// only answers 405 to a method other than method (GET also takes HEAD).
func (s *Server) only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == "GET" && r.Method == "HEAD") {
			w.Header().Set("Allow", method)
			writeError(w, errorf(http.StatusMethodNotAllowed, "method %s, want %s", r.Method, method))
			return
		}
		h(w, r)
	}
}
