package evaluator

import (
	"strings"
	"testing"
)

// TestOpenBackendCPUNotLinked takes the CPU backend out of the registry, as
// in a program that does not link evaluator/cpu: "cpu" and "auto" both say
// so, naming the package.
func TestOpenBackendCPUNotLinked(t *testing.T) {
	registryMu.Lock()
	f, ok := registry[cpuName]
	delete(registry, cpuName)
	gpu, hasGPU := registry["cuda"]
	delete(registry, "cuda")
	registryMu.Unlock()
	t.Cleanup(func() {
		registryMu.Lock()
		if ok {
			registry[cpuName] = f
		}
		if hasGPU {
			registry["cuda"] = gpu
		}
		registryMu.Unlock()
	})
	for _, name := range []string{"cpu", "auto"} {
		_, err := OpenBackend(name, BackendOptions{})
		if err == nil || !strings.Contains(err.Error(), `backend "cpu" is not linked`) || !strings.Contains(err.Error(), cpuPackage) {
			t.Errorf("OpenBackend(%q) without the CPU backend = %v, want an error naming %s", name, err, cpuPackage)
		}
	}
}
