package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// planOptions are the flags of `neateval plan`.
type planOptions struct {
	ConfigPath          string
	DeviceMemory        string // "" = the configured device's memory
	JSON                bool
	Population          string
	EvalBatchSize       int
	FitnessEvalParallel int

	// set holds the names of the flags given on the command line.
	set map[string]bool
}

func newPlanFlags(o *planOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.StringVar(&o.DeviceMemory, "device-memory", "", "plan for a device of `SIZE` (16GiB, 80GB, ...) instead of opening the configured one")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of the table")
	fs.StringVar(&o.Population, "population", "", "population JSON `FILE` (population.path); empty: generate one")
	fs.IntVar(&o.EvalBatchSize, "eval-batch-size", 0, "images per forward slice, `N` (eval.eval_batch_size)")
	fs.IntVar(&o.FitnessEvalParallel, "fitness-eval-parallel", 0, "forwards in flight at once, `N` (eval.fitness_eval_parallel)")
	return fs
}

// cmdPlan parses the flags of `neateval plan` and runs it.
func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o planOptions
	fs := newPlanFlags(&o)
	if err := parseFlags(fs, args, stdout, planUsage); err != nil {
		return err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return runPlan(ctx, o, stdout)
}

// spread is the smallest, median, largest and total of a set of sizes.
type spread struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
	Total  int64 `json:"total"`
}

func spreadOf(v []int64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	out := spread{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
	for _, x := range s {
		out.Total += x
	}
	return out
}

// planChunk is one chunk of the plan, as printed.
type planChunk struct {
	Genomes    int   `json:"genomes"`
	ModelBytes int64 `json:"model_bytes"`
	PeakBytes  int64 `json:"peak_bytes"`
	Oversize   bool  `json:"oversize"`
	Prefetched bool  `json:"prefetched"`
}

// planReport is what `neateval plan` prints: the table, or with --json this
// object. The plan's keys are those of the run's "plan" log event.
type planReport struct {
	Line       string `json:"line"`
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
	Model              spread      `json:"model_bytes"`
	Act                spread      `json:"act_bytes"`
	ChunkList          []planChunk `json:"chunk_list"`
}

// runPlan is `neateval plan` once its flags are parsed: the staging plan of
// the configured population on a device, without evaluating anything.
func runPlan(ctx context.Context, o planOptions, stdout io.Writer) error {
	var total int64
	if o.set["device-memory"] {
		n, err := ParseByteSize(o.DeviceMemory)
		if err != nil {
			return usagef("plan: --device-memory: %v", err)
		}
		if n <= 0 {
			return usagef("plan: --device-memory %q: must be > 0", o.DeviceMemory)
		}
		total = int64(n)
	}
	cfg, err := loadRunConfig(runOptions{
		ConfigPath: o.ConfigPath, Population: o.Population,
		EvalBatchSize: o.EvalBatchSize, FitnessEvalParallel: o.FitnessEvalParallel, set: o.set,
	})
	if err != nil {
		return err
	}
	dt, err := vram.ParseDType(cfg.Eval.DType)
	if err != nil {
		return err
	}
	ds, err := openDataset(cfg)
	if err != nil {
		return err
	}
	pop, _, err := openPopulation(cfg, ds)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// The genomes' sizes come from a backend's memory model: the configured
	// device's own when it is opened, else the CPU backend's, whose arena
	// is mapped lazily and never touched here.
	var b evaluator.Backend
	rep := planReport{DType: dt.String()}
	if total > 0 {
		b, err = cpu.New(evaluator.BackendOptions{DType: dt, MemoryBytes: 1 << 20})
		rep.DeviceSource = "--device-memory"
	} else {
		b, err = openBackend(cfg)
	}
	if err != nil {
		if total == 0 {
			return fmt.Errorf("plan: %w (give --device-memory to plan for a device without opening one)", err)
		}
		return fmt.Errorf("plan: %w", err)
	}
	defer b.Close()
	if total == 0 {
		total, _ = b.Device().MemInfo()
		rep.DeviceSource = fmt.Sprintf("the configured %s device %s", b.Name(), b.Device().Name())
	}
	rep.Footprints = fmt.Sprintf("%s backend, %s", b.Name(), dt)

	// What the evaluator does before it plans: the batch it assumes, the
	// validation cache it puts on the device, every valid genome's
	// footprint at that batch.
	cached := cfg.VRAM.CacheValOnGPU
	rep.Batch = max(1, min(cfg.Eval.EvalBatchSize, ds.N))
	if cached {
		rep.ValCacheBytes = vram.RoundSize(max(int64(len(ds.Images))*int64(dt.Size()), 1))
	}
	rep.GraphReserveBytes = int64(cfg.VRAM.CUDAGraphMemoryReserveBytes)
	fixed := rep.ValCacheBytes + rep.GraphReserveBytes
	var items []staging.Item
	var models, acts []int64
	for i, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			rep.Invalid++
			continue
		}
		fp := b.Footprint(gr, rep.Batch, cached)
		items = append(items, staging.Item{Index: i, Model: fp.Model, Act: fp.Act})
		models, acts = append(models, fp.Model), append(acts, fp.Act)
		if fp.Model > total-fixed {
			rep.Unfit++
		}
	}
	st := stagingConfig(cfg)
	plan, err := staging.NewPlan(st, items, total, fixed)
	if err != nil {
		return fmt.Errorf("plan: a device of %s is too small for this run: %w", vram.FormatBytes(total), err)
	}

	rep.Line = plan.Line(st, len(items))
	if cfg.Population.Path != "" {
		rep.Population = cfg.Population.Path
	} else {
		rep.Population = fmt.Sprintf("generated (%s, seed %d)", cfg.Population.GeneratePreset, cfg.Population.GenerateSeed)
	}
	rep.Genomes = len(pop.Genomes)
	rep.Dataset = ds.Name
	rep.Images = ds.N
	rep.TotalBytes, rep.FixedBytes = total, fixed
	rep.Mode, rep.Adaptive, rep.SingleBudget = string(plan.Mode), st.Adaptive, plan.SingleBudget
	rep.ModelBudgetBytes, rep.PeakBudgetBytes = plan.ModelBudget, plan.PeakBudget
	rep.UsageThreshold, rep.ResidentThreshold = st.UsageThreshold, st.ResidentThreshold
	rep.BatchFracMin, rep.BatchFracMax = st.BatchFracMin, st.BatchFracMax
	rep.EvalBatchSize, rep.Parallel = cfg.Eval.EvalBatchSize, max(st.Parallel, 1)
	rep.Chunks, rep.LowerBound, rep.ByLargest = len(plan.Chunks), plan.LowerBound, plan.SlotChunks
	rep.GenomesPerChunk, rep.Prefetch, rep.Prefetched = plan.GenomesPerChunk, plan.Prefetch, plan.Prefetched()
	rep.PeakPredictedBytes = plan.PeakPredicted
	rep.Model, rep.Act = spreadOf(models), spreadOf(acts)
	rep.ChunkList = make([]planChunk, len(plan.Chunks))
	for k, c := range plan.Chunks {
		rep.ChunkList[k] = planChunk{Genomes: len(c.Items), ModelBytes: c.Model, PeakBytes: c.Peak, Oversize: c.Oversize, Prefetched: c.Prefetched}
		if c.Oversize {
			rep.Oversize++
		}
	}

	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	_, err = io.WriteString(stdout, rep.text())
	return err
}

