//go:build cudaemu && !cuda

package cuda

import (
	"testing"

	"github.com/neateval/neateval/evaluator"
)

// The cudaemu build runs the tests of backend_test.go over the emulator
// (emu.cc): the kernels' sources and the schedules on the CPU, with
// o.MemoryBytes of emulated device memory.
func openTest(t testing.TB, o evaluator.BackendOptions) *Backend {
	t.Helper()
	b, err := newEmu(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testMemory is the device memory of the tests' backends.
const testMemory = 512 << 20

// emulated shrinks the tests' data sets: the emulator runs every thread of
// a block as a fiber on one core, hundreds of times slower than a GPU.
const emulated = true
