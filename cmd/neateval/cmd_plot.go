package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/plot"
)

// plotOptions are the arguments of `neateval plot`.
type plotOptions struct {
	Kind  string // fitness, timeline or results
	In    string
	Out   string
	Title string
}

const plotUsage = `Usage: neateval plot fitness|timeline|results --in FILE --out FILE.png [--title T]

Draws a picture of a run, 800 pixels wide, as PNG:

  fitness   the fitness curve of an evolve run: best and mean fitness and the
            number of species over the generations; --in is the run's
            checkpoint folder (evolve.checkpoint_dir) or its state.json
  timeline  the batch size and device memory over a run, out-of-memories
            marked; --in is the run's log: neateval run --log-format json
            2>run.log (add --log-level debug for each genome's final batch)
  results   accuracy against parameters and against FLOPs per image, one
            point per genome; --in is a results file (output.results)
`

func newPlotFlags(o *plotOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.StringVar(&o.In, "in", "", "input `FILE` (required): see above for each picture")
	fs.StringVar(&o.Out, "out", "", "PNG `FILE` to write (required)")
	fs.StringVar(&o.Title, "title", "", "title `T` of the picture; empty: one that says what it shows")
	return fs
}

// cmdPlot parses the arguments of `neateval plot` and runs it.
func cmdPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o plotOptions
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.Kind, args = args[0], args[1:]
	}
	if err := parseFlags(newPlotFlags(&o), args, stdout, plotUsage); err != nil {
		return err
	}
	return runPlot(ctx, o, stdout)
}

// runPlot is `neateval plot` once its arguments are parsed.
func runPlot(ctx context.Context, o plotOptions, stdout io.Writer) error {
	draw, ok := plotKinds[o.Kind]
	switch {
	case !ok:
		return usagef("plot: which picture? fitness, timeline or results, got %q (see neateval help plot)", o.Kind)
	case o.In == "":
		return usagef("plot: --in is required (see neateval help plot)")
	case !strings.HasSuffix(o.Out, ".png"):
		return usagef("plot: --out %q: must end in .png", o.Out)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	what, err := writePNG(o.Out, func(w io.Writer) (string, error) { return draw(w, o.In, o.Title) })
	if err != nil {
		return fmt.Errorf("plot %s: %w", o.Kind, err)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %s\n", o.Out, what)
	return err
}

// plotKinds draw each picture from its input file and say what they drew.
var plotKinds = map[string]func(w io.Writer, in, title string) (string, error){
	"fitness": func(w io.Writer, in, title string) (string, error) {
		gens, err := plot.ReadHistory(in)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("fitness curve of %d generations", len(gens)), plot.FitnessCurve(w, gens, title)
	},
	"timeline": func(w io.Writer, in, title string) (string, error) {
		tl, err := plot.ReadTimeline(in)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("timeline of %.1f s, %d batch-size changes", tl.End, len(tl.Changes)), plot.TimelinePlot(w, tl, title)
	},
	"results": func(w io.Writer, in, title string) (string, error) {
		rs, err := plot.ReadResults(in)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("results of %d genomes", len(rs)), plot.Results(w, rs, title)
	},
}

// writePNG writes path through a temporary file renamed over it, so that a
// failed drawing leaves no half-written picture.
func writePNG(path string, draw func(io.Writer) (string, error)) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".plot-*.png")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	what, err := draw(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644) // CreateTemp's 0600 is for secrets
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return "", err
	}
	return what, nil
}
