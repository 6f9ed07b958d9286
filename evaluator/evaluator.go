package evaluator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Metrics are what one genome's evaluation measured; a FitnessFunc turns
// them into its fitness.
type Metrics struct {
	Accuracy float64
	Loss     float64
	Images   int
	Params   int64
	FLOPs    int64 // per image
}

// FitnessFunc computes a genome's fitness from its metrics. Higher is
// better.
type FitnessFunc func(Metrics) float64

// Accuracy is the default fitness: the share of images classified right.
func Accuracy(m Metrics) float64 { return m.Accuracy }

// NegLoss is the fitness −loss.
func NegLoss(m Metrics) float64 { return -m.Loss }

// Result is one genome's evaluation. When Err is not nil, the genome was not
// scored (invalid, or its logits were not finite, or it could not fit on the
// device even one image at a time) and Fitness, Accuracy and Loss are NaN.
type Result struct {
	Index    int // position in the population
	GenomeID int64
	Fitness  float64
	Accuracy float64
	Loss     float64
	Images   int // images seen; 0 for an invalid genome
	Params   int64
	FLOPs    int64
	Err      error
	Seconds  float64 // wall time of this genome's forwards
	Batch    int     // the batch size its last slice ran at
	// Shrinks, Grows and OOMs are what the batch controller did for this
	// genome (vram.RunStats): batch decreases, increases, and slices that
	// ran out of memory.
	Shrinks, Grows, OOMs int
}

// OK says whether the genome was scored.
func (r *Result) OK() bool { return r.Err == nil }

func failed(index int, id int64, err error) Result {
	nan := math.NaN()
	return Result{Index: index, GenomeID: id, Fitness: nan, Accuracy: nan, Loss: nan, Err: err}
}

// Options configure an Evaluator. The zero value of a field means its
// default.
type Options struct {
	// EvalBatchSize is the number of images per forward the batch controller
	// starts at (default vram.DefaultEvalBatchSize, the seed's 45000); it
	// shrinks on out-of-memory.
	EvalBatchSize int
	// Parallel is fitness_eval_parallel: how many genomes' forwards run at
	// once (default 1).
	Parallel int
	// Threads is the CPU thread budget of all forwards together (default:
	// GOMAXPROCS). Each forward gets Threads / Parallel of them.
	Threads int
	// VRAMUsageThreshold is the share of device memory above which the
	// batch controller shrinks before an OOM (default vram.DefaultThreshold,
	// 0.80).
	VRAMUsageThreshold float64
	// CacheData keeps the validation set on the device for the whole run.
	CacheData bool
	// Fitness computes fitness from metrics (default Accuracy).
	Fitness FitnessFunc
	// Logger receives the evaluator's log events (default: none).
	Logger *zerolog.Logger
	// OnResult, when set, is called once per genome as soon as it is
	// scored, from the goroutine that scored it.
	OnResult func(Result)
	// OnBatchChange, when set, is told every change of the batch size the
	// batch controller makes (vram.ControllerConfig.OnChange).
	OnBatchChange func(old, next int, reason string)
}

func (o *Options) defaults() {
	if o.EvalBatchSize <= 0 {
		o.EvalBatchSize = vram.DefaultEvalBatchSize
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.VRAMUsageThreshold <= 0 {
		o.VRAMUsageThreshold = vram.DefaultThreshold
	}
	if o.Fitness == nil {
		o.Fitness = Accuracy
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
}

// ThreadsPerForward is the CPU threads each of the parallel forwards gets.
func ThreadsPerForward(threads, parallel int) int {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return max(1, threads/max(parallel, 1))
}

// needOf is what forwards of g need on the device for the batch
// controller, as a function of their slice: from the backend's Footprint at
// 1 and 1,025 images.
func needOf(b Backend, g *neat.Graph, d Data) vram.Need {
	cached := d.Bytes() > 0
	fp1, fp2 := b.Footprint(g, 1, cached), b.Footprint(g, 1025, cached)
	per := (fp2.Act - fp1.Act) / 1024
	return vram.Need{Model: fp1.Model, ActPerImage: per, ActFixed: max(fp1.Act-per, 0)}
}

// scoreGenome runs every image of d through a loaded model under the batch
// controller, with the model's need (needOf), and turns the reductions into
// a Result. An out-of-memory that the controller could not get around
// becomes the genome's error result; any other error (a cancelled context
// among them) is returned.
func scoreGenome(ctx context.Context, b Backend, ctl *vram.BatchController, o *Options, index int, m Model, d Data, need vram.Need) (Result, error) {
	g := m.Graph()
	start := time.Now()
	var total SliceStats
	rs, err := ctl.Run(ctx, vram.Job{Genome: g.GenomeID, Need: need}, d.Len(), func(lo, hi int) error {
		st, err := b.Forward(ctx, m, d, lo, hi)
		if err != nil {
			return err
		}
		total.Add(st)
		return nil
	})
	if err != nil {
		if errors.Is(err, vram.ErrOutOfMemory) && ctx.Err() == nil {
			r := failed(index, g.GenomeID, fmt.Errorf("genome %d: %w", g.GenomeID, err))
			r.Shrinks, r.Grows, r.OOMs = rs.Shrinks, rs.Grows, rs.OOMs
			return r, nil
		}
		return Result{}, err
	}
	r := Result{
		Index: index, GenomeID: g.GenomeID, Images: total.Images,
		Params: g.Params, FLOPs: g.FLOPs,
		Seconds: time.Since(start).Seconds(), Batch: rs.FinalBatch,
		Shrinks: rs.Shrinks, Grows: rs.Grows, OOMs: rs.OOMs,
	}
	if total.NonFinite > 0 {
		nan := math.NaN()
		r.Fitness, r.Accuracy, r.Loss = nan, nan, nan
		r.Err = fmt.Errorf("genome %d: non-finite logits (NaN or ±Inf) on %d of %d images", g.GenomeID, total.NonFinite, total.Images)
		return r, nil
	}
	r.Accuracy = float64(total.Correct) / float64(total.Images)
	r.Loss = total.LossSum.Float64() / float64(total.Images)
	r.Fitness = o.Fitness(Metrics{Accuracy: r.Accuracy, Loss: r.Loss, Images: r.Images, Params: r.Params, FLOPs: r.FLOPs})
	return r, nil
}
