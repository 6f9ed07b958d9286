//go:build cuda

package cuda

import (
	"testing"

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
