package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
)

// errShuttingDown is the last line of a stream the shutdown cut.
var errShuttingDown = errors.New("cancelled: the service is shutting down")

// handleEvaluate is POST /v1/evaluate, checked in the documented order:
// content type, a queue place, the body's size, the body and the
// population; then the stream.
func (s *Server) handleEvaluate(w http.ResponseWriter, r *http.Request) {
	if _, herr := mediaType(r); herr != nil {
		writeError(w, herr)
		return
	}
	if s.drain.Err() != nil || !s.queue.admit() {
		w.Header().Set("Retry-After", retryAfter(s.retryAfterSeconds()))
		writeError(w, errorf(http.StatusServiceUnavailable, "busy: an evaluation runs and %d requests wait (--queue %d)", s.queue.capacity, s.queue.capacity))
		return
	}
	req, job, herr := s.accept(r)
	if herr != nil {
		s.queue.leave()
		writeError(w, herr)
		return
	}
	s.stream(w, r, req, job)
}

// job is an accepted request as it will be scored.
type job struct {
	fitness string
	fit     evaluator.FitnessFunc
	limit   int
	images  int // per genome, after the limit
	header  results.Header
	runID   string
}

// accept reads and checks the request after it got its place.
func (s *Server) accept(r *http.Request) (*evalRequest, *job, *httpError) {
	max := s.opts.MaxBody
	if r.ContentLength > max {
		return nil, nil, tooLarge(max)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, max)
	req, herr := parseRequest(r, s.opts.allow, max)
	if herr != nil {
		return nil, nil, herr
	}
	// Read what is left of the body, so that the server sees the client
	// go away while the request waits or runs.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, nil, bodyError(err, max)
	}
	j := &job{fitness: s.cfg.Eval.Fitness, limit: s.cfg.Dataset.Limit}
	if req.fitness != "" {
		j.fitness = req.fitness
	}
	if req.limit != "" {
		j.limit, _ = parseLimit(req.limit) // checked by parseRequest
	}
	j.fit = fitnessFunc(j.fitness)
	ds := s.ds.Limit(j.limit)
	if err := checkShape(req.pop, ds); err != nil {
		return nil, nil, badRequest(err)
	}
	j.images = ds.N
	j.header = results.Header{Population: req.digest, Genomes: len(req.pop.Genomes), Dataset: ds.Identity(), Fitness: j.fitness}
	j.runID = j.header.RunID()
	return req, j, nil
}

// checkShape says whether the population's images and classes are the
// data set's (as the evaluator checks them, before any stream begins).
func checkShape(pop *neat.Population, ds *datasets.Dataset) error {
	in := pop.Input
	if in.Channels != ds.Channels || in.Height != ds.Height || in.Width != ds.Width {
		return fmt.Errorf("the population's input is %d×%d×%d but the data set %s has %d×%d×%d images",
			in.Channels, in.Height, in.Width, ds.Name, ds.Channels, ds.Height, ds.Width)
	}
	if pop.NumClasses != ds.NumClasses {
		return fmt.Errorf("the population has %d classes but the data set %s has %d", pop.NumClasses, ds.Name, ds.NumClasses)
	}
	return nil
}

func fitnessFunc(name string) evaluator.FitnessFunc {
	if name == config.FitnessNegLoss {
		return evaluator.NegLoss
	}
	return evaluator.Accuracy
}

// stream sends the headers, waits for the request's turn and scores it,
// writing each result line as its chunk finishes, then the summary.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *evalRequest, j *job) {
	rec := recordOf(w)
	rec.run = j.runID
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Neateval-Run", j.runID)
	h.Set("X-Neateval-Genomes", strconv.Itoa(len(req.pop.Genomes)))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	undrain := context.AfterFunc(s.drain, cancel)
	err := s.queue.wait(ctx)
	undrain()
	if err != nil {
		if s.drain.Err() != nil && r.Context().Err() == nil {
			err = errShuttingDown
		}
		s.endStream(w, rec, r, err, nil, 0)
		return
	}
	defer s.queue.release()
	unstop := context.AfterFunc(s.stop, cancel)
	all, wall, err := s.score(ctx, w, rc, req.pop, j)
	if !unstop() {
		s.stoppedRunning.Store(true)
		err = errShuttingDown
	}
	s.endStream(w, rec, r, err, all, wall)
}

// score runs the evaluation, streaming its lines; all holds them by index.
func (s *Server) score(ctx context.Context, w io.Writer, rc *http.ResponseController, pop *neat.Population, j *job) ([]results.Result, time.Duration, error) {
	p := &progress{genomes: len(pop.Genomes), images: j.images, started: time.Now()}
	s.running.Store(p)
	s.metrics.running.Set(1)
	defer func() {
		s.running.Store(nil)
		s.metrics.running.Set(0)
	}()
	sc, _, err := s.scorers.get(j.limit)
	if err != nil {
		return nil, 0, err
	}
	all := make([]results.Result, len(pop.Genomes))
	_, err = sc.Evaluate(ctx, pop, func(rs []evaluator.Result) error {
		for _, r := range rs {
			refit(&r, j.fit)
			s.metrics.result(r)
			all[r.Index] = run.ResultLine(r, r.Index)
			if err := results.EncodeLine(w, j.runID, &all[r.Index]); err != nil {
				return err
			}
			p.done.Add(1)
		}
		return rc.Flush()
	})
	wall := time.Since(p.started)
	s.metrics.evalSecs.Observe(wall.Seconds())
	if err == nil {
		if sec := wall.Seconds(); sec > 0 {
			s.metrics.rate.Set(float64(int64(j.images)*int64(len(pop.Genomes))) / sec)
		}
	}
	return all, wall, err
}

// refit gives a scored result the request's fitness, from its metrics, as
// the evaluator would have computed it with that fitness.
func refit(r *evaluator.Result, fit evaluator.FitnessFunc) {
	if r.Err != nil {
		return
	}
	r.Fitness = fit(evaluator.Metrics{Accuracy: r.Accuracy, Loss: r.Loss, Images: r.Images, Params: r.Params, FLOPs: r.FLOPs})
}

// endStream writes the last line: the summary, or the error that ended
// the evaluation; nothing when the client went away.
func (s *Server) endStream(w http.ResponseWriter, rec *record, r *http.Request, err error, all []results.Result, wall time.Duration) {
	switch {
	case err != nil && r.Context().Err() != nil && !errors.Is(err, errShuttingDown):
		rec.cancelled = true
		s.metrics.evaluations.WithLabelValues("cancelled").Inc()
		return
	case err != nil:
		outcome := "failed"
		if errors.Is(err, errShuttingDown) {
			outcome = "cancelled"
		}
		s.metrics.evaluations.WithLabelValues(outcome).Inc()
		writeJSONLine(w, errorBody{Error: err.Error()})
		return
	}
	sum := run.Summarize(all, nil, wall)
	rec.evaluated, rec.genomes, rec.failed = true, sum.Genomes, sum.Failed
	s.metrics.evaluations.WithLabelValues("ok").Inc()
	writeJSONLine(w, summaryLine{Summary: newSummary(sum)})
}
