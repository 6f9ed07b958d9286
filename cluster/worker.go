package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Name tells the worker apart in logs and results (default host-pid).
	Name string
	// Identity is what the worker scores with: items of another identity
	// are refused.
	Identity Identity
	// Scorer scores the item's genomes: an *evaluator.Evaluator on the
	// worker's device.
	Scorer evaluator.Scorer
	// Sampler, when set, makes the scorer of items that carry a Sample:
	// one on those images of the worker's data set (Local.Sample); done
	// releases it. Without one, the worker refuses such items.
	Sampler func(Sample) (s evaluator.Scorer, done func(), err error)
	// Queue makes the streams and the consumer if no coordinator made them
	// yet; a worker never changes existing ones.
	Queue Queue
	// Heartbeat is how often the worker says it is alive (default 1s).
	Heartbeat time.Duration
	// FetchWait is how long one pull waits for an item (default 1s).
	FetchWait time.Duration
	// Logger receives the worker's events (nil: none).
	Logger *zerolog.Logger
}

// Worker takes items from the broker, scores them and publishes their
// results: one per device.
type Worker struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	o     WorkerOptions
	log   *zerolog.Logger
	cache popCache
	done  atomic.Int64 // items finished
	// sampled is the scorer of the last sample items were scored on: the
	// items of one generation share it.
	sampled struct {
		key  Sample
		s    evaluator.Scorer
		done func()
	}
}

// NewWorker makes a worker on a connection.
func NewWorker(nc *nats.Conn, o WorkerOptions) (*Worker, error) {
	if o.Scorer == nil {
		return nil, errors.New("worker: no scorer")
	}
	if o.Name == "" {
		host, _ := os.Hostname()
		o.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.FetchWait <= 0 {
		o.FetchWait = time.Second
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	log := o.Logger
	if log == nil {
		nop := zerolog.Nop()
		log = &nop
	}
	return &Worker{nc: nc, js: js, o: o, log: log}, nil
}

// Name is the worker's name.
func (w *Worker) Name() string { return w.o.Name }

// Items is how many items the worker finished.
func (w *Worker) Items() int { return int(w.done.Load()) }

// Run takes and scores items until ctx is done; an item being scored then
// goes back to the queue at once.
func (w *Worker) Run(ctx context.Context) error {
	cons, obs, err := w.attach(ctx)
	if err != nil {
		return err
	}
	w.cache.obs = obs
	w.log.Info().Str(KeyEvent, EventWorkerStarted).Str(KeyWorker, w.o.Name).
		Str(KeyURL, redact(w.nc.ConnectedUrl())).Msgf("worker %s started", w.o.Name)
	go w.heartbeat(ctx)
	defer w.dropSampled()
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, w.o.FetchWait)
		msg, err := cons.Next(jetstream.FetchContext(fctx)) // returns at once when ctx is done
		cancel()
		if err != nil {
			if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) &&
				!errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				w.log.Warn().Str(KeyEvent, EventBrokerError).Str(KeyWorker, w.o.Name).Err(err).Msg("pull failed: retrying")
				sleep(ctx, 200*time.Millisecond)
			}
			continue
		}
		w.handle(ctx, msg, cons.CachedInfo().Config)
	}
	w.log.Info().Str(KeyEvent, EventWorkerStopped).Str(KeyWorker, w.o.Name).Int(KeyItems, w.Items()).
		Msgf("worker %s stopped after %d items", w.o.Name, w.Items())
	return nil
}

// attach finds the consumer and the weights bucket, making them when no
// coordinator did yet.
func (w *Worker) attach(ctx context.Context) (jetstream.Consumer, jetstream.ObjectStore, error) {
	cons, err := w.js.Consumer(ctx, ItemsStream, WorkersName)
	if err == nil {
		obs, oerr := w.js.ObjectStore(ctx, WeightsBucket)
		if oerr == nil {
			return cons, obs, nil
		}
	}
	return setup(ctx, w.js, w.o.Queue)
}

