package staging

import (
	"fmt"
	"sort"

	"github.com/neateval/neateval/vram"
)

// Mode is where the population's weights live during a generation.
type Mode string

// The two modes of the seed.
const (
	// GPUResident: every genome is loaded once for the generation.
	GPUResident Mode = "gpu_resident"
	// CPUStaged: the population stays in host memory and goes through the
	// device chunk by chunk.
	CPUStaged Mode = "cpu_staged"
)

// Config holds the seed's parameters of the PopulationVRAMManager. The zero
// value is not useful; start from DefaultConfig.
type Config struct {
	// Adaptive chooses the mode by ResidentThreshold. When false the manager
	// always stages (cpu_staged): a forced gpu_resident would fail at load
	// on a population that does not fit, and a population that fits is
	// resident under Adaptive anyway (raise ResidentThreshold to prefer it).
	Adaptive bool
	// ResidentThreshold (population_vram_resident_threshold, 0.50): the
	// share of device memory that models plus eval activations may take for
	// the population to be resident.
	ResidentThreshold float64
	// UsageThreshold (vram_usage_threshold, 0.80): the ceiling on a chunk's
	// peak, as a share of device memory, before fixed memory is taken off.
	UsageThreshold float64
	// ChunkBytes (population_gpu_chunk_bytes; 0 = unset): the weight budget
	// of one chunk. When unset, one budget of BatchFracMin..BatchFracMax of
	// device memory holds weights and activations together.
	ChunkBytes   int64
	BatchFracMin float64
	BatchFracMax float64
	// Parallel is fitness_eval_parallel: forwards in flight at once, each
	// with its own activations.
	Parallel int
	// GraphReserve (cuda_graph_memory_reserve_bytes) is kept free for CUDA
	// graphs and counted in the fixed memory.
	GraphReserve int64
	// Prefetch loads chunk i+1 while chunk i is evaluated, when the peak
	// ceiling (UsageThreshold·M_VRAM − M_fixed) leaves room for both.
	Prefetch bool
}

// DefaultConfig has the seed's defaults.
func DefaultConfig() Config {
	return Config{
		Adaptive:          true,
		ResidentThreshold: 0.50,
		UsageThreshold:    vram.DefaultThreshold,
		BatchFracMin:      0.40,
		BatchFracMax:      0.50,
		Parallel:          1,
		Prefetch:          true,
	}
}

// Item is one genome as the planner sees it: its position in the
// population and its predicted memory at the evaluation batch size.
type Item struct {
	Index int
	Model int64 // M_model: weight bytes on the device
	Act   int64 // M_act(B): activations and workspace of one forward
}

// Plan is the outcome of PrepareForEval: the mode, the budgets and the
// chunks, in the order they will be evaluated.
type Plan struct {
	Mode  Mode
	Total int64 // M_VRAM
	Fixed int64 // M_fixed: validation cache + graph reserve + other allocations
	// ModelBudget is the weight budget of a chunk: ChunkBytes when set,
	// else the single budget (weights and activations together).
	ModelBudget int64
	// PeakBudget is the ceiling on a chunk's peak:
	// UsageThreshold·M_VRAM − M_fixed (or the single budget when ChunkBytes
	// is unset).
	PeakBudget int64
	// SingleBudget is true when ChunkBytes was unset.
	SingleBudget bool
	// Chunks hold item indexes (into the planned items), each chunk's
	// genomes in population order.
	Chunks []ChunkPlan
	// LowerBound is the fewest chunks any packing under the budgets could
	// use: one per oversize genome (each is alone), plus, for the others,
	// at least ⌈Σ M_model / ModelBudget⌉ and, with P forwards in flight, at
	// least ⌈|S_k| / k⌉ for k < P, where S_k are the genomes whose
	// M_model + M_act is over PeakBudget / (k+1): no chunk holds k+1 of
	// them, since its peak counts the activations of all of them.
	LowerBound int
	// SlotChunks is how many chunks sizing every slot by the largest genome
	// (the seed's n_models formula) would have used.
	SlotChunks int
	// Prefetch is whether any chunk loads while the one before it is
	// evaluated (ChunkPlan.Prefetched says which).
	Prefetch bool
	// PeakPredicted is the largest predicted chunk peak, with prefetch.
	PeakPredicted int64
	// MaxModel and MaxAct are M_model^max and M_act^max.
	MaxModel, MaxAct int64
	// GenomesPerChunk is the largest chunk's genome count.
	GenomesPerChunk int
}

