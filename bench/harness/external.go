package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/neateval/neateval/ortrun"
)

// benchExternal runs the two programs `neateval bench` compares against:
// PyTorch (bench/torch_ref.py) and the fp32 ceiling (bench/ceiling.sh).
// Either may be missing on a machine; the bench then says why and goes on.
type benchExternal struct {
	dir       string // scratch: the images as IDX files, the populations, results
	benchDir  string
	python    string
	threads   int
	ceilingN  int // the sgemm's size and repeats
	ceilingR  int
	batch     int
	torch     bool // PyTorch is there and asked for
	ceiling   bool // the ceiling is asked for and has not failed
	torchNote string
	// ceilingNote says why there is no ceiling, when there is none.
	ceilingNote string
	best        *ceilingResult // the best ceiling measured so far
	samples     []float64      // every ceiling measured, GFLOP/s
	// torchErr is PyTorch's failure on a population: reported at the end,
	// and no further PyTorch runs.
	torchErr error
	stderr   io.Writer
}

func newBenchExternal(ctx context.Context, o Options, threads int, dir string, stderr io.Writer) *benchExternal {
	e := &benchExternal{dir: dir, python: o.Python, threads: threads, batch: o.Batch, stderr: stderr,
		ceilingN: ceilingSize, ceilingR: ceilingRepeats}
	var dirErr error
	if o.Torch == "auto" || o.Ceiling == "auto" {
		e.benchDir, dirErr = findBenchDir(o.BenchDir)
	}
	switch {
	case o.Torch == "off":
		e.torchNote = "PyTorch not run (--torch off)"
	case dirErr != nil:
		e.torchNote = "PyTorch not run: " + dirErr.Error()
	default:
		out, err := exec.CommandContext(ctx, e.python, "-c", "import numpy, torch; print(torch.__version__)").CombinedOutput()
		if err != nil {
			e.torchNote = fmt.Sprintf("PyTorch not installed (%s -c 'import torch': %s)", e.python, ortrun.LastLine(out, err))
		} else {
			e.torch = true
		}
	}
	switch {
	case o.Ceiling == "off":
		e.ceilingNote = "ceiling not measured (--ceiling off)"
	case dirErr != nil:
		e.ceilingNote = "ceiling not measured: " + dirErr.Error()
	default:
		e.ceiling = true
	}
	if e.torchNote != "" {
		fmt.Fprintf(stderr, "bench: %s\n", e.torchNote)
	}
	return e
}

// ceilingResult is bench/ceiling.sh's report.
type ceilingResult struct {
	N       int     `json:"n"`
	Repeats int     `json:"repeats"`
	Threads int     `json:"threads"`
	GFLOPS  float64 `json:"gflops"`
	Config  string  `json:"config"`
}

// ceilingSize and ceilingRepeats are the sgemm the ceiling times: 2048³,
// best of 10 (about a second on two cores).
const ceilingSize, ceilingRepeats = 2048, 10

// sampleCeiling measures the ceiling once more and keeps the best: the
// ceiling is the machine's peak, and on a machine shared with other work
// a measurement can catch a busy moment. Sampled before every neateval run
// and at the end, it is the peak of the same hour.
func (e *benchExternal) sampleCeiling(ctx context.Context) {
	if c := e.measureCeiling(ctx); c != nil {
		e.samples = append(e.samples, c.GFLOPS)
		if e.best == nil || c.GFLOPS > e.best.GFLOPS {
			e.best = c
		}
	}
}

// measureCeiling runs bench/ceiling.sh once. Without a C compiler or
// OpenBLAS it notes why and turns the ceiling off (it never installs
// anything).
func (e *benchExternal) measureCeiling(ctx context.Context) *ceilingResult {
	if !e.ceiling {
		return nil
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(e.benchDir, "ceiling.sh"), strconv.Itoa(e.ceilingN), strconv.Itoa(e.ceilingR))
	cmd.Env = append(os.Environ(), "CEILING_NO_INSTALL=1", "THREADS="+strconv.Itoa(e.threads), "TMPDIR="+e.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var c ceilingResult
	if err == nil {
		err = json.Unmarshal(ortrun.LastLine(out, nil), &c)
	}
	if err != nil {
		e.ceiling = false
		var xe *exec.ExitError
		if errors.As(err, &xe) && xe.ExitCode() == 3 {
			e.ceilingNote = "ceiling not measured: " + string(ortrun.LastLine(stderr.Bytes(), err))
		} else {
			e.ceilingNote = fmt.Sprintf("ceiling not measured: bench/ceiling.sh: %s", ortrun.LastLine(stderr.Bytes(), err))
		}
		fmt.Fprintf(e.stderr, "bench: %s\n", e.ceilingNote)
		return nil
	}
	c.Threads = e.threads
	fmt.Fprintf(e.stderr, "bench: ceiling: OpenBLAS sgemm %d³ on %d threads: %.1f GFLOP/s\n", c.N, c.Threads, c.GFLOPS)
	return &c
}

// torchSummary is the last line torch_ref.py prints.
type torchSummary struct {
	Engine  string  `json:"engine"`
	Genomes int     `json:"genomes"`
	Images  int     `json:"images"`
	Seconds float64 `json:"seconds"`
}

// torchLine is one line of torch_ref.py's --results file.
type torchLine struct {
	GenomeID int64    `json:"genome_id"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   int      `json:"images"`
	Error    *string  `json:"error"`
}

// runTorch scores the population saved at popPath with torch_ref.py on the
// images written by writeIDX. OpenMP's threads wait passively unless
// OMP_WAIT_POLICY is set: on a machine shared with other work, spinning
// threads make PyTorch several times slower than it is.
func (e *benchExternal) runTorch(ctx context.Context, popPath string) (*EngineResult, error) {
	results := filepath.Join(e.dir, "torch.jsonl")
	args := []string{filepath.Join(e.benchDir, "torch_ref.py"), popPath, e.dir,
		"--threads", strconv.Itoa(e.threads), "--results", results, "--warmup"}
	if e.batch > 0 {
		args = append(args, "--batch", strconv.Itoa(e.batch))
	}
	cmd := exec.CommandContext(ctx, e.python, args...)
	cmd.Env = os.Environ()
	if os.Getenv("OMP_WAIT_POLICY") == "" {
		cmd.Env = append(cmd.Env, "OMP_WAIT_POLICY=PASSIVE")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("torch_ref.py: %s", ortrun.LastLine(stderr.Bytes(), err))
	}
	var sum torchSummary
	if err := json.Unmarshal(ortrun.LastLine(out, nil), &sum); err != nil {
		return nil, fmt.Errorf("torch_ref.py printed %q: %w", ortrun.LastLine(out, nil), err)
	}
	if sum.Seconds <= 0 {
		return nil, fmt.Errorf("torch_ref.py timed %v seconds", sum.Seconds)
	}
	f, err := os.Open(results)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &EngineResult{Engine: sum.Engine, Seconds: sum.Seconds}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var l torchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s: %w", results, err)
		}
		g := engineGenome{ID: l.GenomeID, Images: l.Images, OK: l.Error == nil && l.Accuracy != nil && l.Loss != nil}
		if g.OK {
			g.Accuracy, g.Loss = *l.Accuracy, *l.Loss
		}
		r.ImagesGenomes += int64(l.Images)
		r.results = append(r.results, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", results, err)
	}
	r.ImagesGenomesPS = float64(r.ImagesGenomes) / r.Seconds
	return r, nil
}
