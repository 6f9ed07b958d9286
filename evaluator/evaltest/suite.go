// Package evaltest is the conformance suite every evaluator backend passes:
// fitness from the backend against an independent float64 reference of the
// population format, on hand-checked genomes, on every op, activation,
// merge, stride and padding, and on random populations, and the same fitness
// whatever the batch size, parallelism or data caching.
package evaltest

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// NewBackend opens the backend under test.
type NewBackend func(t testing.TB, o evaluator.BackendOptions) evaluator.Backend

// LossTol is the relative tolerance on loss against the float64 reference.
const LossTol = 2e-5

// TieTol is the relative gap between the two largest logits under which
// float32 rounding may decide the prediction.
const TieTol = 1e-4

// Run runs the whole suite.
func Run(t *testing.T, nb NewBackend) {
	t.Run("HandChecked", func(t *testing.T) { HandChecked(t, nb) })
	t.Run("EveryOp", func(t *testing.T) { EveryOp(t, nb) })
	t.Run("RandomPopulations", func(t *testing.T) { RandomPopulations(t, nb) })
	t.Run("Invariance", func(t *testing.T) { Invariance(t, nb) })
	t.Run("NonFinite", func(t *testing.T) { NonFinite(t, nb) })
}

// Evaluate scores a population on a backend with the given options.
func Evaluate(t testing.TB, b evaluator.Backend, ds *datasets.Dataset, pop *neat.Population, st staging.Config, o evaluator.Options) []evaluator.Result {
	t.Helper()
	e, err := evaluator.New(b, ds, st, o)
	if err != nil {
		t.Fatalf("evaluator.New: %v", err)
	}
	defer e.Close()
	rs, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return rs
}

// CheckAgainstReference compares results with the float64 reference, genome
// by genome: the same validity, accuracy equal but for near-ties, loss
// within LossTol relative.
func CheckAgainstReference(t testing.TB, pop *neat.Population, ds *datasets.Dataset, rs []evaluator.Result) {
	t.Helper()
	for i, g := range pop.Genomes {
		r := rs[i]
		if r.GenomeID != g.ID || r.Index != i {
			t.Errorf("result %d is genome %d (index %d), want genome %d", i, r.GenomeID, r.Index, g.ID)
			continue
		}
		if _, err := neat.Compile(g, pop.Input, pop.NumClasses); err != nil {
			if r.Err == nil {
				t.Errorf("genome %d: invalid (%v) but scored", g.ID, err)
			}
			continue
		}
		logits, err := Reference(g, pop.Input, ds.Images, ds.N)
		if err != nil {
			t.Fatalf("genome %d: reference: %v", g.ID, err)
		}
		finite := true
		for _, row := range logits {
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e30 {
					finite = false
				}
			}
		}
		if !finite {
			continue // float32 overflows where float64 does not; checked in NonFinite
		}
		if r.Err != nil {
			t.Errorf("genome %d: error %v, reference scores it", g.ID, r.Err)
			continue
		}
		acc, loss, ties := RefMetrics(logits, ds.Labels[:ds.N], TieTol)
		if d := math.Abs(r.Accuracy-acc) * float64(ds.N); d > float64(ties)+0.5 {
			t.Errorf("genome %d: accuracy %.6f, reference %.6f (%d near-ties)", g.ID, r.Accuracy, acc, ties)
		}
		if !close(r.Loss, loss, LossTol) {
			t.Errorf("genome %d: loss %.9g, reference %.9g (rel %.2g)", g.ID, r.Loss, loss, math.Abs(r.Loss-loss)/math.Abs(loss))
		}
		if r.Images != ds.N {
			t.Errorf("genome %d: %d images, want %d", g.ID, r.Images, ds.N)
		}
	}
}

func close(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(b), 1e-3)
}

// defaultOptions keep tests quick: a small device batch so several slices
// run per genome.
func defaultOptions() evaluator.Options {
	return evaluator.Options{EvalBatchSize: 37, Parallel: 2, Threads: 2, CacheData: true}
}

func backend(t testing.TB, nb NewBackend, dt vram.DType) evaluator.Backend {
	t.Helper()
	return nb(t, evaluator.BackendOptions{DType: dt, MemoryBytes: 512 << 20, Threads: 1})
}

// RandomPopulations scores generated populations (every op, activation and
// merge appears) against the reference.
func RandomPopulations(t *testing.T, nb NewBackend) {
	b := backend(t, nb, vram.Float32)
	for _, tc := range []struct {
		in      neat.Input
		classes int
		seed    int64
		n       int
	}{
		{neat.Input{Channels: 1, Height: 12, Width: 12}, 10, 1, 24},
		{neat.Input{Channels: 3, Height: 9, Width: 11}, 4, 2, 24},
		{neat.Input{Channels: 1, Height: 28, Width: 28}, 10, 3, 8},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d-seed%d", tc.in.Channels, tc.in.Height, tc.in.Width, tc.seed), func(t *testing.T) {
			pop := neat.Generate(tc.seed, tc.n, tc.in, tc.classes, neat.DefaultGenConfig())
			ds := datasets.Synthetic(61, tc.in.Channels, tc.in.Height, tc.in.Width, tc.classes, tc.seed)
			rs := Evaluate(t, b, ds, pop, staging.DefaultConfig(), defaultOptions())
			CheckAgainstReference(t, pop, ds, rs)
		})
	}
}

