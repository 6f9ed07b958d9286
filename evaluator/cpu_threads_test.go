package evaluator_test

import (
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// TestThreadedSlicesMatchReference scores slices of several tiles on two
// and three threads, so that forwards run as parts of whole tiles, against
// the float64 reference.
func TestThreadedSlicesMatchReference(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(8, 8, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(600, 1, 12, 12, 10, 8)
	for _, threads := range []int{2, 3} {
		b := newCPU(t, evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: threads})
		rs := evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(), evaluator.Options{Threads: threads, CacheData: true})
		evaltest.CheckAgainstReference(t, pop, ds, rs)
	}
}
