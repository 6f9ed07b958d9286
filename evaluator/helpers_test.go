package evaluator_test

import (
	"testing"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
)

// newCPU opens a CPU backend, the real one, closed when the test ends: the
// evaluator's orchestration is tested on it.
func newCPU(t testing.TB, o evaluator.BackendOptions) evaluator.Backend {
	t.Helper()
	b, err := cpu.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
