package config

import (
	"testing"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
)

// fitness_eval_parallel 0 on the CPU backend is cpu.DefaultParallel forwards,
// each on every thread of eval.threads (one forward with one thread); a
// number given is kept, and each forward gets its share of the threads.
func TestCPUParallel(t *testing.T) {
	for _, tc := range []struct {
		parallel, threads   int
		wantPar, wantPerFwd int
	}{
		{0, 2, cpu.DefaultParallel, 2},
		{0, 8, cpu.DefaultParallel, 8},
		{0, 1, 1, 1},
		{1, 8, 1, 8},
		{3, 6, 3, 2},
	} {
		c := Default()
		c.Eval.FitnessEvalParallel, c.Eval.Threads = tc.parallel, tc.threads
		o, err := c.BackendOptions(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cpu.New(o)
		if err != nil {
			t.Fatal(err)
		}
		got := c.WithParallel(b).Eval.FitnessEvalParallel
		b.Close()
		if got != tc.wantPar || o.Threads != tc.wantPerFwd {
			t.Errorf("parallel %d, threads %d: %d forwards of %d threads, want %d of %d",
				tc.parallel, tc.threads, got, o.Threads, tc.wantPar, tc.wantPerFwd)
		}
		if per := evaluator.ThreadsPerForward(tc.threads, got); tc.parallel > 0 && per != o.Threads {
			t.Errorf("parallel %d, threads %d: the evaluator gives each forward %d threads, the backend was opened with %d", tc.parallel, tc.threads, per, o.Threads)
		}
	}
}
