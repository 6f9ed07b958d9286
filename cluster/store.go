package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
)

// storeItem puts the two files of the sub-population of pop at indexes
// (genomes in that order) in the object store under key, and returns
// their size.
func storeItem(ctx context.Context, obs jetstream.ObjectStore, pop *neat.Population, indexes []int, key string, chunk uint32) (int, error) {
	sub := &neat.Population{Input: pop.Input, NumClasses: pop.NumClasses}
	for _, i := range indexes {
		sub.Genomes = append(sub.Genomes, pop.Genomes[i])
	}
	js, wb, err := populationBytes(sub)
	if err != nil {
		return 0, err
	}
	for name, data := range map[string][]byte{key + weightsSuffix: wb, key + jsonSuffix: js} {
		meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}
		if _, err := obs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
			return 0, fmt.Errorf("store item %s: %w", key, err)
		}
	}
	return len(js) + len(wb), nil
}

// chunkSize is the object store chunk for a connection: 1 MiB (the default
// 128 KiB makes many workers fetching at once stall), less on a server
// whose max_payload is smaller.
func chunkSize(maxPayload int64) uint32 {
	return uint32(min(1<<20, max(maxPayload/2, 64<<10)))
}

// populationBytes is the two files neat.Save writes for pop.
func populationBytes(pop *neat.Population) (js, weights []byte, err error) {
	dir, err := os.MkdirTemp("", "neateval-pop-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	jp := filepath.Join(dir, "population.json")
	if err := neat.Save(pop, jp, "weights.safetensors"); err != nil {
		return nil, nil, err
	}
	if js, err = os.ReadFile(jp); err != nil {
		return nil, nil, err
	}
	weights, err = os.ReadFile(filepath.Join(dir, "weights.safetensors"))
	return js, weights, err
}

// errorLine is a genome's error result.
func errorLine(id int64, idx int, msg string) results.Result {
	return results.Result{GenomeID: id, Index: idx, Error: &msg}
}
