package main

import (
	"context"
	"flag"
	"io"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

// bindClusterFlags declares the flags of run and evolve that score on a
// cluster.
func bindClusterFlags(ov *config.Overrides) {
	ov.Bind("nats", "cluster.nats_url", "coordinate workers through the NATS server at `URL` (cluster.nats_url)")
	ov.Bind("workers", "cluster.workers", "score on `N` in-process workers through an embedded broker (cluster.workers)")
}

// remoteFor is what scores a run of cfg: a cluster, or nil (this process).
func remoteFor(cfg *config.Config) run.OpenRemote {
	if cfg.Cluster.Clustered() {
		return cluster.OpenRemote
	}
	return nil
}

// workerOptions are worker's flags that are not config keys.
type workerOptions struct {
	ConfigPath string
	Spec       cluster.WorkerSpec // --name, --evolve
}

// newWorkerFlags declares worker's flags: --config, --name, --evolve, and
// one flag per config key it overrides.
func newWorkerFlags(o *workerOptions) (*flag.FlagSet, *config.Overrides) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML): the data set, backend and [cluster] keys")
	fs.StringVar(&o.Spec.Name, "name", "", "worker `NAME` in logs and results (default host-pid)")
	fs.BoolVar(&o.Spec.Evolve, "evolve", false, "score `neateval evolve` runs of this config: on its [evolve] validation set")
	ov := config.NewOverrides(fs)
	ov.Bind("nats", "cluster.nats_url", "take items from the NATS server at `URL` (cluster.nats_url)")
	ov.Bind("dataset-kind", "dataset.kind", "dataset `KIND` (dataset.kind): the run's")
	ov.Bind("dataset-path", "dataset.path", "`DIR` of the dataset files (dataset.path)")
	ov.Bind("limit", "dataset.limit", "the first `N` images only, 0 = all (dataset.limit)")
	ov.Bind("backend", "eval.backend", "`B`: cpu, cuda or auto (eval.backend)")
	ov.Bind("device", "eval.device", "GPU `N` a GPU backend opens: its CUDA device index (eval.device)")
	ov.Bind("threads", "eval.threads", "CPU threads, `N` (eval.threads)")
	bindLogFlags(ov)
	return fs, ov
}

// cmdWorker is `neateval worker`: one worker (one device) of a cluster.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o workerOptions
	fs, ov := newWorkerFlags(&o)
	if err := parseFlags(fs, args, stdout, workerUsage); err != nil {
		return err
	}
	cfg, err := ov.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	log := run.NewLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, stderr)
	return cluster.RunWorker(ctx, cfg, o.Spec, &log)
}

// cmdBroker is `neateval broker`: a standalone NATS server with JetStream.
func cmdBroker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	var o cluster.BrokerOptions
	fs.StringVar(&o.Host, "listen", "127.0.0.1", "`HOST` to listen on; beyond loopback a token is required")
	fs.IntVar(&o.Port, "port", 4222, "`PORT` to listen on")
	fs.StringVar(&o.StoreDir, "store", "neateval-broker", "`DIR` of the JetStream file store")
	tokenFile := fs.String("token-file", "", "`FILE` holding the token clients must present (else $"+cluster.TokenEnv+")")
	if err := parseFlags(fs, args, stdout, brokerUsage); err != nil {
		return err
	}
	if *tokenFile != "" {
		tok, err := cluster.ReadToken(*tokenFile)
		if err != nil {
			return usagef("%v", err)
		}
		o.Token = tok
	}
	log := run.NewLogger("auto", "info", stderr)
	return cluster.ServeBroker(ctx, o, &log)
}

const workerUsage = `Usage: neateval worker --nats URL [--config FILE] [flags]

Takes work items from the NATS server at URL, scores them on this process's
device (backend, threads) and publishes their results, until stopped. Its data
set and fitness must be the run's: items of another run identity are refused.
With --evolve it serves "neateval evolve --nats URL" runs of the same config:
it scores on the [evolve] validation set, each generation's sample of it.
`

const brokerUsage = `Usage: neateval broker [--listen HOST] [--port PORT] [--store DIR] [--token-file FILE]

Runs a NATS server with JetStream and a file store, for clusters with no NATS
of their own. It listens on loopback unless --listen says otherwise, and then
requires a token (--token-file or $NEATEVAL_NATS_TOKEN).
`
