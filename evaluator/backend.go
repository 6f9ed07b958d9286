package evaluator

import (
	"context"
	"fmt"
	"github.com/rs/zerolog"
	"sort"
	"sync"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Backend computes forwards on one device. Backends register themselves by
// name from their own packages (evaluator/cpu as "cpu", evaluator/cuda as
// "cuda" in a build with the cuda tag), and a program opens one by name
// with OpenBackend.
//
// A Backend is safe for concurrent use: up to fitness_eval_parallel forwards
// run on it at once, each on its own model.
type Backend interface {
	// Name is the backend's registered name ("cpu", "cuda").
	Name() string
	// Device is the memory every allocation of this backend comes from.
	Device() vram.Device
	// DType is the element type of weights and activations on the device.
	DType() vram.DType
	// PrepareData makes the validation set available to forwards: copied to
	// the device once when cache is true (it then counts as fixed memory),
	// otherwise kept on the host and copied slice by slice in each forward.
	PrepareData(ds *datasets.Dataset, cache bool) (Data, error)
	// Load puts a compiled genome's weights on the device: their memory is
	// allocated there. A backend may read the graph's own tensors rather
	// than a copy (the CPU backend in float32), so they must not change
	// while the model is loaded.
	Load(g *neat.Graph) (Model, error)
	// Forward runs the model on images [lo, hi) of d and reduces its logits
	// against the labels. Every device allocation it makes is freed before it
	// returns, on success and on error alike; an allocation that does not fit
	// returns an error matching vram.ErrOutOfMemory.
	Forward(ctx context.Context, m Model, d Data, lo, hi int) (SliceStats, error)
	// Footprint predicts the device memory of one genome: its weights, and
	// the peak of activations plus workspace during a forward of b images.
	// It is the memory model of the staging planner and the batch controller.
	// It may be called from several goroutines at once.
	Footprint(g *neat.Graph, b int, cachedData bool) Footprint
	// Close releases the device.
	Close() error
}

// Footprint is a genome's predicted device memory, in bytes, rounded as the
// device's allocator rounds.
type Footprint struct {
	Model int64 // weights
	Act   int64 // activations and workspace at their peak, for the batch asked
}

// Model is a genome's weights on a device.
type Model interface {
	Graph() *neat.Graph
	// Bytes is the device memory the weights hold.
	Bytes() int64
	// Unload frees the weights. It is safe to call more than once.
	Unload()
}

// Data is a validation set made available to a backend's forwards.
type Data interface {
	Len() int
	// Bytes is the device memory the data holds (0 when streamed).
	Bytes() int64
	Release()
}

// SliceStats are the reductions of one forward over a slice of images.
type SliceStats struct {
	Images    int
	Correct   int
	LossSum   Sum // Σ logsumexp(logits) − logits[label], over finite rows, exact
	NonFinite int // images whose logits held NaN or ±Inf
}

// Add accumulates o into s. The loss is summed exactly (Sum), so a
// genome's statistics do not depend on how its images were sliced.
func (s *SliceStats) Add(o SliceStats) {
	s.Images += o.Images
	s.Correct += o.Correct
	s.LossSum.Merge(o.LossSum)
	s.NonFinite += o.NonFinite
}

// Equal says whether s and o are the same statistics, their loss sums
// equal exactly.
func (s SliceStats) Equal(o SliceStats) bool {
	return s.Images == o.Images && s.Correct == o.Correct && s.NonFinite == o.NonFinite && s.LossSum.Equal(o.LossSum)
}

// BackendOptions are what every backend is created with.
type BackendOptions struct {
	DType vram.DType
	// MemoryBytes is the CPU device's arena capacity (0: a default share of
	// host memory). Other backends use the device's own memory.
	MemoryBytes int64
	// Faults injects allocation failures into the CPU device (tests, drills).
	Faults vram.FaultOptions
	// DeviceIndex picks the GPU for GPU backends.
	DeviceIndex int
	// Threads is how many CPU threads one forward uses (0: 1). The
	// evaluator sets it to its thread budget over fitness_eval_parallel, so
	// that parallel forwards never oversubscribe the cores.
	Threads int
	// Logger receives the backend's own events (the device it opened,
	// kernel loads); nil: none. A backend never logs elsewhere.
	Logger *zerolog.Logger
	// Parallel is fitness_eval_parallel, the forwards that will run at
	// once: a GPU backend makes a stream and its buffers for each when it
	// opens (0: the backend's own default, ParallelHint). The CPU backend
	// does not read it.
	Parallel int
	// ComputePrecision is how a GPU backend computes convolutions and dense
	// layers: "fp32" (or empty), exact float32 as the CPU backend; "tf32",
	// the tensor cores with each operand rounded to TF32 (10 mantissa
	// bits) and float32 sums, as PyTorch does for convolutions by default.
	// The CPU backend computes float32 and refuses nothing.
	ComputePrecision string
}

// ParallelHint is implemented by backends with a fitness_eval_parallel of
// their own to suggest: the CUDA backend's is the forwards it opened
// streams for, the CPU backend's two forwards sharing its threads.
type ParallelHint interface {
	PreferredParallel() int
}

// PreferredParallel is b's suggested fitness_eval_parallel, 1 for a backend
// without a hint.
func PreferredParallel(b Backend) int {
	if h, ok := b.(ParallelHint); ok && h.PreferredParallel() > 0 {
		return h.PreferredParallel()
	}
	return 1
}

// NewBackendFunc creates a backend.
type NewBackendFunc func(BackendOptions) (Backend, error)

var (
	registryMu sync.Mutex
	registry   = map[string]NewBackendFunc{}
	// unavailable holds, per name, why a known backend is not in this build.
	unavailable = map[string]string{}
)

// Register makes a backend available by name. Backend packages call it from
// init; registering a name twice panics.
func Register(name string, f NewBackendFunc) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("evaluator: backend " + name + " registered twice")
	}
	registry[name] = f
	delete(unavailable, name)
}

// RegisterUnavailable records why a known backend is not in this build, so
// that asking for it says how to get it.
func RegisterUnavailable(name, why string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, ok := registry[name]; !ok {
		unavailable[name] = why
	}
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// cpuName is the CPU backend's registered name, the backend "auto" falls
// back to; cpuPackage registers it.
const (
	cpuName    = "cpu"
	cpuPackage = "github.com/neateval/neateval/evaluator/cpu"
)

// OpenBackend creates the backend of that name. "auto" picks the first
// registered GPU backend that opens, and the CPU backend otherwise.
func OpenBackend(name string, o BackendOptions) (Backend, error) {
	registryMu.Lock()
	f, ok := registry[name]
	why := unavailable[name]
	gpu := registry["cuda"]
	cpu := registry[cpuName]
	registryMu.Unlock()
	if name == "auto" {
		if gpu != nil {
			if b, err := gpu(o); err == nil {
				return b, nil
			}
		}
		name, f, ok = cpuName, cpu, cpu != nil
	}
	if !ok && name == cpuName {
		return nil, fmt.Errorf("backend %q is not linked into this program (its package is %s)", name, cpuPackage)
	}
	if !ok {
		if why != "" {
			return nil, fmt.Errorf("backend %q is not in this build: %s", name, why)
		}
		return nil, fmt.Errorf("unknown backend %q (this build has %v)", name, Backends())
	}
	return f(o)
}
