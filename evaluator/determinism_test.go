package evaluator_test

import (
	"fmt"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// TestResultsIgnoreHowComputed scores one population with batch sizes from
// one image to all of them, one or two forwards at once, one or two
// threads, in one chunk or many: every genome's accuracy, loss and
// fitness are the same bits each way (the loss is summed exactly, so its
// slicing does not show in it).
func TestResultsIgnoreHowComputed(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(31, 10, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(333, 1, 12, 12, 10, 7)
	whole := staging.DefaultConfig()
	chunked := whole
	chunked.Adaptive, chunked.ChunkBytes = false, 16<<10
	var base []evaluator.Result
	for _, batch := range []int{1000, 1, 7, 64} {
		for _, par := range []int{1, 2} {
			for _, threads := range []int{1, 2} {
				st, name := whole, "whole"
				if batch == 7 {
					st, name = chunked, "chunked"
				}
				o := evaluator.Options{EvalBatchSize: batch, Parallel: par, Threads: threads, CacheData: batch != 64, Fitness: evaluator.NegLoss}
				b := newCPU(t, evaluator.BackendOptions{MemoryBytes: 64 << 20, Threads: evaluator.ThreadsPerForward(threads, par)})
				got := evaltest.Evaluate(t, b, ds, pop, st, o)
				if base == nil {
					base = got
					continue
				}
				t.Run(fmt.Sprintf("batch=%d/parallel=%d/threads=%d/%s", batch, par, threads, name), func(t *testing.T) {
					evaltest.Identical(t, base, got)
				})
			}
		}
	}
}
