package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
)

// genOptions are the flags of `neateval gen`.
type genOptions struct {
	Out     string
	Size    int
	Seed    int64
	Preset  string
	Input   string // "CxHxW"
	Classes int
}

func newGenFlags(o *genOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.StringVar(&o.Out, "out", "", "population JSON `FILE` to write (required); the weights go beside it, FILE without .json + .safetensors")
	fs.IntVar(&o.Size, "size", 64, "number of genomes, `N`")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed, `S`: the same seed gives the same population")
	fs.StringVar(&o.Preset, "preset", "small", "generator preset, `P`: small or wide")
	fs.StringVar(&o.Input, "input", "1x28x28", "input image shape, `CxHxW` (MNIST 1x28x28, CIFAR-10 3x32x32)")
	fs.IntVar(&o.Classes, "classes", 10, "number of classes, `K`")
	return fs
}

// cmdGen parses the flags of `neateval gen` and runs it.
func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o genOptions
	if err := parseFlags(newGenFlags(&o), args, stdout, genUsage); err != nil {
		return err
	}
	return runGen(ctx, o, stdout)
}

// runGen is `neateval gen` once its flags are parsed.
func runGen(ctx context.Context, o genOptions, stdout io.Writer) error {
	if o.Out == "" {
		return usagef("gen: --out is required (the population JSON to write, e.g. pop/pop.json)")
	}
	if !strings.HasSuffix(o.Out, ".json") {
		return usagef("gen: --out %q: must end in .json", o.Out)
	}
	in, err := parseInput(o.Input)
	if err != nil {
		return usagef("gen: --input %q: %v", o.Input, err)
	}
	if o.Classes < 1 {
		return usagef("gen: --classes %d: must be ≥ 1", o.Classes)
	}
	if o.Size < 1 {
		return usagef("gen: --size %d: must be ≥ 1", o.Size)
	}
	pc := config.PopulationConfig{GenerateSize: o.Size, GenerateSeed: o.Seed, GeneratePreset: o.Preset}
	pop, err := pc.Generate(in, o.Classes)
	if err != nil {
		return usagef("gen: --preset: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	weights := strings.TrimSuffix(filepath.Base(o.Out), ".json") + ".safetensors"
	if err := neat.Save(pop, o.Out, weights); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "wrote %d genomes (%s preset, seed %d, input %dx%dx%d, %d classes) to %s and %s\n",
		len(pop.Genomes), o.Preset, o.Seed, in.Channels, in.Height, in.Width, o.Classes,
		o.Out, filepath.Join(filepath.Dir(o.Out), weights))
	return err
}

// parseInput reads an image shape written "CxHxW", e.g. "1x28x28".
func parseInput(s string) (neat.Input, error) {
	parts := strings.Split(s, "x")
	if len(parts) != 3 {
		return neat.Input{}, fmt.Errorf("want CxHxW, e.g. 1x28x28")
	}
	var d [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 4096 {
			return neat.Input{}, fmt.Errorf("want CxHxW with each a whole number from 1 to 4096, e.g. 1x28x28")
		}
		d[i] = n
	}
	return neat.Input{Channels: d[0], Height: d[1], Width: d[2]}, nil
}
