package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// planOptions are the flags of `neateval plan` that set no config key.
type planOptions struct {
	ConfigPath   string
	DeviceMemory string // "" = the configured device's memory
	JSON         bool
}

func newPlanFlags(o *planOptions) (*flag.FlagSet, *config.Overrides) {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.StringVar(&o.ConfigPath, "config", "", "config `FILE` (TOML); without it, the built-in defaults (= the shipped config.toml)")
	fs.StringVar(&o.DeviceMemory, "device-memory", "", "plan for a device of `SIZE` (16GiB, 80GB, ...) instead of opening the configured one")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of the table")
	ov := config.NewOverrides(fs)
	ov.Bind("population", "population.path", "population JSON `FILE` (population.path); empty: generate one")
	ov.Bind("eval-batch-size", "eval.eval_batch_size", "images per forward slice, `N` (eval.eval_batch_size)")
	ov.Bind("fitness-eval-parallel", "eval.fitness_eval_parallel", "forwards in flight at once, `N` (eval.fitness_eval_parallel)")
	return fs, ov
}

// cmdPlan is `neateval plan`: the staging plan of the configured
// population on a device (run.Plan), as a table or JSON.
func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o planOptions
	fs, ov := newPlanFlags(&o)
	if err := parseFlags(fs, args, stdout, planUsage); err != nil {
		return err
	}
	var total int64
	if o.DeviceMemory != "" {
		n, err := config.ParseByteSize(o.DeviceMemory)
		if err != nil {
			return usagef("plan: --device-memory: %v", err)
		}
		if n <= 0 {
			return usagef("plan: --device-memory %q: must be > 0", o.DeviceMemory)
		}
		total = int64(n)
	}
	cfg, err := ov.Load(o.ConfigPath)
	if err != nil {
		return err
	}
	rep, err := run.Plan(ctx, run.PlanSpec{Config: cfg, DeviceMemory: total})
	if err != nil {
		if total == 0 {
			return fmt.Errorf("plan: %w (give --device-memory to plan for a device without opening one)", err)
		}
		return fmt.Errorf("plan: %w", err)
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	_, err = io.WriteString(stdout, planText(rep))
	return err
}

// planRows is how many chunks the table lists before "… N more".
const planRows = 20

// planText is the report as a table: the POP line, the figures, one row
// per chunk.
func planText(r *run.PlanReport) string {
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
