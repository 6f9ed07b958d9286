package staging

import (
	"fmt"

	"github.com/rs/zerolog"
)

// EventPlan is the manager's one event (the "event" field): the plan of a
// generation, whose message is the seed's POP line.
const EventPlan = "plan"

// Field keys of the plan event; trackers read these instead of parsing the
// message.
const (
	KeyEvent           = "event"
	KeyMode            = "mode"
	KeyTotalBytes      = "total_bytes"
	KeyFixedBytes      = "fixed_bytes"
	KeyModelBudget     = "model_budget_bytes"
	KeyPeakBudget      = "peak_budget_bytes"
	KeyPeakPredicted   = "peak_predicted_bytes"
	KeyGenomes         = "genomes"
	KeyGenomesPerChunk = "genomes_per_chunk"
	KeyChunks          = "chunks"
	KeyLowerBound      = "chunks_lower_bound"
	KeySlotChunks      = "chunks_by_largest"
	KeyPrefetch        = "prefetch"
	KeyPrefetched      = "chunks_prefetched"
	KeySingleBudget    = "single_budget"
)

// gb writes bytes in the seed's log unit: binary gigabytes, written "GB" as
// the seed's line does (2 GiB prints as 2.00 GB; 0.8 × 16 GiB as 12.80 GB).
func gb(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/(1<<30)) }

// decimalGB writes bytes in decimal gigabytes. The seed's worked example
// writes the chunk's weight budget this way: population_gpu_chunk_bytes =
// 2_000_000_000 prints as models≤2.00 GB, beside a peak in binary GB.
func decimalGB(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

// Line is the plan's POP line, in the seed's shape:
//
//	POP | CPU staged | models≤2.00 GB peak≤12.80 GB (80% VRAM−overhead) | 312 genomes/chunk
//	POP | GPU resident | models=0.12 GB peak≤0.40 GB (≤50% VRAM) | 10000 genomes
func (p *Plan) Line(cfg Config, genomes int) string {
	if p.Mode == GPUResident {
		var peak int64
		if len(p.Chunks) > 0 {
			peak = p.Chunks[0].Peak
		}
		return fmt.Sprintf("POP | GPU resident | models=%s peak≤%s (≤%.0f%% VRAM) | %d genomes",
			gb(sumModels(p)), gb(peak), cfg.ResidentThreshold*100, genomes)
	}
	if p.SingleBudget {
		return fmt.Sprintf("POP | CPU staged | models+act≤%s (%.0f–%.0f%% VRAM) | %d genomes/chunk",
			gb(p.PeakBudget), cfg.BatchFracMin*100, cfg.BatchFracMax*100, p.GenomesPerChunk)
	}
	return fmt.Sprintf("POP | CPU staged | models≤%s peak≤%s (%.0f%% VRAM−overhead) | %d genomes/chunk",
		decimalGB(p.ModelBudget), gb(p.PeakBudget), cfg.UsageThreshold*100, p.GenomesPerChunk)
}

func sumModels(p *Plan) int64 {
	var s int64
	for _, c := range p.Chunks {
		s += c.Model
	}
	return s
}

func logPlan(log zerolog.Logger, p *Plan, cfg Config, genomes int) {
	log.Info().
		Str(KeyEvent, EventPlan).
		Str(KeyMode, string(p.Mode)).
		Int64(KeyTotalBytes, p.Total).
		Int64(KeyFixedBytes, p.Fixed).
		Int64(KeyModelBudget, p.ModelBudget).
		Int64(KeyPeakBudget, p.PeakBudget).
		Int64(KeyPeakPredicted, p.PeakPredicted).
		Bool(KeySingleBudget, p.SingleBudget).
		Int(KeyGenomes, genomes).
		Int(KeyGenomesPerChunk, p.GenomesPerChunk).
		Int(KeyChunks, len(p.Chunks)).
		Int(KeyLowerBound, p.LowerBound).
		Int(KeySlotChunks, p.SlotChunks).
		Bool(KeyPrefetch, p.Prefetch).
		Int(KeyPrefetched, p.Prefetched()).
		Msg(p.Line(cfg, genomes))
}
