package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/neateval/neateval/evaluator"
)

// session is one Score: the items out and the results in.
type session struct {
	c         *Coordinator
	job       Job
	onChunk   func([]evaluator.Result) error
	want      map[int]bool // pending indexes not yet resulted
	items     map[string]*Item
	bySeq     map[uint64]*Item
	causes    map[string]string // item id → the last cause a worker gave
	workers   map[string]bool
	stats     Stats
	lastHeard atomic.Int64 // unix nanoseconds: the last sign of a worker
	compiled  *evaluator.Compiled
}

// Score scores the job's pending genomes on the workers, calling onChunk
// with each batch of results (population indexes) as they come. Results a
// previous coordinator of the same run left on the broker are taken first;
// only the genomes still missing are published.
func (c *Coordinator) Score(ctx context.Context, job Job, onChunk func([]evaluator.Result) error) (Stats, error) {
	s := &session{c: c, job: job, onChunk: onChunk, want: map[int]bool{}, items: map[string]*Item{},
		bySeq: map[uint64]*Item{}, causes: map[string]string{}, workers: map[string]bool{}}
	s.heard()
	if job.Pending == nil {
		for i := range job.Pop.Genomes {
			s.want[i] = true
		}
	}
	for _, i := range job.Pending {
		s.want[i] = true
	}
	if len(s.want) == 0 {
		return s.stats, nil
	}
	err := s.run(ctx)
	s.stats.Workers = len(s.workers)
	return s.stats, err
}

// channels are the session's subscriptions.
type channels struct {
	results chan jetstream.Msg
	adv     chan *nats.Msg
	notes   chan *nats.Msg
	stop    func()
}

func (s *session) run(ctx context.Context) error {
	c, tok := s.c, runToken(s.job.Run)
	_, obs, err := setup(ctx, c.js, c.o.Queue)
	if err != nil {
		return err
	}
	ch, err := s.subscribe(ctx, tok)
	if err != nil {
		return err
	}
	defer ch.stop()
	if err := s.recover(ctx, ch, tok); err != nil {
		return err
	}
	s.compiled = evaluator.Compile(s.job.Pop) // once: for the invalid genomes and the items' costs
	if err := s.resolveInvalid(); err != nil {
		return err
	}
	if len(s.want) > 0 {
		if err := s.publish(ctx, obs, tok); err != nil {
			return err
		}
	}
	if err := s.collect(ctx, ch); err != nil {
		return err
	}
	s.cleanup(tok)
	return nil
}

func (s *session) subscribe(ctx context.Context, tok string) (*channels, error) {
	c := s.c
	ch := &channels{results: make(chan jetstream.Msg, 256), adv: make(chan *nats.Msg, 64),
		notes: make(chan *nats.Msg, 1024)}
	oc, err := c.js.OrderedConsumer(ctx, ResultsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{ResultsPrefix + tok}})
	if err != nil {
		return nil, fmt.Errorf("results consumer: %w", err)
	}
	done := make(chan struct{})
	cc, err := oc.Consume(func(m jetstream.Msg) {
		select {
		case ch.results <- m:
		case <-done:
		}
	})
	if err != nil {
		return nil, fmt.Errorf("results consumer: %w", err)
	}
	var subs []*nats.Subscription
	for subj, c2 := range map[string]chan *nats.Msg{maxDeliveries: ch.adv, NotesPrefix + tok: ch.notes} {
		sub, err := c.nc.ChanSubscribe(subj, c2)
		if err != nil {
			cc.Stop()
			return nil, fmt.Errorf("subscribe %s: %w", subj, err)
		}
		sub.SetPendingLimits(-1, -1)
		subs = append(subs, sub)
	}
	// Heartbeats only move the time a worker was last heard from: a
	// callback, never a backlog (64 workers beat 64 times a second while
	// the session is busy publishing).
	sub, err := c.nc.Subscribe(HeartbeatTopic, func(m *nats.Msg) {
		var hb Heartbeat
		if json.Unmarshal(m.Data, &hb) == nil {
			s.heard()
		}
	})
	if err != nil {
		cc.Stop()
		for _, sub := range subs {
			sub.Unsubscribe()
		}
		return nil, fmt.Errorf("subscribe %s: %w", HeartbeatTopic, err)
	}
	subs = append(subs, sub)
	ch.stop = func() {
		close(done)
		cc.Stop()
		for _, sub := range subs {
			sub.Unsubscribe()
		}
	}
	return ch, nil
}