// ChunkPlan is one planned chunk.
type ChunkPlan struct {
	Items []int // indexes into the planned items
	Model int64 // Σ M_model
	Peak  int64 // Σ M_model + the largest min(n, P) M_act
	// Oversize marks a genome whose model and activations exceed the peak
	// budget on their own: it is scored alone, and the batch controller
	// shrinks its batch.
	Oversize bool
	// Prefetched: this chunk loads while the one before it is evaluated,
	// because the earlier chunk's peak plus this chunk's weights stay under
	// the ceiling UsageThreshold·M_VRAM − M_fixed.
	Prefetched bool
}

// NewPlan decides the mode and packs the items into chunks on a device of
// total bytes with fixed bytes already taken.
func NewPlan(cfg Config, items []Item, total, fixed int64) (*Plan, error) {
	if total <= 0 {
		return nil, fmt.Errorf("staging: device memory %d bytes", total)
	}
	p := &Plan{Total: total, Fixed: fixed}
	par := max(cfg.Parallel, 1)
	var sumModel int64
	acts := make([]int64, 0, len(items))
	for _, it := range items {
		sumModel += it.Model
		p.MaxModel = max(p.MaxModel, it.Model)
		p.MaxAct = max(p.MaxAct, it.Act)
		acts = append(acts, it.Act)
	}
	evalAct := topSum(acts, par)

	ceiling := int64(cfg.UsageThreshold*float64(total)) - fixed
	if cfg.ChunkBytes > 0 {
		p.ModelBudget = cfg.ChunkBytes
		p.PeakBudget = ceiling
	} else {
		p.SingleBudget = true
		b := min(int64(cfg.BatchFracMax*float64(total)), ceiling)
		b = max(b, int64(cfg.BatchFracMin*float64(total)))
		p.ModelBudget, p.PeakBudget = b, b
	}
	if p.PeakBudget <= 0 {
		return nil, fmt.Errorf("staging: fixed memory %d bytes leaves nothing under the ceiling of %.0f%% of %d bytes",
			fixed, cfg.UsageThreshold*100, total)
	}

	// Resident needs the seed's condition (models + eval activations within
	// ResidentThreshold of the device) and the peak ceiling: with a large
	// M_fixed, 50% of the device on top of it would pass the usage
	// threshold.
	resident := float64(sumModel+evalAct) <= cfg.ResidentThreshold*float64(total) && sumModel+evalAct <= ceiling
	if cfg.Adaptive && resident {
		p.Mode = GPUResident
		all := ChunkPlan{Model: sumModel, Peak: sumModel + evalAct}
		for i := range items {
			all.Items = append(all.Items, i)
		}
		if len(items) > 0 {
			p.Chunks = []ChunkPlan{all}
		}
	} else {
		p.Mode = CPUStaged
		p.Chunks = pack(items, par, p.ModelBudget, p.PeakBudget)
	}
	p.LowerBound = lowerBound(items, par, p.ModelBudget, p.PeakBudget)
	if n := p.SlotsPerChunk(par); n > 0 {
		p.SlotChunks = (len(items) + n - 1) / n
	}
	for _, c := range p.Chunks {
		p.GenomesPerChunk = max(p.GenomesPerChunk, len(c.Items))
	}
	if cfg.Prefetch && p.Mode == CPUStaged {
		// Loading chunk i+1 during chunk i puts both chunks' weights and
		// chunk i's activations on the device at once: that must stay under
		// the device's ceiling (which, with the single budget, is above the
		// budget a chunk is packed to). Each pair is judged on its own, so
		// one oversize genome does not turn prefetch off for the rest.
		for i := 0; i+1 < len(p.Chunks); i++ {
			if p.Chunks[i].Peak+p.Chunks[i+1].Model <= ceiling {
				p.Chunks[i+1].Prefetched = true
				p.Prefetch = true
			}
		}
	}
	for i, c := range p.Chunks {
		peak := c.Peak
		if i+1 < len(p.Chunks) && p.Chunks[i+1].Prefetched {
			peak += p.Chunks[i+1].Model
		}
		p.PeakPredicted = max(p.PeakPredicted, peak)
	}
	return p, nil
}

// Prefetched is how many chunks load while the one before them is
// evaluated.
func (p *Plan) Prefetched() int {
	n := 0
	for _, c := range p.Chunks {
		if c.Prefetched {
			n++
		}
	}
	return n
}

// SlotsPerChunk is the seed's genomes per chunk when every slot is sized by
// the largest genome: n = ⌊ModelBudget / M_model^max⌋, lowered until
// n·M_model^max + min(n, P)·M_act^max fits the peak budget (at least 1).
func (p *Plan) SlotsPerChunk(par int) int {
	if p.MaxModel <= 0 {
		return 0
	}
	mm, ma, pp := p.MaxModel, p.MaxAct, int64(max(par, 1))
	n := p.ModelBudget / mm
	if n >= pp {
		// All P forwards' activations count: n·Mm + P·Ma ≤ peak.
		n = min(n, (p.PeakBudget-pp*ma)/mm)
	}
	if n < pp {
		// Fewer genomes than forwards: each brings its activations.
		n = min(max(n, p.ModelBudget/mm), p.PeakBudget/(mm+ma))
	}
	return int(max(n, 1))
}

