//go:build cuda || cudaemu

package cuda

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	cpubackend "github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// The populations and data set of the card checks (scripts/gpu-check.sh):
// NEATEVAL_CHECK_POPS is a comma-separated list of population JSON files,
// NEATEVAL_MNIST_DIR the folder of MNIST's t10k-*-ubyte.gz, and
// NEATEVAL_CHECK_IMAGES how many of its test images to score (default
// 2000: the CPU backend scores them too).
const (
	envCheckPops   = "NEATEVAL_CHECK_POPS"
	envMNIST       = "NEATEVAL_MNIST_DIR"
	envCheckImages = "NEATEVAL_CHECK_IMAGES"
)

// checkSet opens the check populations and the MNIST test images, or skips.
func checkSet(t *testing.T) ([]*neat.Population, []string, *datasets.Dataset) {
	t.Helper()
	pops, dir := os.Getenv(envCheckPops), os.Getenv(envMNIST)
	if pops == "" || dir == "" {
		t.Skipf("set %s and %s (scripts/gpu-check.sh does)", envCheckPops, envMNIST)
	}
	n := 2000
	if s := os.Getenv(envCheckImages); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a count of images", envCheckImages, s)
		}
	}
	ds, err := datasets.Open(datasets.Spec{Kind: "mnist", Path: dir, Split: "test", Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	var ps []*neat.Population
	var names []string
	for _, p := range strings.Split(pops, ",") {
		pop, err := neat.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pop)
		names = append(names, filepath.Base(filepath.Dir(p)))
	}
	return ps, names, ds
}

// TestMNISTAgainstCPU scores each check population on the MNIST test
// images on both backends, float32, and requires the same fitness: the
// conformance tolerance, genome by genome.
func TestMNISTAgainstCPU(t *testing.T) {
	pops, names, ds := checkSet(t)
	for i, pop := range pops {
		t.Run(names[i], func(t *testing.T) {
			threads := runtime.NumCPU()
			cpu, err := cpubackend.New(evaluator.BackendOptions{MemoryBytes: 16 << 30, Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			defer cpu.Close()
			t0 := time.Now()
			want := evaltest.Evaluate(t, cpu, ds, pop, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: ds.N, Parallel: 1, CacheData: true, Threads: threads})
			tc := time.Since(t0)
			b := newT(t, evaluator.BackendOptions{}).(*Backend)
			t0 = time.Now()
			got := evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: ds.N, Parallel: b.PreferredParallel(), CacheData: true})
			t.Logf("%d genomes × %d images: CPU %v (%d threads), CUDA %v (device time %v, %d streams)",
				len(pop.Genomes), ds.N, tc.Round(time.Millisecond), threads, time.Since(t0).Round(time.Millisecond), b.DeviceTime().Round(time.Microsecond), b.Info().Streams)
			evaltest.Same(t, want, got)
		})
	}
}

// TestRealOOMPopulation is TestRealOOM with the first check population, all
// its genomes, on the MNIST images, with DefaultParallel forwards at once:
// the card filled to its limit but a quarter of the largest genome's need.
func TestRealOOMPopulation(t *testing.T) {
	pops, _, ds := checkSet(t)
	realOOM(t, pops[0], ds, DefaultParallel, runtime.NumCPU())
}