// recover takes the results already on the broker for this run.
func (s *session) recover(ctx context.Context, ch *channels, tok string) error {
	st, err := s.c.js.Stream(ctx, ResultsStream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", ResultsStream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(ResultsPrefix+tok))
	if err != nil {
		return fmt.Errorf("stream %s: %w", ResultsStream, err)
	}
	n := int(info.State.Subjects[ResultsPrefix+tok])
	before := len(s.want)
	for k := 0; k < n; k++ {
		select {
		case m := <-ch.results:
			if err := s.take(m, true); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
			return fmt.Errorf("stream %s: %d of %d earlier results read in 30s", ResultsStream, k, n)
		}
	}
	if n > 0 {
		s.stats.Recovered = before - len(s.want)
		s.c.log.Info().Str(KeyEvent, EventResultsRecovered).Str(KeyRun, s.job.Run).Int(KeyGenomes, s.stats.Recovered).
			Msgf("%d results taken from the broker, delivered before this coordinator started", s.stats.Recovered)
	}
	return nil
}

// publish purges the run's items left by an earlier coordinator and
// publishes the missing genomes as new items.
func (s *session) publish(ctx context.Context, obs jetstream.ObjectStore, tok string) error {
	c := s.c
	st, err := c.js.Stream(ctx, ItemsStream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", ItemsStream, err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(ItemsPrefix+tok)); err != nil {
		return fmt.Errorf("stream %s: %w", ItemsStream, err)
	}
	var pending []int
	for i := range s.job.Pop.Genomes {
		if s.want[i] {
			pending = append(pending, i)
		}
	}
	session := nuid.Next()
	start, chunk := time.Now(), chunkSize(c.nc.MaxPayload())
	var stored int
	per := c.o.ItemGenomes
	if c.o.MinItems > 1 {
		per = max(1, min(per, len(pending)/c.o.MinItems))
	}
	for k, idx := range Split(s.compiled.Graphs, pending, per, c.o.ItemBytes) {
		id := tok + "." + session + "." + strconv.Itoa(k)
		it := &Item{Identity: c.o.Identity, Run: s.job.Run, ID: id, Population: id, Indexes: idx, Sample: s.job.Sample}
		n, err := storeItem(ctx, obs, s.job.Pop, idx, it.Population, chunk)
		if err != nil {
			return err
		}
		stored += n
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		ack, err := c.js.Publish(ctx, ItemsPrefix+tok, b, jetstream.WithMsgID(it.ID))
		if err != nil {
			return fmt.Errorf("publish item: %w", err)
		}
		s.items[it.ID], s.bySeq[ack.Sequence] = it, it
	}
	s.stats.Items = len(s.items)
	s.stats.WeightBytes = int64(stored)
	c.log.Info().Str(KeyEvent, EventItemsPublished).Str(KeyRun, s.job.Run).Int(KeyItems, len(s.items)).
		Int(KeyGenomes, len(pending)).Int(KeyBytes, stored).Float64(KeySeconds, time.Since(start).Seconds()).
		Msgf("%d items of %d genomes published", len(s.items), len(pending))
	return nil
}

// resolveInvalid gives the wanted genomes that do not compile their error
// results here, as the evaluator would: they are not shipped (the format
// cannot carry a genome the loader found broken).
func (s *session) resolveInvalid() error {
	pop := s.job.Pop
	var out []evaluator.Result
	for i, g := range pop.Genomes {
		if !s.want[i] {
			continue
		}
		if err := s.compiled.Errs[i]; err != nil {
			delete(s.want, i)
			nan := math.NaN()
			out = append(out, evaluator.Result{Index: i, GenomeID: g.ID, Fitness: nan, Accuracy: nan, Loss: nan, Err: err})
		}
	}
	return s.emit(out)
}

// collect waits for every wanted genome's result.
func (s *session) collect(ctx context.Context, ch *channels) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for len(s.want) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-ch.results:
			if err := s.take(m, false); err != nil {
				return err
			}
		case m := <-ch.adv:
			if err := s.abandoned(m); err != nil {
				return err
			}
		case m := <-ch.notes:
			s.note(m)
		case <-tick.C:
			if w := time.Since(time.Unix(0, s.lastHeard.Load())); w > s.c.o.WorkerTimeout {
				return &NoWorkersError{Waited: w, Pending: len(s.want)}
			}
		}
	}
	return nil
}

