//go:build cudaemu && !cuda

package cuda

import (
	"testing"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
)

func newEmuT(t testing.TB, o evaluator.BackendOptions) evaluator.Backend {
	t.Helper()
	b, err := newEmu(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// TestEmuConformance runs the conformance suite over the kernels and
// schedules of the CUDA backend, executed on the CPU by the emulator.
func TestEmuConformance(t *testing.T) { evaltest.Run(t, newEmuT) }
