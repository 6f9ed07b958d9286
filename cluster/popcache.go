package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neateval/neateval/neat"
)

// popCacheSize is how many items' genomes a worker keeps parsed (an item
// redelivered to the same worker is not fetched again).
const popCacheSize = 2

// popCache is a worker's parsed item genomes, fetched from the object
// store once each.
type popCache struct {
	obs   jetstream.ObjectStore
	mu    sync.Mutex
	keys  []string
	byKey map[string]*neat.Population
}

// get returns the population stored under key.
func (c *popCache) get(ctx context.Context, key string) (*neat.Population, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byKey[key]; ok {
		return p, nil
	}
	js, err := c.fetch(ctx, key+jsonSuffix)
	if err != nil {
		return nil, err
	}
	wb, err := c.fetch(ctx, key+weightsSuffix)
	if err != nil {
		return nil, err
	}
	p, _, err := neat.Parse(js, wb, key+jsonSuffix, key+weightsSuffix)
	if err != nil {
		return nil, err
	}
	if c.byKey == nil {
		c.byKey = map[string]*neat.Population{}
	}
	if len(c.keys) == popCacheSize {
		delete(c.byKey, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.keys = append(c.keys, key)
	c.byKey[key] = p
	return p, nil
}

// The object names of a population's two files.
const (
	jsonSuffix    = ".json"
	weightsSuffix = ".safetensors"
)

// fetchAttempts is how many times a worker tries to fetch a population's
// file before the item fails: many workers starting at once can make the
// broker time some of them out.
const fetchAttempts = 6

// fetch reads an object, tried again after 250 ms, 500 ms, ... on error.
func (c *popCache) fetch(ctx context.Context, name string) ([]byte, error) {
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		b, err := c.obs.GetBytes(ctx, name)
		if err == nil || try == fetchAttempts || ctx.Err() != nil || errors.Is(err, jetstream.ErrObjectNotFound) {
			if err != nil {
				return nil, fmt.Errorf("population file %s: %w", name, err)
			}
			return b, nil
		}
		sleep(ctx, wait)
		wait *= 2
	}
}