// take handles a results message: its lines for wanted genomes, or its
// item's failure.
func (s *session) take(m jetstream.Msg, recovering bool) error {
	h := m.Headers()
	id := h.Get(HeaderItem)
	if cause := h.Get(HeaderFailed); cause != "" {
		return s.failItem(id, cause)
	}
	lines, err := ParseResults(m.Data(), len(s.job.Pop.Genomes))
	if err != nil {
		s.c.log.Warn().Str(KeyEvent, EventBrokerError).Str(KeyItem, id).Err(err).Msg("results message dropped")
		return nil
	}
	var out []evaluator.Result
	for _, r := range lines {
		if s.want[r.Index] {
			delete(s.want, r.Index)
			out = append(out, EvaluatorResult(r))
		}
	}
	if len(out) == 0 {
		return nil
	}
	if !recovering {
		s.workers[h.Get(HeaderWorker)] = true
		if d, err := strconv.Atoi(h.Get(HeaderDeliveries)); err == nil && d > 1 {
			s.stats.Redeliveries += d - 1
		}
	}
	s.heard()
	return s.emit(out)
}

// heard notes a sign of life from a worker.
func (s *session) heard() { s.lastHeard.Store(time.Now().UnixNano()) }

func (s *session) emit(rs []evaluator.Result) error {
	if s.onChunk == nil || len(rs) == 0 {
		return nil
	}
	return s.onChunk(rs)
}

// failItem gives the item's genomes still wanted error results.
func (s *session) failItem(id, cause string) error {
	it := s.items[id]
	if it == nil {
		return nil // an earlier coordinator's: its genomes are published again
	}
	var out []evaluator.Result
	for _, i := range it.Indexes {
		if s.want[i] {
			delete(s.want, i)
			msg := fmt.Sprintf("genome %d: item %s failed on every delivery: %s", s.job.Pop.Genomes[i].ID, id, cause)
			out = append(out, EvaluatorResult(errorLine(s.job.Pop.Genomes[i].ID, i, msg)))
		}
	}
	if len(out) > 0 {
		s.c.log.Error().Str(KeyEvent, EventItemAbandoned).Str(KeyItem, id).Int(KeyGenomes, len(out)).
			Str(KeyCause, cause).Msgf("item %s abandoned: %s", id, cause)
	}
	return s.emit(out)
}

// abandoned handles the broker's advisory that an item reached MaxDeliver.
func (s *session) abandoned(m *nats.Msg) error {
	var adv struct {
		Stream     string `json:"stream"`
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries uint64 `json:"deliveries"`
	}
	if json.Unmarshal(m.Data, &adv) != nil || adv.Stream != ItemsStream {
		return nil
	}
	it := s.bySeq[adv.StreamSeq]
	if it == nil {
		return nil
	}
	cause := fmt.Sprintf("delivered %d times, no worker finished it (each died or ran past ack_wait)", adv.Deliveries)
	if last := s.causes[it.ID]; last != "" {
		cause += "; last cause: " + last
	}
	return s.failItem(it.ID, cause)
}

func (s *session) note(m *nats.Msg) {
	var n Note
	if json.Unmarshal(m.Data, &n) != nil {
		return
	}
	s.causes[n.Item] = n.Cause
	s.heard()
	ev := EventItemFailed
	if n.Refused {
		ev = EventItemRefused
	}
	s.c.log.Warn().Str(KeyEvent, ev).Str(KeyWorker, n.Worker).Str(KeyItem, n.Item).
		Int(KeyDeliveries, n.Deliveries).Str(KeyCause, n.Cause).Msg(n.Cause)
}

// cleanup removes the finished run's items and results from the broker.
func (s *session) cleanup(tok string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for stream, subj := range map[string]string{ItemsStream: ItemsPrefix + tok, ResultsStream: ResultsPrefix + tok} {
		if st, err := s.c.js.Stream(ctx, stream); err == nil {
			if err := st.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil && !errors.Is(err, context.Canceled) {
				s.c.log.Warn().Str(KeyEvent, EventBrokerError).Err(err).Msgf("purge %s", subj)
			}
		}
	}
}
