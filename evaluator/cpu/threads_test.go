package cpu_test

import (
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// TestThreadedSlicesMatchReference scores slices of several tiles on two
// threads, so that each forward runs as two parts taking tiles from a
// shared counter, against the float64 reference.
func TestThreadedSlicesMatchReference(t *testing.T) {
	defer cpu.SetTile(cpu.SetTile(32))
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(8, 5, in, 10, neat.DefaultGenConfig())
	ds := datasets.Synthetic(250, 1, 12, 12, 10, 8)
	b := newCPU(t, evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: 2})
	rs := evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(), evaluator.Options{Threads: 2, CacheData: true})
	evaltest.CheckAgainstReference(t, pop, ds, rs)
}