// planRows is how many chunks the table lists before "… N more".
const planRows = 20

// text is the report as a table: the POP line, the figures, one row per
// chunk.
func (r *planReport) text() string {
	var sb strings.Builder
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&sb, "%-16s %s\n", name, fmt.Sprintf(format, args...))
	}
	fb := vram.FormatBytes
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	sb.WriteString(r.Line + "\n\n")
	row("population", "%s: %d genomes, %d invalid (not planned)", r.Population, r.Genomes, r.Invalid)
	row("data set", "%s: %d images", r.Dataset, r.Images)
	row("footprints", "%s", r.Footprints)
	row("device memory", "%s (%s)", fb(r.TotalBytes), r.DeviceSource)
	row("fixed", "%s = validation cache %s + graph reserve %s", fb(r.FixedBytes), fb(r.ValCacheBytes), fb(r.GraphReserveBytes))
	mode := r.Mode
	if !r.Adaptive {
		mode += " (adaptive_population_vram = false: always staged)"
	} else if r.Mode == string(staging.GPUResident) {
		mode += fmt.Sprintf(" (models + activations ≤ %.0f%% of device memory)", r.ResidentThreshold*100)
	}
	row("mode", "%s", mode)
	if r.SingleBudget {
		row("budget", "%s for weights and activations together (%.0f–%.0f%% of device memory)",
			fb(r.ModelBudgetBytes), r.BatchFracMin*100, r.BatchFracMax*100)
	} else {
		row("model budget", "%s of weights per chunk (population_gpu_chunk_bytes)", fb(r.ModelBudgetBytes))
		row("peak budget", "%s (%.0f%% of device memory − fixed)", fb(r.PeakBudgetBytes), r.UsageThreshold*100)
	}
	forwards := "forward"
	if r.Parallel != 1 {
		forwards += "s"
	}
	row("batch assumed", "%d images (eval_batch_size %d), %d %s in flight (fitness_eval_parallel)", r.Batch, r.EvalBatchSize, r.Parallel, forwards)
	row("chunks", "%d (lower bound %d; %d sizing every slot by the largest genome)", r.Chunks, r.LowerBound, r.ByLargest)
	row("prefetch", "%s (%d of %d chunks load while the one before is evaluated)", yes(r.Prefetch), r.Prefetched, r.Chunks)
	row("predicted peak", "%s", fb(r.PeakPredictedBytes))
	row("M_model", "min %s, median %s, max %s, total %s", fb(r.Model.Min), fb(r.Model.Median), fb(r.Model.Max), fb(r.Model.Total))
	row("M_act", "min %s, median %s, max %s (at %d images)", fb(r.Act.Min), fb(r.Act.Median), fb(r.Act.Max), r.Batch)
	if r.Oversize > 0 {
		row("oversize", "%d genomes over the budget on their own: each is scored alone, its batch shrunk", r.Oversize)
	}
	if r.Unfit > 0 {
		row("too large", "%d genomes' weights exceed device memory − fixed: they will get an error result", r.Unfit)
	}
	if len(r.ChunkList) == 0 {
		return sb.String()
	}
	fmt.Fprintf(&sb, "\n%6s %8s %12s %12s\n", "chunk", "genomes", "weights", "peak")
	for k, c := range r.ChunkList {
		if k == planRows && len(r.ChunkList) > planRows+1 {
			fmt.Fprintf(&sb, "… %d more\n", len(r.ChunkList)-planRows)
			break
		}
		var flags []string
		if c.Oversize {
			flags = append(flags, "oversize")
		}
		if c.Prefetched {
			flags = append(flags, "prefetched")
		}
		line := fmt.Sprintf("%6d %8d %12s %12s  %s", k+1, c.Genomes, fb(c.ModelBytes), fb(c.PeakBytes), strings.Join(flags, ", "))
		sb.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return sb.String()
}
