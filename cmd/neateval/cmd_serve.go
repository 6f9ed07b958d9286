package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/serve"
)

// serveOptions are the flags of `neateval serve` that set no config key.
type serveOptions struct {
	ConfigPath, TokenFile string
	Opts                  serve.Options
	MaxBody               config.ByteSize
	AllowDirs             stringList
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func newServeFlags(o *serveOptions) (*flag.FlagSet, *config.Overrides) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML): data set, backend, memory and eval keys; without it, the built-in defaults")
	fs.StringVar(&o.Opts.Addr, "addr", serve.DefaultAddr, "listen on `HOST:PORT` (port 0: a free one); not loopback: needs a token")
	fs.StringVar(&o.TokenFile, "token-file", "", "bearer token `FILE` (first line); else $"+serve.TokenEnv)
	fs.StringVar(&o.Opts.TLSCert, "tls-cert", "", "TLS certificate `FILE` (PEM); with --tls-key: HTTPS")
	fs.StringVar(&o.Opts.TLSKey, "tls-key", "", "TLS private key `FILE` (PEM)")
	fs.Var(&o.AllowDirs, "allow-dir", "`DIR` the path form may read populations from (repeatable)")
	o.MaxBody = serve.DefaultMaxBody
	fs.TextVar(&o.MaxBody, "max-body", o.MaxBody, "largest request body, `SIZE` (512MiB, bytes, ...)")
	fs.IntVar(&o.Opts.Queue, "queue", serve.DefaultQueue, "requests that may wait while one is scored, `N`")
	fs.DurationVar(&o.Opts.Grace, "grace", 0, "on SIGTERM, how long the running evaluation may go on finishing before it is cancelled (`D`, e.g. 30s)")
	ov := config.NewOverrides(fs)
	ov.Bind("dataset-kind", "dataset.kind", "dataset `KIND`: mnist, fashion-mnist, idx, cifar10 or synthetic (dataset.kind)")
	ov.Bind("dataset-path", "dataset.path", "`DIR` of the dataset files (dataset.path)")
	ov.Bind("limit", "dataset.limit", "default of the requests' limit: the first `N` images, 0 = all (dataset.limit)")
	ov.Bind("backend", "eval.backend", "`B`: cpu, cuda or auto (eval.backend)")
	ov.Bind("device", "eval.device", "GPU `N` a GPU backend opens: its CUDA device index (eval.device)")
	ov.Bind("eval-batch-size", "eval.eval_batch_size", "images per forward slice, `N` (eval.eval_batch_size)")
	ov.Bind("fitness-eval-parallel", "eval.fitness_eval_parallel", "forwards in flight at once, `N` (eval.fitness_eval_parallel)")
	bindClusterFlags(ov)
	bindLogFlags(ov)
	return fs, ov
}

// cmdServe is `neateval serve`: flags, then serve.New and ListenAndServe
// until SIGINT/SIGTERM.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o serveOptions
	fs, ov := newServeFlags(&o)
	if err := parseFlags(fs, args, stdout, serveUsage); err != nil {
		return err
	}
	cfg, err := ov.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	o.Opts.Token = os.Getenv(serve.TokenEnv)
	if o.TokenFile != "" {
		if o.Opts.Token, err = serve.ReadToken(o.TokenFile); err != nil {
			return err
		}
	}
	o.Opts.MaxBody, o.Opts.AllowDirs = int64(o.MaxBody), o.AllowDirs
	log := run.NewLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, stderr)
	o.Opts.Logger = &log
	if cfg.Cluster.Clustered() { // the service fronts a cluster: the same API
		o.Opts.NewScorer = func(ds *datasets.Dataset) (evaluator.Scorer, error) { return cluster.Open(cfg, ds, &log) }
	}
	s, err := serve.New(cfg, o.Opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.ListenAndServe(ctx)
}
