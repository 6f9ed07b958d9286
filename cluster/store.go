package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
)

// storePopulation puts the job's population files in the object store
// under its digest, unless they are there already.
func storePopulation(ctx context.Context, obs jetstream.ObjectStore, job Job, log *zerolog.Logger) error {
	key := popKey(job.Digest)
	if _, err := obs.GetInfo(ctx, key+weightsSuffix); err == nil {
		if _, err := obs.GetInfo(ctx, key+jsonSuffix); err == nil {
			return nil
		}
	}
	js, wb, err := populationBytes(job.Pop)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := obs.PutBytes(ctx, key+weightsSuffix, wb); err != nil {
		return fmt.Errorf("store population %s: %w", key, err)
	}
	if _, err := obs.PutBytes(ctx, key+jsonSuffix, js); err != nil {
		return fmt.Errorf("store population %s: %w", key, err)
	}
	sec := time.Since(start).Seconds()
	log.Info().Str(KeyEvent, EventWeightsStored).Str(KeyPopulation, key).Int(KeyBytes, len(js)+len(wb)).
		Float64(KeySeconds, sec).Msgf("population %s stored: %d bytes", key, len(js)+len(wb))
	return nil
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