// pack places items into chunks by first-fit decreasing, twice: once in
// decreasing weights, once in decreasing activations, and keeps the packing
// with fewer chunks (the first on a tie).
//
// By weights suits a weight budget that binds. When activations bind
// instead (a large eval batch, several forwards in flight), a chunk's peak
// counts the P largest activations among its genomes, and the order by
// weights scatters the genomes of large activations over many chunks, each
// paying for them; ordered by activations they share a few chunks, and the
// rest fill chunks whose top activations are small. On 3,000 generated
// genomes (the small preset, MNIST-sized) at a batch of 10,000 with P = 4,
// 16 MiB chunks on a 4 GiB device, that is 256 chunks against 289, for a
// lower bound of 225.
func pack(items []Item, par int, modelBudget, peakBudget int64) []ChunkPlan {
	byModel := packOrdered(items, par, modelBudget, peakBudget, func(a, b Item) bool { return a.Model > b.Model })
	byAct := packOrdered(items, par, modelBudget, peakBudget, func(a, b Item) bool {
		return a.Act > b.Act || a.Act == b.Act && a.Model > b.Model
	})
	if len(byAct) < len(byModel) {
		return byAct
	}
	return byModel
}

// packOrdered places items into chunks by first fit in the order less
// gives: each into the first chunk where the chunk's weights stay within the
// model budget and its peak (weights plus the P largest activations among
// its genomes) within the peak budget. Sizes vary by 100× in an evolved
// population, so this uses far fewer chunks than sizing every slot by the
// largest genome. A genome too big for any chunk is placed alone. Each chunk
// lists its genomes in population order, and the chunks are ordered by their
// first genome.
func packOrdered(items []Item, par int, modelBudget, peakBudget int64, less func(a, b Item) bool) []ChunkPlan {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return less(items[order[a]], items[order[b]]) })
	type open struct {
		ChunkPlan
		top []int64 // the P largest activations, largest first
	}
	var chunks []*open
	for _, i := range order {
		it := items[i]
		placed := false
		for _, c := range chunks {
			if c.Oversize || c.Model+it.Model > modelBudget {
				continue
			}
			top := insertTop(c.top, it.Act, par)
			model := c.Model + it.Model
			peak := model + sum(top)
			if model <= modelBudget && peak <= peakBudget {
				c.Items = append(c.Items, i)
				c.Model, c.Peak, c.top = model, peak, top
				placed = true
				break
			}
		}
		if !placed {
			c := &open{ChunkPlan: ChunkPlan{Items: []int{i}, Model: it.Model, Peak: it.Model + it.Act}, top: []int64{it.Act}}
			c.Oversize = it.Model > modelBudget || c.Peak > peakBudget
			chunks = append(chunks, c)
		}
	}
	out := make([]ChunkPlan, len(chunks))
	for k, c := range chunks {
		sort.Ints(c.Items)
		out[k] = c.ChunkPlan
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Items[0] < out[b].Items[0] })
	return out
}

// lowerBound is Plan.LowerBound.
func lowerBound(items []Item, par int, modelBudget, peakBudget int64) int {
	over := 0
	var fit []Item
	var sumModel int64
	for _, it := range items {
		if it.Model > modelBudget || it.Model+it.Act > peakBudget {
			over++
			continue
		}
		fit = append(fit, it)
		sumModel += it.Model
	}
	byWeight := 0
	if modelBudget > 0 {
		byWeight = int((sumModel + modelBudget - 1) / modelBudget)
	}
	return over + max(byWeight, peakBound(fit, par, peakBudget))
}

// peakBound is the fewest chunks the peak budget alone allows for genomes
// that fit it one by one (see Plan.LowerBound).
func peakBound(items []Item, par int, peakBudget int64) int {
	bound := 0
	for k := 1; k < par; k++ {
		n := 0
		for _, it := range items {
			if (it.Model+it.Act)*int64(k+1) > peakBudget {
				n++
			}
		}
		bound = max(bound, (n+k-1)/k)
	}
	return bound
}

// insertTop returns a copy of top (largest first, at most k values) with v
// added.
func insertTop(top []int64, v int64, k int) []int64 {
	out := make([]int64, 0, min(len(top)+1, k))
	added := false
	for _, x := range top {
		if !added && v > x {
			out = append(out, v)
			added = true
		}
		out = append(out, x)
	}
	if !added {
		out = append(out, v)
	}
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// topSum is the sum of the k largest values.
func topSum(v []int64, k int) int64 {
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] > c[j] })
	return sum(c[:min(k, len(c))])
}