// Invariance checks that batch size, parallelism, data caching and staging
// change nothing but rounding.
func Invariance(t *testing.T, nb NewBackend) {
	b := backend(t, nb, vram.Float32)
	in := neat.Input{Channels: 1, Height: 10, Width: 10}
	pop := neat.Generate(7, 12, in, 5, neat.DefaultGenConfig())
	ds := datasets.Synthetic(50, 1, 10, 10, 5, 7)
	base := Evaluate(t, b, ds, pop, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 50, Parallel: 1, Threads: 1})
	staged := staging.DefaultConfig()
	staged.Adaptive = false
	staged.ChunkBytes = 4096
	for _, v := range []struct {
		name string
		st   staging.Config
		o    evaluator.Options
	}{
		{"batch1", staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 1, Parallel: 1}},
		{"batch7-par3", staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 7, Parallel: 3, Threads: 3}},
		{"streamed", staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 16, Parallel: 2}},
		{"cached", staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 16, Parallel: 2, CacheData: true}},
		{"staged-small-chunks", staged, evaluator.Options{EvalBatchSize: 13, Parallel: 4, CacheData: true}},
	} {
		t.Run(v.name, func(t *testing.T) {
			rs := Evaluate(t, b, ds, pop, v.st, v.o)
			Same(t, base, rs)
		})
	}
}

// Same checks two result sets agree: same errors, accuracy within one
// image (a rounding tie), loss within LossTol.
func Same(t testing.TB, want, got []evaluator.Result) {
	t.Helper()
	pairs(t, want, got, func(w, g evaluator.Result) {
		if w.Err != nil {
			return
		}
		if w.GenomeID != g.GenomeID || w.Images != g.Images {
			t.Errorf("genome %d: got genome %d with %d images, want %d images", w.GenomeID, g.GenomeID, g.Images, w.Images)
		}
		if math.Abs(w.Accuracy-g.Accuracy)*float64(w.Images) > 1.5 {
			t.Errorf("genome %d: accuracy %v, want %v", w.GenomeID, g.Accuracy, w.Accuracy)
		}
		if !close(g.Loss, w.Loss, LossTol) {
			t.Errorf("genome %d: loss %.9g, want %.9g", w.GenomeID, g.Loss, w.Loss)
		}
	})
}

// Identical checks that got holds want's results bit for bit: the same
// genomes, errors, accuracy, loss and fitness. A backend's results on one
// dtype do not depend on how they were computed (batch size, slicing,
// parallel forwards, threads, out-of-memory retries): SliceStats sums the
// loss exactly.
func Identical(t testing.TB, want, got []evaluator.Result) {
	t.Helper()
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	pairs(t, want, got, func(w, g evaluator.Result) {
		if w.GenomeID != g.GenomeID || w.Images != g.Images || !same(w.Accuracy, g.Accuracy) || !same(w.Loss, g.Loss) || !same(w.Fitness, g.Fitness) {
			t.Errorf("genome %d: got genome %d, %d images, accuracy %v, loss %v, fitness %v; want %d images, accuracy %v, loss %v, fitness %v",
				w.GenomeID, g.GenomeID, g.Images, g.Accuracy, g.Loss, g.Fitness, w.Images, w.Accuracy, w.Loss, w.Fitness)
		}
	})
}

// pairs calls check on each pair of results whose errors agree (both nil
// or both not), after checking that there are as many of each and
// reporting the pairs whose errors do not.
func pairs(t testing.TB, want, got []evaluator.Result, check func(w, g evaluator.Result)) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if (w.Err == nil) != (g.Err == nil) {
			t.Errorf("genome %d: error %v, want %v", w.GenomeID, g.Err, w.Err)
			continue
		}
		check(w, g)
	}
}

// NonFinite checks that a genome whose logits overflow gets an error result
// that says so, while the rest of the population is scored.
func NonFinite(t *testing.T, nb NewBackend) {
	b := backend(t, nb, vram.Float32)
	in := neat.Input{Channels: 1, Height: 4, Width: 4}
	good := denseGenome(0, in, 3, 0.1)
	bad := denseGenome(1, in, 3, 3e38)
	pop := &neat.Population{Input: in, NumClasses: 3, Genomes: []*neat.Genome{good, bad}}
	ds := datasets.Synthetic(20, 1, 4, 4, 3, 1)
	rs := Evaluate(t, b, ds, pop, staging.DefaultConfig(), defaultOptions())
	if rs[0].Err != nil {
		t.Errorf("good genome: %v", rs[0].Err)
	}
	if rs[1].Err == nil || !math.IsNaN(rs[1].Fitness) || rs[1].Images != ds.N {
		t.Errorf("overflowing genome: err %v fitness %v images %d; want a non-finite error, NaN fitness, %d images",
			rs[1].Err, rs[1].Fitness, rs[1].Images, ds.N)
	}
}

// denseGenome is flatten → dense(classes) with every weight and bias = w.
func denseGenome(id int64, in neat.Input, classes int, w float32) *neat.Genome {
	n := in.Channels * in.Height * in.Width
	wt := &neat.Tensor{Shape: []int{classes, n}, Data: make([]float32, classes*n)}
	for i := range wt.Data {
		wt.Data[i] = w
	}
	bias := &neat.Tensor{Shape: []int{classes}, Data: make([]float32, classes)}
	for i := range bias.Data {
		bias.Data[i] = w
	}
	return &neat.Genome{
		ID: id, Output: 1,
		Nodes:  []neat.Node{{ID: 1, Op: neat.OpDense, Inputs: []int{0}, OutFeatures: classes, Padding: neat.PaddingDefault}},
		Params: map[int]*neat.Params{1: {Weight: wt, Bias: bias}},
	}
}
