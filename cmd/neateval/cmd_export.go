package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/onnxexport"
	"github.com/neateval/neateval/run"
)

const exportUsage = `Usage: neateval export (--population FILE (--genome ID | --all) | --evolve-dir DIR) --out FILE|DIR

Writes genomes as ONNX models (opset 17): input "input" [N, C, H, W] of
images as neateval feeds them (x/255), output "logits" [N, classes].
  --genome ID      one genome of the population, to the .onnx FILE --out
  --all            every genome, to the folder --out: genome-ID.onnx each and
                   manifest.json listing them (bench/ort_ref.js reads it);
                   a genome that is invalid is listed with its error
  --evolve-dir DIR the best genome of the evolve run checkpointed in DIR,
                   to the .onnx FILE --out (for evolve.best, a population
                   file, use --population best.json --all)
`

// exportOptions are the flags of `neateval export`.
type exportOptions struct {
	Population string
	Genome     int64
	All        bool
	EvolveDir  string
	Out        string
	genomeSet  bool
}

func newExportFlags(o *exportOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.StringVar(&o.Population, "population", "", "population JSON `FILE` to export from")
	fs.Func("genome", "export the genome with this `ID`", func(s string) error {
		_, err := fmt.Sscan(s, &o.Genome)
		o.genomeSet = err == nil
		return err
	})
	fs.BoolVar(&o.All, "all", false, "export every genome, into the folder --out")
	fs.StringVar(&o.EvolveDir, "evolve-dir", "", "export the best genome of the evolve checkpoint in `DIR`")
	fs.StringVar(&o.Out, "out", "", "the .onnx `FILE` (one genome) or folder (--all) to write")
	return fs
}

// cmdExport parses the flags of `neateval export` and runs it.
func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o exportOptions
	if err := parseFlags(newExportFlags(&o), args, stdout, exportUsage); err != nil {
		return err
	}
	return runExport(ctx, o, stdout)
}

// runExport is `neateval export` once its flags are parsed.
func runExport(ctx context.Context, o exportOptions, stdout io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	opts := onnxexport.Options{ProducerVersion: run.Version()}
	if o.EvolveDir != "" {
		pop, err := onnxexport.Best(o.EvolveDir)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return exportOne(pop, pop.Genomes[0], o.Out, opts, stdout)
	}
	pop, err := neat.Load(o.Population)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.All {
		m, err := onnxexport.WritePopulation(o.Out, pop, opts)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		bad := 0
		for _, e := range m.Genomes {
			if e.Error != nil {
				bad++
				fmt.Fprintf(stdout, "not exported: %s\n", *e.Error)
			}
		}
		fmt.Fprintf(stdout, "wrote %d of %d genomes to %s (see %s)\n", len(m.Genomes)-bad, len(m.Genomes), o.Out,
			filepath.Join(o.Out, onnxexport.ManifestName))
		if bad > 0 {
			return &run.GenomeErrors{Failed: bad, Total: len(m.Genomes), Results: filepath.Join(o.Out, onnxexport.ManifestName)}
		}
		return nil
	}
	for _, g := range pop.Genomes {
		if g.ID == o.Genome {
			return exportOne(pop, g, o.Out, opts, stdout)
		}
	}
	return usagef("export: --genome %d: %s has no such genome", o.Genome, o.Population)
}

func (o *exportOptions) check() error {
	switch {
	case o.Out == "":
		return usagef("export: --out is required (a .onnx file, or a folder with --all)")
	case o.EvolveDir != "" && (o.Population != "" || o.All || o.genomeSet):
		return usagef("export: --evolve-dir exports the run's best genome; it takes none of --population, --genome, --all")
	case o.EvolveDir != "":
	case o.Population == "":
		return usagef("export: --population FILE or --evolve-dir DIR is required")
	case o.All == o.genomeSet:
		return usagef("export: give exactly one of --genome ID and --all")
	}
	if !o.All && !strings.HasSuffix(o.Out, ".onnx") {
		return usagef("export: --out %q: must end in .onnx", o.Out)
	}
	return nil
}

// exportOne writes genome g of pop to the .onnx file out.
func exportOne(pop *neat.Population, g *neat.Genome, out string, opts onnxexport.Options, stdout io.Writer) error {
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := onnxexport.WriteFile(out, g, pop, opts); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err := fmt.Fprintf(stdout, "wrote genome %d to %s\n", g.ID, out)
	return err
}
