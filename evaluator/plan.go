package evaluator

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// PlanSpec is what a dry run plans for: a population scored on a number of
// images by a backend's memory model, on a device of a given size.
type PlanSpec struct {
	Population *neat.Population
	// Images is the number of validation images, ImageSize the values of
	// one (channels × height × width).
	Images, ImageSize int
	// Options are the evaluator's (EvalBatchSize, CacheData matter).
	Options Options
	Staging staging.Config
	// Total is the device memory to plan for; 0: the backend's own.
	Total int64
}

// DryRun is the plan Evaluate would make, and what it was made from.
type DryRun struct {
	*staging.Plan
	// Items are the valid genomes' footprints at Batch images.
	Items []staging.Item
	// Invalid genomes are not planned (Evaluate gives them an error
	// result); Unfit ones' weights alone exceed the device less the fixed
	// memory (they will get an error result too).
	Invalid, Unfit int
	// Batch is the batch the footprints assume: eval_batch_size capped at
	// the number of images.
	Batch int
	// ValCacheBytes is the validation set on the device (0 without the
	// cache), GraphReserveBytes cuda_graph_memory_reserve_bytes: together
	// the fixed memory.
	ValCacheBytes, GraphReserveBytes int64
}

// Plan is a dry run of Evaluate's planning: every genome compiled and sized
// by b's memory model exactly as Evaluate sizes it, and the staging plan
// made for a device of s.Total bytes, without loading or scoring anything
// (nor allocating: the device may be one that is not at hand).
func Plan(b Backend, s PlanSpec) (*DryRun, error) {
	s.Options.defaults()
	total := s.Total
	if total <= 0 {
		total, _ = b.Device().MemInfo()
	}
	d := &DryRun{Batch: batchFor(s.Options.EvalBatchSize, s.Images), GraphReserveBytes: s.Staging.GraphReserve}
	if s.Options.CacheData {
		d.ValCacheBytes = vram.RoundSize(max(int64(s.Images)*int64(s.ImageSize)*int64(b.DType().Size()), 1))
	}
	graphs := map[int]*neat.Graph{}
	var order []int
	for i, g := range Compile(s.Population).Graphs {
		if g == nil {
			d.Invalid++
			continue
		}
		graphs[i] = g
		order = append(order, i)
	}
	d.Items = items(b, graphs, order, d.Batch, s.Options.CacheData)
	for _, it := range d.Items {
		if it.Model > total-d.ValCacheBytes-d.GraphReserveBytes {
			d.Unfit++
		}
	}
	st := s.Staging
	st.Parallel = s.Options.Parallel
	p, err := staging.NewPlan(st, d.Items, total, d.ValCacheBytes+d.GraphReserveBytes)
	if err != nil {
		return nil, fmt.Errorf("a device of %s is too small for this run: %w", vram.FormatBytes(total), err)
	}
	d.Plan = p
	return d, nil
}

// batchFor is the batch the planner assumes: eval_batch_size capped at the
// number of images.
func batchFor(evalBatch, images int) int { return max(1, min(evalBatch, images)) }

// items sizes compiled genomes for the planner at batch images, with the
// data set on the device (cached) or streamed.
// The genomes are sized on all cores: sizing 10,000 small genomes took a
// second on one.
func items(b Backend, graphs map[int]*neat.Graph, order []int, batch int, cached bool) []staging.Item {
	out := make([]staging.Item, len(order))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(order)/64, 1)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= len(order) {
					return
				}
				idx := order[k]
				fp := b.Footprint(graphs[idx], batch, cached)
				out[k] = staging.Item{Index: idx, Model: fp.Model, Act: fp.Act}
			}
		})
	}
	wg.Wait()
	return out
}
