package cluster

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neateval/neateval/neat"
)

// popCacheSize is how many populations a worker keeps parsed: the current
// generation's and the one before.
const popCacheSize = 2

// popCache is a worker's parsed populations, fetched from the object store
// once each.
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
	js, err := c.obs.GetBytes(ctx, key+jsonSuffix)
	if err != nil {
		return nil, fmt.Errorf("population %s: %w", key, err)
	}
	wb, err := c.obs.GetBytes(ctx, key+weightsSuffix)
	if err != nil {
		return nil, fmt.Errorf("population %s: %w", key, err)
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