func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(w.o.Heartbeat)
	defer t.Stop()
	for {
		b, _ := json.Marshal(Heartbeat{Worker: w.o.Name, Time: time.Now().UTC()})
		w.nc.Publish(HeartbeatTopic, b)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// handle scores one item and acks it, or says why not.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg, cc jetstream.ConsumerConfig) {
	maxDeliver := cc.MaxDeliver
	deliveries := 1
	if md, err := msg.Metadata(); err == nil {
		deliveries = int(md.NumDelivered)
	}
	it, err := ParseItem(msg.Data())
	if err != nil {
		w.log.Error().Str(KeyEvent, EventItemFailed).Str(KeyWorker, w.o.Name).Err(err).Msg("unreadable item: dropped")
		msg.TermWithReason(err.Error())
		return
	}
	ev := w.log.Info().Str(KeyEvent, EventItemTaken)
	if deliveries > 1 {
		ev = w.log.Warn().Str(KeyEvent, EventItemRedelivered)
	}
	ev.Str(KeyWorker, w.o.Name).Str(KeyItem, it.ID).Int(KeyGenomes, len(it.Indexes)).Int(KeyDeliveries, deliveries).Msg("")
	why := w.o.Identity.Mismatch(it.Identity)
	if it.Sample != nil && w.o.Sampler == nil {
		why = "this worker scores whole data sets, not a " + it.Sample.String()
	}
	if why != "" {
		w.fail(ctx, msg, it, "refused by worker "+w.o.Name+": "+why, true, deliveries, maxDeliver)
		return
	}
	stop := keepAlive(msg, cc.AckWait/3)
	start := time.Now()
	lines, err := w.score(ctx, it)
	stop()
	switch {
	case ctx.Err() != nil:
		msg.Nak() // stopping: another worker takes it now
		return
	case err != nil:
		w.fail(ctx, msg, it, err.Error(), false, deliveries, maxDeliver)
		return
	}
	if err := w.publish(ctx, it, lines, deliveries, ""); err != nil {
		w.log.Warn().Str(KeyEvent, EventBrokerError).Str(KeyWorker, w.o.Name).Str(KeyItem, it.ID).Err(err).Msg("results not published: the item goes back")
		msg.Nak()
		return
	}
	msg.Ack()
	w.done.Add(1)
	w.log.Info().Str(KeyEvent, EventItemDone).Str(KeyWorker, w.o.Name).Str(KeyItem, it.ID).
		Int(KeyGenomes, len(lines)).Float64(KeySeconds, time.Since(start).Seconds()).Msg("")
}

// keepAlive tells the broker the item is in progress every period (a
// third of AckWait) until stop is called.
func keepAlive(msg jetstream.Msg, every time.Duration) (stop func()) {
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// score scores the item's genomes and returns their results-file lines.
func (w *Worker) score(ctx context.Context, it *Item) ([]results.Result, error) {
	sub, err := w.cache.get(ctx, it.Population)
	if err != nil {
		return nil, err
	}
	if len(sub.Genomes) != len(it.Indexes) {
		return nil, fmt.Errorf("item %s: %d genomes stored for %d indexes", it.ID, len(sub.Genomes), len(it.Indexes))
	}
	sc, err := w.scorer(it.Sample)
	if err != nil {
		return nil, err
	}
	rs, err := sc.Evaluate(ctx, sub, nil)
	if err != nil {
		return nil, err
	}
	lines := make([]results.Result, len(rs))
	for k, r := range rs {
		lines[k] = run.ResultLine(r, it.Indexes[r.Index])
	}
	return lines, nil
}

// scorer is what scores items on sample s (nil: the whole data set).
func (w *Worker) scorer(s *Sample) (evaluator.Scorer, error) {
	if s == nil {
		return w.o.Scorer, nil
	}
	if w.sampled.s != nil && w.sampled.key == *s {
		return w.sampled.s, nil
	}
	w.dropSampled()
	sc, done, err := w.o.Sampler(*s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	w.sampled.key, w.sampled.s, w.sampled.done = *s, sc, done
	return sc, nil
}

// dropSampled releases the scorer of the last sample.
func (w *Worker) dropSampled() {
	if w.sampled.done != nil {
		w.sampled.done()
	}
	w.sampled.s, w.sampled.done = nil, nil
}

// publish sends an item's results, or its final failure (cause), to the
// run's results subject, de-duplicated by the item's id.
func (w *Worker) publish(ctx context.Context, it *Item, lines []results.Result, deliveries int, cause string) error {
	body, err := encodeResults(lines)
	if err != nil {
		return err
	}
	m := nats.NewMsg(ResultsPrefix + runToken(it.Run))
	m.Data = body
	m.Header.Set(HeaderWorker, w.o.Name)
	m.Header.Set(HeaderItem, it.ID)
	m.Header.Set(HeaderDeliveries, strconv.Itoa(deliveries))
	if cause != "" {
		m.Header.Set(HeaderFailed, cause)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err = w.js.PublishMsg(pctx, m, jetstream.WithMsgID(it.ID))
	return err
}

// fail handles an item the worker could not score: on its last delivery
// the failure is published (the coordinator gives its genomes error lines)
// and the item ended; before, the coordinator is told and the item goes
// back to the queue.
func (w *Worker) fail(ctx context.Context, msg jetstream.Msg, it *Item, cause string, refused bool, deliveries, maxDeliver int) {
	event := EventItemFailed
	if refused {
		event = EventItemRefused
	}
	w.log.Warn().Str(KeyEvent, event).Str(KeyWorker, w.o.Name).Str(KeyItem, it.ID).
		Int(KeyDeliveries, deliveries).Str(KeyCause, cause).Msg(cause)
	if maxDeliver > 0 && deliveries >= maxDeliver {
		if err := w.publish(ctx, it, nil, deliveries, cause); err != nil {
			msg.Nak()
			return
		}
		msg.TermWithReason(cause)
		return
	}
	b, _ := json.Marshal(Note{Item: it.ID, Worker: w.o.Name, Cause: cause, Refused: refused, Deliveries: deliveries})
	w.nc.Publish(NotesPrefix+runToken(it.Run), b)
	delay := time.Duration(0)
	if refused {
		delay = 500 * time.Millisecond // leave it to a worker that fits
	}
	msg.NakWithDelay(delay)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Conn is the worker's connection.
func (w *Worker) Conn() *nats.Conn { return w.nc }
