package onnxexport_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/ortrun"
	"github.com/neateval/neateval/staging"
)

// logitTol bounds |onnxruntime − reference| for one logit, relative to the
// largest magnitude among its image's logits, and never below an absolute
// 1e-4: float32 rounding in a dot product is relative to the terms summed,
// not to the sum, so a logit near zero in a row of large ones is compared
// at the row's scale.
const logitTol = 1e-4

// imagesORT is how many MNIST test images onnxruntime and neateval score.
const imagesORT = 256

// TestOnnxruntime runs every model with onnxruntime (onnxruntime-node) on
// the first 256 MNIST test images and checks its logits against the float64
// reference (on the first refSmall or refWide of them) and its accuracy
// and loss against neateval's CPU evaluator on all 256.
func TestOnnxruntime(t *testing.T) {
	ctx := context.Background()
	r, err := ortrun.Find(ctx, "../bench")
	if errors.Is(err, ortrun.ErrUnavailable) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open(datasets.Spec{Kind: datasets.KindMNIST, Limit: imagesORT})
	if err != nil {
		t.Skipf("MNIST is not available: %v", err)
	}
	data := t.TempDir()
	if err := ortrun.WriteIDX(data, ds); err != nil {
		t.Fatal(err)
	}
	for _, s := range testSets(t) {
		t.Run(s.name, func(t *testing.T) {
			dir, _ := writeSet(t, s)
			logits := t.TempDir()
			res, err := r.Run(ctx, dir, data, ortrun.Options{Threads: 2, Batch: 100, LogitsDir: logits})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Genomes) != len(s.genomes) {
				t.Fatalf("%d results for %d genomes", len(res.Genomes), len(s.genomes))
			}
			worst := checkLogits(t, s, ds, logits)
			checkMetrics(t, s, ds, res, logits)
			t.Logf("%d genomes: onnxruntime %s, largest logit difference from the float64 reference %.2g of its row's scale (tolerance %g)",
				len(s.genomes), r.Version, worst, logitTol)
		})
	}
}

// checkLogits compares onnxruntime's logits with evaltest.Reference's,
// genome by genome, one goroutine per core (the reference is slow), and
// returns the largest difference seen, relative to its row's scale.
func checkLogits(t *testing.T, s testSet, ds *datasets.Dataset, dir string) float64 {
	var mu sync.Mutex
	worst := 0.0
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, gen := range s.genomes {
		n := s.refSmall
		if gen.ID >= 100000 {
			n = s.refWide
		}
		g.Go(func() error {
			got, err := ortrun.ReadLogits(dir, gen.ID, ds.N, classes)
			if err != nil {
				return err
			}
			want, err := evaltest.Reference(gen, mnist, ds.Images, n)
			if err != nil {
				return err
			}
			w := 0.0
			defer func() {
				mu.Lock()
				worst = max(worst, w)
				mu.Unlock()
			}()
			for i, row := range want {
				scale := 1.0
				for _, v := range row {
					scale = math.Max(scale, math.Abs(v))
				}
				for k, v := range row {
					if math.IsInf(v, 0) || math.IsNaN(v) {
						continue
					}
					d := math.Abs(float64(got[i*classes+k]) - v)
					w = max(w, d/scale)
					if d > logitTol*scale {
						t.Errorf("genome %d, image %d, class %d: onnxruntime %.9g, reference %.9g (diff %.3g, row scale %.3g)",
							gen.ID, i, k, got[i*classes+k], v, d, scale)
						return nil
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return worst
}

// checkMetrics compares onnxruntime's accuracy and loss with those of
// neateval's CPU evaluator on the same images: loss within 1e-4 relative,
// accuracy equal but for images whose two largest logits are within
// evaltest.TieTol, which float32 rounding may order either way.
func checkMetrics(t *testing.T, s testSet, ds *datasets.Dataset, res *ortrun.Result, dir string) {
	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 1 << 30, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e, err := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 128, Threads: 2, CacheData: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	pop := &neat.Population{Input: mnist, NumClasses: classes, Genomes: s.genomes}
	rs, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		o := res.Genomes[i]
		if o.GenomeID != r.GenomeID || !r.OK() || !o.OK() {
			t.Errorf("genome %d: neateval ok %v (%v); onnxruntime genome %d ok %v", r.GenomeID, r.OK(), r.Err, o.GenomeID, o.OK())
			continue
		}
		if d := math.Abs(*o.Accuracy-r.Accuracy) * float64(ds.N); d > 0.5 {
			logits, err := ortrun.ReadLogits(dir, r.GenomeID, ds.N, classes)
			if err != nil {
				t.Fatal(err)
			}
			if ties := nearTies(logits); d > float64(ties)+0.5 {
				t.Errorf("genome %d: accuracy %.6f, neateval %.6f (%d near-ties)", r.GenomeID, *o.Accuracy, r.Accuracy, ties)
			}
		}
		if math.Abs(*o.Loss-r.Loss) > 1e-4*math.Max(math.Abs(r.Loss), 1e-3) {
			t.Errorf("genome %d: loss %.9g, neateval %.9g", r.GenomeID, *o.Loss, r.Loss)
		}
	}
}

// nearTies counts the rows whose two largest logits are within
// evaltest.TieTol of each other, relative to the largest (at least 1).
func nearTies(logits []float32) int {
	ties := 0
	for r := 0; r < len(logits)/classes; r++ {
		row := logits[r*classes : (r+1)*classes]
		first, second := math.Inf(-1), math.Inf(-1)
		for _, v := range row {
			switch x := float64(v); {
			case x > first:
				first, second = x, first
			case x > second:
				second = x
			}
		}
		if first-second <= evaltest.TieTol*math.Max(1, math.Abs(first)) {
			ties++
		}
	}
	return ties
}
