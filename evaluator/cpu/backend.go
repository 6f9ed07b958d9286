package cpu

import (
	"fmt"
	"sync"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// bf16Tile is how many images a bfloat16 forward converts to float32 at a
// time: weights and activations are stored in bfloat16 on the device, and
// every step computes in float32 on a tile of images.
const bf16Tile = 32

// Backend computes forwards on the host's cores, with its memory in a
// vram.CPUDevice arena: weights, the cached validation set, activations
// and workspace are all allocated there, so a batch too large for the
// configured memory fails where a GPU would fail.
type Backend struct {
	dev     *vram.CPUDevice
	dtype   vram.DType
	threads int
	scratch scratchPool // the forwards' workspaces
}

var _ evaluator.Backend = (*Backend)(nil)

// New creates a CPU backend with its own arena of o.MemoryBytes (0: a
// default share of host memory), storing in o.DType, each forward on
// o.Threads threads (0: 1), with o.Faults injected into the arena.
func New(o evaluator.BackendOptions) (*Backend, error) {
	dev, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: o.MemoryBytes, Faults: o.Faults})
	if err != nil {
		return nil, err
	}
	return &Backend{dev: dev, dtype: o.DType, threads: max(o.Threads, 1)}, nil
}

// DefaultParallel is the fitness_eval_parallel the CPU backend suggests
// (PreferredParallel) when it has two threads or more: two genomes'
// forwards in flight, each split over every thread (the Go scheduler
// shares the cores between them; the kernels fan out with a WaitGroup and
// never spin). A forward split over the threads leaves some idle at its
// start and end (planning, the slice's last tile, the reduction), which
// the other forward fills; and the last, largest genome of a population
// still gets every thread, where forwards of half the threads each left a
// core idle (the wide preset: 40.2 s against 26.2 s one at a time). On two
// cores: 10,000 small genomes on 50 images 6.8–7.3 s against 9.2–10.0 s
// one at a time; the bench's presets the same speed as one at a time
// (bench/NOTES.md). The results are the same bits either way
// (evaluator.SliceStats sums the loss exactly).
const DefaultParallel = 2

// PreferredParallel is DefaultParallel, or 1 for a backend of one thread
// per forward (evaluator.ParallelHint). A backend opened for
// fitness_eval_parallel 0 has every thread per forward.
func (c *Backend) PreferredParallel() int { return min(DefaultParallel, c.threads) }

// Name is "cpu".
func (c *Backend) Name() string { return "cpu" }

// Device is the arena.
func (c *Backend) Device() vram.Device { return c.dev }

// DType is the storage element type.
func (c *Backend) DType() vram.DType { return c.dtype }

// Close unmaps the arena.
func (c *Backend) Close() error { return c.dev.Close() }

// data is the validation set: on the device when cached, else on the host.
type data struct {
	ds      *datasets.Dataset
	block   *vram.Block
	dev     *vram.CPUDevice
	imgSize int
	once    sync.Once
}

func (d *data) Len() int { return d.ds.N }

func (d *data) Bytes() int64 {
	if d.block == nil {
		return 0
	}
	return d.block.Size
}

func (d *data) Release() {
	d.once.Do(func() {
		if d.block != nil {
			d.dev.Free(d.block)
		}
	})
}

// PrepareData copies the images to the arena when cache is true.
func (c *Backend) PrepareData(ds *datasets.Dataset, cache bool) (evaluator.Data, error) {
	d := &data{ds: ds, dev: c.dev, imgSize: ds.ImageSize()}
	if !cache {
		return d, nil
	}
	n := int64(len(ds.Images)) * int64(c.dtype.Size())
	b, err := c.dev.Alloc(max(n, 1))
	if err != nil {
		return nil, fmt.Errorf("caching the validation set on the device (%s): %w", vram.FormatBytes(n), err)
	}
	c.storeValues(b, 0, ds.Images)
	d.block = b
	return d, nil
}

