package run

import (
	"context"
	"fmt"
	"slices"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/staging"
)

// PlanSpec asks for the memory plan of a configured run.
type PlanSpec struct {
	Config *config.Config // validated
	// DeviceMemory plans for a device of this many bytes without opening
	// one (the CPU backend's memory model sizes the genomes); 0 opens the
	// configured backend and plans for its device.
	DeviceMemory int64
}

// Spread is the smallest, median, largest and total of a set of sizes.
type Spread struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
	Total  int64 `json:"total"`
}

// PlanChunk is one chunk of a plan.
type PlanChunk struct {
	Genomes    int   `json:"genomes"`
	ModelBytes int64 `json:"model_bytes"`
	PeakBytes  int64 `json:"peak_bytes"`
	Oversize   bool  `json:"oversize"`
	Prefetched bool  `json:"prefetched"`
}

// PlanReport is the staging plan of a run and what it was made from; its
// keys are those of the run's "plan" log event where they share a meaning.
type PlanReport struct {
	Line       string `json:"line"` // the seed's POP line
	Population string `json:"population"`
	Genomes    int    `json:"genomes"`
	Invalid    int    `json:"invalid"`
	Dataset    string `json:"dataset"`
	Images     int    `json:"images"`
	DType      string `json:"dtype"`
	// Footprints names the memory model the genomes' sizes come from.
	Footprints string `json:"footprints"`

	TotalBytes        int64  `json:"total_bytes"`
	DeviceSource      string `json:"device_source"`
	FixedBytes        int64  `json:"fixed_bytes"`
	ValCacheBytes     int64  `json:"val_cache_bytes"`
	GraphReserveBytes int64  `json:"graph_reserve_bytes"`

	Mode              string  `json:"mode"`
	Adaptive          bool    `json:"adaptive"`
	SingleBudget      bool    `json:"single_budget"`
	ModelBudgetBytes  int64   `json:"model_budget_bytes"`
	PeakBudgetBytes   int64   `json:"peak_budget_bytes"`
	UsageThreshold    float64 `json:"vram_usage_threshold"`
	ResidentThreshold float64 `json:"population_vram_resident_threshold"`
	BatchFracMin      float64 `json:"population_gpu_batch_frac_min"`
	BatchFracMax      float64 `json:"population_gpu_batch_frac_max"`
	Batch             int     `json:"batch"`
	EvalBatchSize     int     `json:"eval_batch_size"`
	Parallel          int     `json:"parallel"`

	Chunks             int         `json:"chunks"`
	LowerBound         int         `json:"chunks_lower_bound"`
	ByLargest          int         `json:"chunks_by_largest"`
	GenomesPerChunk    int         `json:"genomes_per_chunk"`
	Prefetch           bool        `json:"prefetch"`
	Prefetched         int         `json:"chunks_prefetched"`
	PeakPredictedBytes int64       `json:"peak_predicted_bytes"`
	Oversize           int         `json:"oversize"`
	Unfit              int         `json:"unfit"`
	Model              Spread      `json:"model_bytes"`
	Act                Spread      `json:"act_bytes"`
	ChunkList          []PlanChunk `json:"chunk_list"`
}

// Plan is the staging plan of the configured population on a device,
// without evaluating anything: the evaluator's own planning
// (evaluator.Plan) on the configured data set and backend.
func Plan(ctx context.Context, spec PlanSpec) (*PlanReport, error) {
	cfg := spec.Config
	ds, err := openDataset(cfg.DatasetSpec())
	if err != nil {
		return nil, err
	}
	pop, _, err := loadPopulation(&cfg.Population, ds)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts, err := cfg.BackendOptions(nil)
	if err != nil {
		return nil, err
	}
	// The genomes' sizes come from a backend's memory model: the configured
	// device's own when it is opened, else the CPU backend's, whose arena
	// is mapped lazily and never touched here.
	rep := &PlanReport{DType: opts.DType.String(), TotalBytes: spec.DeviceMemory, DeviceSource: "--device-memory"}
	var b evaluator.Backend
	if spec.DeviceMemory > 0 {
		opts.MemoryBytes = 1 << 20
		b, err = evaluator.OpenBackend("cpu", opts)
	} else {
		b, err = cfg.OpenBackend(nil)
	}
	if err != nil {
		return nil, err
	}
	defer b.Close()
	cfg = cfg.WithParallel(b)
	if spec.DeviceMemory == 0 {
		rep.TotalBytes, _ = b.Device().MemInfo()
		rep.DeviceSource = fmt.Sprintf("the configured %s device %s", b.Name(), b.Device().Name())
	}
	rep.Footprints = fmt.Sprintf("%s backend, %s", b.Name(), opts.DType)
	st := cfg.StagingConfig()
	d, err := evaluator.Plan(b, evaluator.PlanSpec{
		Population: pop, Images: ds.N, ImageSize: ds.ImageSize(),
		Options: cfg.EvaluatorOptions(nil), Staging: st, Total: rep.TotalBytes,
	})
	if err != nil {
		return nil, err
	}
	rep.Population, rep.Genomes, rep.Dataset, rep.Images = cfg.Population.Name(), len(pop.Genomes), ds.Name, ds.N
	rep.fill(d, st, cfg.Eval.EvalBatchSize)
	return rep, nil
}

// fill copies the dry run's figures into the report.
func (r *PlanReport) fill(d *evaluator.DryRun, st staging.Config, evalBatch int) {
	r.Line = d.Line(st, len(d.Items))
	r.Invalid, r.Unfit, r.Batch = d.Invalid, d.Unfit, d.Batch
	r.ValCacheBytes, r.GraphReserveBytes = d.ValCacheBytes, d.GraphReserveBytes
	r.FixedBytes = d.ValCacheBytes + d.GraphReserveBytes
	r.Mode, r.Adaptive, r.SingleBudget = string(d.Mode), st.Adaptive, d.SingleBudget
	r.ModelBudgetBytes, r.PeakBudgetBytes = d.ModelBudget, d.PeakBudget
	r.UsageThreshold, r.ResidentThreshold = st.UsageThreshold, st.ResidentThreshold
	r.BatchFracMin, r.BatchFracMax = st.BatchFracMin, st.BatchFracMax
	r.EvalBatchSize, r.Parallel = evalBatch, max(st.Parallel, 1)
	r.Chunks, r.LowerBound, r.ByLargest = len(d.Chunks), d.LowerBound, d.SlotChunks
	r.GenomesPerChunk, r.Prefetch, r.Prefetched = d.GenomesPerChunk, d.Prefetch, d.Prefetched()
	r.PeakPredictedBytes = d.PeakPredicted
	var models, acts []int64
	for _, it := range d.Items {
		models, acts = append(models, it.Model), append(acts, it.Act)
	}
	r.Model, r.Act = spreadOf(models), spreadOf(acts)
	r.ChunkList = make([]PlanChunk, len(d.Chunks))
	for k, c := range d.Chunks {
		r.ChunkList[k] = PlanChunk{Genomes: len(c.Items), ModelBytes: c.Model, PeakBytes: c.Peak, Oversize: c.Oversize, Prefetched: c.Prefetched}
		if c.Oversize {
			r.Oversize++
		}
	}
}

func spreadOf(v []int64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	out := Spread{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
	for _, x := range s {
		out.Total += x
	}
	return out
}
