package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Queue is how items are handed out: what the shared consumer of every
// worker is made with.
type Queue struct {
	// AckWait is how long an item may go without an ack or a progress
	// signal before the broker hands it to another worker (default 30s;
	// workers signal progress every AckWait/3).
	AckWait time.Duration
	// MaxDeliver is how many times an item is handed out before its genomes
	// get error results (default 5).
	MaxDeliver int
	// Memory keeps the streams in memory instead of the broker's file
	// store (they do not survive a broker restart).
	Memory bool
}

func (q *Queue) defaults() {
	if q.AckWait <= 0 {
		q.AckWait = 30 * time.Second
	}
	if q.MaxDeliver <= 0 {
		q.MaxDeliver = 5
	}
}

// resultsMaxAge is how long delivered results stay on the broker for a
// coordinator to resume from.
const resultsMaxAge = 24 * time.Hour

// setup creates (or finds) the streams, the workers' consumer and the
// weights bucket.
func setup(ctx context.Context, js jetstream.JetStream, q Queue) (jetstream.Consumer, jetstream.ObjectStore, error) {
	q.defaults()
	storage := jetstream.FileStorage
	if q.Memory {
		storage = jetstream.MemoryStorage
	}
	err := settle(ctx, func() error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: ItemsStream, Subjects: []string{ItemsPrefix + ">"},
			Retention: jetstream.WorkQueuePolicy, Storage: storage, Duplicates: 2 * time.Minute,
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("stream %s: %w", ItemsStream, err)
	}
	err = settle(ctx, func() error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: ResultsStream, Subjects: []string{ResultsPrefix + ">"},
			Retention: jetstream.LimitsPolicy, Storage: storage, MaxAge: resultsMaxAge, Duplicates: 2 * time.Minute,
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("stream %s: %w", ResultsStream, err)
	}
	var cons jetstream.Consumer
	err = settle(ctx, func() (err error) {
		cons, err = js.CreateOrUpdateConsumer(ctx, ItemsStream, jetstream.ConsumerConfig{
			Durable: WorkersName, AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: q.AckWait, MaxDeliver: q.MaxDeliver, MaxAckPending: -1,
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("consumer %s: %w", WorkersName, err)
	}
	var obs jetstream.ObjectStore
	err = settle(ctx, func() (err error) {
		obs, err = js.ObjectStore(ctx, WeightsBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: WeightsBucket, Storage: storage, TTL: resultsMaxAge})
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("object store %s: %w", WeightsBucket, err)
	}
	return cons, obs, nil
}

// settleTries is how many times settle calls its function.
const settleTries = 5

// settle calls do until it succeeds, settleTries times at most, a
// little longer apart each time. On a fresh server in operator mode, a
// worker and a coordinator that connect and make the streams at once,
// while the server registers their account, can be refused ("error
// creating store for stream"); tried again, each finds the streams.
func settle(ctx context.Context, do func() error) error {
	err := do()
	for try := 1; err != nil && try < settleTries && ctx.Err() == nil; try++ {
		sleep(ctx, time.Duration(try)*50*time.Millisecond)
		err = do()
	}
	return err
}