// storeValues writes float32 values into a block at element offset off, in
// the device's dtype.
func (c *Backend) storeValues(b *vram.Block, off int, v []float32) {
	if c.dtype == vram.BFloat16 {
		kernels.F32ToBF16(c.dev.Uint16s(b)[off:off+len(v)], v)
		return
	}
	copy(c.dev.Float32s(b)[off:off+len(v)], v)
}

// model is a genome's weights in the arena: one block, every tensor at a
// known element offset. In float32 the block is reserved and never
// written: the forwards read the graph's own tensors (w, bias), as a
// forward's block stands reserved while its tiles run in a workspace
// (scratch.go). Copying them in cost a page fault per fresh page and the
// copy: for 10,000 small genomes, 550 MB of weights, a tenth of scoring
// them on 50 images. In bfloat16 the block holds the converted weights.
type model struct {
	g     *neat.Graph
	dev   *vram.CPUDevice
	block *vram.Block
	wOff  []int // per step: element offset of the weight, −1 for none
	bOff  []int
	w     [][]float32 // float32: per step, the weight the forwards read
	bias  [][]float32
	own   []kernels.Act // float32: per step, the activation its kernel applies (stepActs)
	post  []kernels.Act // float32: per step, the activation applied to its output after it
	once  sync.Once

	plansMu sync.Mutex
	plans   []*forwardPlans // of the slice sizes this model has run
}

func (m *model) Graph() *neat.Graph { return m.g }

func (m *model) Bytes() int64 {
	if m.block == nil {
		return 0
	}
	return m.block.Size
}

func (m *model) Unload() {
	m.once.Do(func() {
		if m.block != nil {
			m.dev.Free(m.block)
		}
	})
}

// Load reserves one arena block for the graph's weights. In bfloat16 it
// stores them there; in float32 the forwards read the graph's tensors,
// which must not change while the model is loaded (see model).
func (c *Backend) Load(g *neat.Graph) (evaluator.Model, error) {
	m := &model{g: g, dev: c.dev, wOff: make([]int, len(g.Steps)), bOff: make([]int, len(g.Steps))}
	m.own, m.post = stepActs(g)
	off := 0
	for i := range g.Steps {
		s := &g.Steps[i]
		m.wOff[i], m.bOff[i] = -1, -1
		if s.Weight != nil {
			m.wOff[i] = off
			off += len(s.Weight.Data)
			m.bOff[i] = off
			off += len(s.Bias.Data)
		}
	}
	if off == 0 {
		return m, nil
	}
	b, err := c.dev.Alloc(int64(off) * int64(c.dtype.Size()))
	if err != nil {
		return nil, fmt.Errorf("genome %d: loading %d weights: %w", g.GenomeID, off, err)
	}
	m.block = b
	if c.dtype != vram.BFloat16 {
		m.w, m.bias = make([][]float32, len(g.Steps)), make([][]float32, len(g.Steps))
		for i := range g.Steps {
			if s := &g.Steps[i]; s.Weight != nil {
				m.w[i], m.bias[i] = s.Weight.Data, s.Bias.Data
			}
		}
		return m, nil
	}
	for i := range g.Steps {
		s := &g.Steps[i]
		if s.Weight != nil {
			c.storeValues(b, m.wOff[i], s.Weight.Data)
			c.storeValues(b, m.bOff[i], s.Bias.Data)
		}
	}
	return m, nil
}

// Footprint predicts what Load and Forward allocate for g at batch b: the
// weights' block, and the forward's one block as memPlan lays it out, both
// rounded as the arena's allocator rounds.
func (c *Backend) Footprint(g *neat.Graph, b int, cachedData bool) evaluator.Footprint {
	var model int64
	if g.Params > 0 {
		model = vram.RoundSize(g.WeightBytes(c.dtype.Size()))
	}
	return evaluator.Footprint{Model: model, Act: vram.RoundSize(c.blockSize(g, b, !cachedData))}
}
