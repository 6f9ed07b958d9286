package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/onnxexport"
	"github.com/neateval/neateval/ortrun"
	"github.com/neateval/neateval/run"
)

// benchORT is onnxruntime as an engine of `neateval bench`: the population
// exported as ONNX (onnxexport), scored by bench/ort_ref.js through
// onnxruntime-node with the bench's threads as intra-op threads, every graph
// optimisation, and its fastest batch size per genome (64, 256 or 1024,
// chosen on an untimed warm-up) unless --batch fixes one. Like PyTorch, it
// reads the images from the IDX files writeIDX wrote, and only its scoring
// is timed.
type benchORT struct {
	runner  *ortrun.Runner
	dir     string // scratch: the models go in dir/<preset>-onnx
	threads int
	batch   int
	// note says why onnxruntime is not run, when it is not.
	note string
	// err is its failure on a population: reported at the end, and no
	// further runs.
	err error
}

// newBenchORT finds bench/ (see findBenchDir), node and onnxruntime-node,
// unless mode is "off". A
// missing part is noted (and printed to stderr), never an error: the bench
// goes on without onnxruntime.
func newBenchORT(ctx context.Context, mode, benchDirFlag string, threads, batch int, dir string, stderr io.Writer) *benchORT {
	b := &benchORT{dir: dir, threads: threads, batch: batch}
	benchDir, dirErr := "", error(nil)
	if mode != "off" {
		benchDir, dirErr = findBenchDir(benchDirFlag)
	}
	switch {
	case mode == "off":
		b.note = "onnxruntime not run (--ort off)"
	case dirErr != nil:
		b.note = "onnxruntime not run: " + dirErr.Error()
	default:
		r, err := ortrun.Find(ctx, benchDir)
		switch {
		case errors.Is(err, ortrun.ErrUnavailable):
			b.note = "onnxruntime not run: " + err.Error()
		case err != nil:
			b.note = fmt.Sprintf("onnxruntime not run: %v", err)
		default:
			b.runner = r
		}
	}
	if b.note != "" {
		fmt.Fprintf(stderr, "bench: %s\n", b.note)
	}
	return b
}

// on reports whether onnxruntime is to be run (again).
func (b *benchORT) on() bool { return b != nil && b.runner != nil && b.err == nil }

// export writes the population's models for preset and returns their folder.
func (b *benchORT) export(preset string, pop *neat.Population) (string, error) {
	dir := filepath.Join(b.dir, preset+"-onnx")
	if _, err := onnxexport.WritePopulation(dir, pop, onnxexport.Options{ProducerVersion: run.Version()}); err != nil {
		return "", err
	}
	return dir, nil
}

// run scores the models in modelDir on the images in dataDir; flops is the
// FLOPs of the whole evaluation (neateval's count), for its GFLOP/s.
func (b *benchORT) run(ctx context.Context, modelDir, dataDir string, flops float64) (*EngineResult, error) {
	res, err := b.runner.Run(ctx, modelDir, dataDir, ortrun.Options{Threads: b.threads, Batch: b.batch, Warmup: true})
	if err != nil {
		return nil, err
	}
	if res.Seconds <= 0 {
		return nil, fmt.Errorf("ort_ref.js timed %v seconds", res.Seconds)
	}
	e := &EngineResult{Engine: res.Engine, Seconds: res.Seconds, flops: flops}
	for _, g := range res.Genomes {
		eg := engineGenome{ID: g.GenomeID, OK: g.OK(), Images: g.Images}
		if eg.OK {
			eg.Accuracy, eg.Loss = *g.Accuracy, *g.Loss
		}
		e.ImagesGenomes += int64(g.Images)
		e.results = append(e.results, eg)
	}
	e.ImagesGenomesPS = float64(e.ImagesGenomes) / e.Seconds
	e.GFLOPS = flops / e.Seconds / 1e9
	return e, nil
}

// benchORTRun is run r of n of onnxruntime on one population, after
// neateval's: it keeps the fastest run in pr.ONNXRuntime, and on failure
// records the error in ort and runs it no more.
func benchORTRun(ctx context.Context, ort *benchORT, pr *PopResult, preset, modelDir, dataDir string, flops float64, r, n int, stderr io.Writer) {
	if !ort.on() {
		return
	}
	e, err := ort.run(ctx, modelDir, dataDir, flops)
	if err != nil {
		ort.err = fmt.Errorf("%s population: %w", preset, err)
		return
	}
	fmt.Fprintf(stderr, "bench: %s: %s %.2f s, %.1f GFLOP/s (run %d of %d)\n", preset, e.Engine, e.Seconds, e.GFLOPS, r+1, n)
	if pr.ONNXRuntime == nil || e.Seconds < pr.ONNXRuntime.Seconds {
		pr.ONNXRuntime = e
	}
}

// crossCheckORT is crossCheck of neateval's results against onnxruntime's,
// with the same tolerances.
func crossCheckORT(ne, ort []engineGenome) *fitnessCheck {
	c := crossCheck(ne, ort)
	for i, p := range c.Problems {
		c.Problems[i] = strings.ReplaceAll(p, "PyTorch", "onnxruntime")
	}
	return c
}
