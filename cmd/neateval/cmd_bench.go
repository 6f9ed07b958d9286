package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/neateval/neateval/bench/harness"
)

// benchFlags are the flags of `neateval bench`: the harness's options and
// where to write its JSON report.
type benchFlags struct {
	harness.Options
	JSON string
}

func newBenchFlags(o *benchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.Preset, "preset", "both", "population preset, `P`: small, wide, evolve (genomes of an evolve run, shipped), both (small and wide) or all")
	fs.IntVar(&o.Size, "size", 0, "genomes per population, `N` (0: 64 small, 16 wide, every shipped evolve genome)")
	fs.Int64Var(&o.Seed, "seed", 1, "generator seed, `S`")
	fs.IntVar(&o.Images, "images", 10000, "images to score each genome on, `N` (the MNIST test set has 10000)")
	fs.StringVar(&o.Dataset, "dataset", "mnist", "images, `D`: mnist (the real test set) or synthetic")
	fs.IntVar(&o.Batch, "batch", 0, "images per forward for both engines, `N` (0: neateval's eval_batch_size default, PyTorch 256)")
	fs.IntVar(&o.Parallel, "parallel", 0, "genomes scored at once by neateval, `P` (fitness_eval_parallel; 0: the default, 2 on two threads or more)")
	fs.IntVar(&o.Threads, "threads", 0, "CPU threads of each engine and of the ceiling, `T` (0: all cores)")
	fs.IntVar(&o.Repeat, "repeat", 1, "score each population `R` times with each engine, alternating, and keep each engine's fastest")
	fs.StringVar(&o.Torch, "torch", "auto", "compare with PyTorch (bench/torch_ref.py), `M`: auto (when python can import torch) or off")
	fs.StringVar(&o.Ceiling, "ceiling", "auto", "measure the fp32 ceiling (bench/ceiling.sh, OpenBLAS sgemm), `M`: auto (when cc and OpenBLAS are there) or off")
	fs.StringVar(&o.ORT, "ort", "auto", "compare with onnxruntime (bench/ort_ref.js, onnxruntime-node; see scripts/ort-deps.sh), `M`: auto (when node can load onnxruntime-node) or off")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to `FILE`")
	fs.StringVar(&o.Python, "python", "/usr/bin/python3", "the Python that runs torch_ref.py, `PATH`")
	fs.StringVar(&o.BenchDir, "bench-dir", "", "the repository's bench/ folder, `DIR` (default: found from the working directory or the binary)")
	return fs
}

// cmdBench is `neateval bench`: flags, harness.Run, the table.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchFlags
	if err := parseFlags(newBenchFlags(&o), args, stdout, benchUsage); err != nil {
		return err
	}
	rep, err := harness.Run(ctx, o.Options, stderr)
	if rep == nil {
		return err
	}
	rep.WriteTable(stdout)
	if o.JSON != "" {
		if jerr := rep.WriteJSON(o.JSON); jerr != nil {
			return fmt.Errorf("--json: %w", jerr)
		}
	}
	return err
}
