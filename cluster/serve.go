package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/run"
)

// ErrNoURL is RunWorker's refusal when cluster.nats_url is empty.
var ErrNoURL = errors.New("cluster.nats_url is empty: a worker needs a NATS server")

// WorkerSpec is what RunWorker runs.
type WorkerSpec struct {
	Name string // tells the worker apart ("": host-pid)
	// Evolve: the worker scores `neateval evolve` runs of its config, on
	// the [evolve] validation set (run.EvolveData), not on [dataset]'s.
	Evolve bool
}

// RunWorker is `neateval worker`: it connects to cluster.nats_url, opens
// the data set and the backend cfg names, and takes items until ctx is
// done.
func RunWorker(ctx context.Context, cfg *config.Config, spec WorkerSpec, log *zerolog.Logger) error {
	if cfg.Cluster.NATSURL == "" {
		return ErrNoURL
	}
	var ds *datasets.Dataset
	var err error
	if spec.Evolve {
		ds, _, err = run.EvolveData(cfg)
	} else {
		ds, err = run.OpenDataset(cfg, log)
	}
	if err != nil {
		return err
	}
	l, err := OpenLocal(cfg, ds, log)
	if err != nil {
		return err
	}
	defer l.Close()
	nc, err := Connect(cfg.Cluster.NATSURL, "neateval worker "+spec.Name, &cfg.Cluster)
	if err != nil {
		return err
	}
	defer nc.Close()
	o := l.Options()
	o.Name, o.Queue, o.Logger = spec.Name, QueueOf(&cfg.Cluster, false), log
	w, err := NewWorker(nc, o)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

// ServeBroker is `neateval broker`: an embedded NATS server with JetStream
// and a file store, until ctx is done. The token, when o has none, is read
// from $NEATEVAL_NATS_TOKEN.
func ServeBroker(ctx context.Context, o BrokerOptions, log *zerolog.Logger) error {
	if o.Token == "" {
		o.Token = strings.TrimSpace(os.Getenv(TokenEnv))
	}
	b, err := StartBroker(o)
	if err != nil {
		return err
	}
	defer b.Shutdown()
	log.Info().Str(KeyEvent, EventBrokerStarted).Str(KeyURL, b.ClientURL()).Str(KeyStore, o.StoreDir).
		Msgf("broker listening on %s (JetStream store %s)", b.ClientURL(), o.StoreDir)
	<-ctx.Done()
	return nil
}

// ReadToken is the token in file path, trimmed.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
