package tfevents

import (
	"math"
	"slices"
)

// Tags of the scalars neateval writes. TensorBoard groups charts by the
// part before the slash. They are part of the output schema: stable.
const (
	// Per generation of `neateval evolve`, at step = the generation.
	TagBestFitness   = "generation/best_fitness"
	TagMeanFitness   = "generation/mean_fitness"
	TagMedianFitness = "generation/median_fitness"
	TagSpecies       = "generation/species"
	TagEvaluated     = "generation/evaluated"
	TagFailed        = "generation/failed"
	TagBestParams    = "best/params"
	TagBestFLOPs     = "best/flops"

	// Per run (a `neateval run`, or one generation's scoring in evolve),
	// at step = the run's (generation's) number.
	TagThroughput         = "run/images_genomes_per_s"
	TagPeakPredictedBytes = "run/peak_predicted_bytes"
	TagPeakAllocatedBytes = "run/peak_allocated_bytes"

	// Each change of the evaluation batch size, at step = the change's
	// number (0, 1, 2, ... in the file).
	TagBatchSize = "run/batch_size"
)

// Generation is what one generation of an evolution run records.
type Generation struct {
	Gen                int
	Best, Mean, Median float64 // fitness
	Species            int
	BestParams         int64 // the generation's best genome's
	BestFLOPs          int64 // FLOPs per image of the generation's best genome
	Evaluated, Failed  int   // genomes scored in the generation, and those that got an error
}

// Generation writes g's scalars as one event at step g.Gen.
func (w *Writer) Generation(g Generation) error {
	return w.Scalars(int64(g.Gen),
		Value{TagBestFitness, float32(g.Best)},
		Value{TagMeanFitness, float32(g.Mean)},
		Value{TagMedianFitness, float32(g.Median)},
		Value{TagSpecies, float32(g.Species)},
		Value{TagBestParams, float32(g.BestParams)},
		Value{TagBestFLOPs, float32(g.BestFLOPs)},
		Value{TagEvaluated, float32(g.Evaluated)},
		Value{TagFailed, float32(g.Failed)},
	)
}

// Run is what one scoring of a population records.
type Run struct {
	Step               int64
	ImagesGenomesPerS  float64 // throughput: images × genomes scored per second
	PeakPredictedBytes int64   // the staging plan's predicted peak device memory
	PeakAllocatedBytes int64   // the device allocator's peak, as measured; 0: unknown, not written
}

// Run writes r's scalars as one event at step r.Step.
func (w *Writer) Run(r Run) error {
	vals := []Value{
		{TagThroughput, float32(r.ImagesGenomesPerS)},
		{TagPeakPredictedBytes, float32(r.PeakPredictedBytes)},
	}
	if r.PeakAllocatedBytes > 0 {
		vals = append(vals, Value{TagPeakAllocatedBytes, float32(r.PeakAllocatedBytes)})
	}
	return w.Scalars(r.Step, vals...)
}

// BatchSize records that the evaluation batch size became batch. Each call
// is the next step, so TensorBoard draws the sequence of changes; call it
// with the configured size first, then from the batch controller's
// shrink and grow callbacks.
func (w *Writer) BatchSize(batch int) error {
	w.mu.Lock()
	step := w.batchN
	w.batchN++
	w.mu.Unlock()
	return w.Scalar(TagBatchSize, step, float64(batch))
}

// FitnessStats are the best, mean and median of a generation's fitness,
// leaving out NaN (genomes not scored); all NaN when none was scored.
func FitnessStats(fitness []float64) (best, mean, median float64) {
	xs := make([]float64, 0, len(fitness))
	for _, f := range fitness {
		if !math.IsNaN(f) {
			xs = append(xs, f)
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	n := len(xs)
	median = xs[n/2]
	if n%2 == 0 {
		median = (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n-1], sum / float64(n), median
}
