package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

// evolveOptions are the flags of `neateval evolve` that set no config key.
type evolveOptions struct {
	ConfigPath string
	Resume     bool
}

func newEvolveFlags(o *evolveOptions) (*flag.FlagSet, *config.Overrides) {
	fs := flag.NewFlagSet("evolve", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run in evolve.checkpoint_dir from its last finished generation (it must have been made with the same [evolve] keys, data set and fitness); without a checkpoint, start one")
	ov := config.NewOverrides(fs)
	ov.Bind("generations", "evolve.generations", "generations to run in all, `N` (evolve.generations)")
	bindClusterFlags(ov)
	bindLogFlags(ov)
	return fs, ov
}

// cmdEvolve is `neateval evolve`: flags, run.Evolve, and the best genome's
// line on stdout.
func cmdEvolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o evolveOptions
	fs, ov := newEvolveFlags(&o)
	if err := parseFlags(fs, args, stdout, evolveUsage); err != nil {
		return err
	}
	cfg, err := ov.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	log := run.NewLogger(cfg.Output.LogFormat, cfg.Output.LogLevel, stderr)
	r, err := run.Evolve(ctx, run.EvolveSpec{Config: cfg, ConfigName: o.ConfigPath, Resume: o.Resume, Logger: &log, Remote: remoteFor(cfg)})
	if err != nil {
		return err
	}
	vr, tr := r.Validation, r.Test
	_, err = fmt.Fprintf(stdout, "best genome %d (generation %d of %d): fitness %.4f, validation accuracy %.4f, test accuracy %.4f on %d images, %d params, %d FLOPs/image; written to %s\n",
		r.Best.ID, r.Generation, r.Generations, r.Fitness, vr.Accuracy, tr.Accuracy, tr.Images, tr.Params, tr.FLOPs, r.BestFile)
	return err
}
