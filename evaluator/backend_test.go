package evaluator_test

import (
	"strings"
	"testing"

	"github.com/neateval/neateval/evaluator"
	_ "github.com/neateval/neateval/evaluator/cpu" // registers "cpu"
)

// TestOpenBackend opens the CPU backend by name and through "auto" (no GPU
// backend is linked into this test), and refuses an unknown name by name.
func TestOpenBackend(t *testing.T) {
	for _, name := range []string{"cpu", "auto"} {
		b, err := evaluator.OpenBackend(name, evaluator.BackendOptions{MemoryBytes: 1 << 20})
		if err != nil {
			t.Fatalf("OpenBackend(%q): %v", name, err)
		}
		if b.Name() != "cpu" {
			t.Errorf("OpenBackend(%q) opened %q, want cpu", name, b.Name())
		}
		b.Close()
	}
	if got := evaluator.Backends(); !strings.Contains(strings.Join(got, " "), "cpu") {
		t.Errorf("Backends() = %v, want cpu among them", got)
	}
	_, err := evaluator.OpenBackend("tpu", evaluator.BackendOptions{})
	if err == nil || !strings.Contains(err.Error(), `unknown backend "tpu"`) {
		t.Errorf("OpenBackend(tpu) = %v, want an unknown-backend error", err)
	}
}
