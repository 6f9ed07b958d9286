//go:build cuda

package cuda

import (
	"testing"
	"time"

	"github.com/neateval/neateval/evaluator"
)

// The cuda build runs the tests of backend_test.go on GPU 0
// (NEATEVAL_CUDA_DEVICE is not read: one GPU is what the check machine has).
func openTest(t testing.TB, o evaluator.BackendOptions) *Backend {
	t.Helper()
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testMemory does not apply to a GPU: the device's memory is used.
const testMemory = 0

const emulated = false

// TestJIT opens a backend from the PTX alone (NEATEVAL_CUDA_IMAGE=ptx), to
// log how long the driver's JIT takes and what it gives each kernel,
// beside TestSmoke's figures from the cubin.
func TestJIT(t *testing.T) {
	t.Setenv(imageEnv, "ptx")
	t0 := time.Now()
	b := newT(t, evaluator.BackendOptions{}).(*Backend)
	logInfo(t, b.Info(), time.Since(t0))
	for _, m := range b.Info().Modules {
		if m.Image != "compute_80 PTX" {
			t.Errorf("module %s: loaded %s with %s=ptx", m.Name, m.Image, imageEnv)
		}
	}
}
