package evaluator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// Evaluator scores populations on one backend and one validation set. It is
// made once for an experiment: the data set is put on the device once (when
// CacheData), and each generation's population is handed to Evaluate.
type Evaluator struct {
	b    Backend
	ds   *datasets.Dataset
	data Data
	opts Options
	ctl  *vram.BatchController
	mgr  *staging.Manager
}

// New prepares an evaluator: it makes the data set available to the backend
// and sets up the batch controller and the staging manager. The backend
// stays the caller's to close, after Close.
func New(b Backend, ds *datasets.Dataset, st staging.Config, opts Options) (*Evaluator, error) {
	opts.defaults()
	st.Parallel = opts.Parallel
	data, err := b.PrepareData(ds, opts.CacheData)
	if err != nil {
		return nil, err
	}
	ctl := vram.NewBatchController(vram.ControllerConfig{
		Start:     opts.EvalBatchSize,
		Threshold: opts.VRAMUsageThreshold,
		Min:       1,
		OnChange:  opts.OnBatchChange,
	}, b.Device(), *opts.Logger)
	return &Evaluator{
		b: b, ds: ds, data: data, opts: opts, ctl: ctl,
		mgr: staging.NewManager(st, b.Device(), *opts.Logger),
	}, nil
}

// Close releases the data set from the device.
func (e *Evaluator) Close() { e.data.Release() }

// Backend is the backend the evaluator computes on.
func (e *Evaluator) Backend() Backend { return e.b }

// Manager is the staging manager, for programs that drive the chunk
// lifecycle themselves.
func (e *Evaluator) Manager() *staging.Manager { return e.mgr }

// Controller is the batch controller shared by every genome's forwards.
func (e *Evaluator) Controller() *vram.BatchController { return e.ctl }

// CheckPopulation says whether a population's input shape and class count
// fit the evaluator's data set.
func (e *Evaluator) CheckPopulation(pop *neat.Population) error {
	in, ds := pop.Input, e.ds
	if in.Channels != ds.Channels || in.Height != ds.Height || in.Width != ds.Width {
		return fmt.Errorf("the population's input is %d×%d×%d but the data set %s has %d×%d×%d images",
			in.Channels, in.Height, in.Width, ds.Name, ds.Channels, ds.Height, ds.Width)
	}
	if pop.NumClasses != ds.NumClasses {
		return fmt.Errorf("the population has %d classes but the data set %s has %d",
			pop.NumClasses, ds.Name, ds.NumClasses)
	}
	return nil
}

// Batch is the batch size the planner assumes: eval_batch_size, capped at
// the number of images.
func (e *Evaluator) Batch() int { return batchFor(e.opts.EvalBatchSize, e.data.Len()) }

// Items turns compiled genomes into the planner's items.
func (e *Evaluator) Items(graphs map[int]*neat.Graph, order []int) []staging.Item {
	return items(e.b, graphs, order, e.Batch(), e.data.Bytes() > 0)
}

// Evaluate scores every genome of the population and returns one result per
// genome, in population order. An invalid genome, one whose logits are not
// finite, or one that cannot fit on the device even one image at a time gets
// a result with its error; the others are scored. onChunk, when not nil, is
// called with each finished chunk's results (the invalid genomes' first), so
// a caller can store them as they come.
//
// When ctx is cancelled, Evaluate stops between slices and returns ctx's
// error with the results: those not finished have ErrNotEvaluated. Any
// error other than an out-of-memory or a genome's own fault stops the run
// the same way.
func (e *Evaluator) Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]Result) error) ([]Result, error) {
	if err := e.CheckPopulation(pop); err != nil {
		return nil, err
	}
	return e.EvaluateCompiled(ctx, pop, Compile(pop), onChunk)
}

// EvaluateCompiled is Evaluate of a population already compiled: c is
// Compile(pop), or its Subset for a population of some of its genomes.
func (e *Evaluator) EvaluateCompiled(ctx context.Context, pop *neat.Population, c *Compiled, onChunk func([]Result) error) ([]Result, error) {
	if err := e.CheckPopulation(pop); err != nil {
		return nil, err
	}
	if err := c.check(pop); err != nil {
		return nil, err
	}
	results := make([]Result, len(pop.Genomes))
	for i, g := range pop.Genomes {
		results[i] = failed(i, g.ID, ErrNotEvaluated)
	}
	var invalid []Result
	graphs := map[int]*neat.Graph{}
	var order []int
	for i, g := range c.Graphs {
		if c.Errs[i] != nil {
			r := failed(i, pop.Genomes[i].ID, c.Errs[i])
			results[i] = r
			invalid = append(invalid, r)
			continue
		}
		graphs[i] = g
		order = append(order, i)
	}
	for _, r := range invalid {
		e.opts.Logger.Warn().Str(KeyEvent, EventGenomeInvalid).Int64(KeyGenome, r.GenomeID).Int(KeyIndex, r.Index).Msg(r.Err.Error())
		if e.opts.OnResult != nil {
			e.opts.OnResult(r)
		}
	}
	if len(invalid) > 0 && onChunk != nil {
		if err := onChunk(invalid); err != nil {
			return results, err
		}
	}
	if len(order) == 0 {
		return results, nil
	}
	err := e.evaluateGraphs(ctx, graphs, order, func(rs []Result) error {
		for _, r := range rs {
			results[r.Index] = r
		}
		if onChunk != nil {
			return onChunk(rs)
		}
		return nil
	})
	return results, err
}

// ErrNotEvaluated is the error of a genome's result when the run stopped
// before the genome was scored.
var ErrNotEvaluated = errors.New("not evaluated: the run stopped first")

// evaluateGraphs runs the staging lifecycle over the compiled genomes.
func (e *Evaluator) evaluateGraphs(ctx context.Context, graphs map[int]*neat.Graph, order []int, emit func([]Result) error) error {
	items := e.Items(graphs, order)
	fixed := e.b.Device().Stats().Allocated
	load := func(idx int) (staging.Resident, error) { return e.b.Load(graphs[idx]) }
	plan, err := e.mgr.PrepareForEval(items, fixed, load)
	if err != nil {
		return err
	}
	log := e.opts.Logger
	// Genomes whose weights did not fit beside their chunk are tried again
	// alone once every chunk is done and unloaded, so that no prefetched
	// chunk shares the device with them.
	var retry []int
	for c := range e.mgr.IterEvalChunks(ctx) {
		start := time.Now()
		if err := e.mgr.LoadChunk(ctx, c); err != nil {
			e.mgr.UnloadChunk(c)
			return err
		}
		var (
			mu      sync.Mutex
			rs      []Result
			grp, gc = errgroup.WithContext(ctx)
		)
		grp.SetLimit(e.opts.Parallel)
		for _, idx := range c.Indexes {
			m, lerr := c.Model(idx)
			if lerr != nil {
				if errors.Is(lerr, vram.ErrOutOfMemory) {
					logLoadOOM(log, graphs[idx].GenomeID, idx, lerr, "the chunk is full: retried alone")
					retry = append(retry, idx)
					continue
				}
				e.mgr.UnloadChunk(c)
				return lerr
			}
			// Sized here, while the genomes before it are scored: with one
			// forward in flight split over the threads, the other threads
			// would idle through it.
			need := needOf(e.b, graphs[idx], e.data)
			grp.Go(func() error {
				r, err := scoreGenome(gc, e.b, e.ctl, &e.opts, idx, m.(Model), e.data, need)
				if err != nil {
					return err
				}
				e.deliver(r)
				mu.Lock()
				rs = append(rs, r)
				mu.Unlock()
				return nil
			})
		}
		err := grp.Wait()
		e.mgr.UnloadChunk(c)
		sortResults(rs)
		if len(rs) > 0 {
			if eerr := emit(rs); eerr != nil && err == nil {
				err = eerr
			}
		}
		log.Info().Str(KeyEvent, EventChunkDone).Int(KeyChunk, c.Index).Int(KeyChunks, len(plan.Chunks)).
			Int(KeyGenomes, len(rs)).Dur(KeyLoadWait, c.Wait).Dur(KeyElapsed, time.Since(start)).
			Msgf("chunk %d/%d: %d genomes", c.Index+1, len(plan.Chunks), len(rs))
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, idx := range retry {
		r, err := e.scoreAlone(ctx, idx, graphs[idx])
		if err != nil {
			return err
		}
		e.deliver(r)
		if err := emit([]Result{r}); err != nil {
			return err
		}
	}
	return nil
}

// loadAttempts is how many times a genome's weights are tried alone on an
// emptied device before it gets an error result: memory that other work
// held (another process's, on a GPU) may free up between tries.
const loadAttempts = 4

// scoreAlone loads one genome on its own and scores it; a genome whose
// weights do not fit even then gets an error result.
func (e *Evaluator) scoreAlone(ctx context.Context, idx int, g *neat.Graph) (Result, error) {
	var m Model
	var err error
	for try := 1; ; try++ {
		e.b.Device().EmptyCache()
		if m, err = e.b.Load(g); err == nil {
			break
		}
		if !errors.Is(err, vram.ErrOutOfMemory) {
			return Result{}, err
		}
		if try == loadAttempts {
			return failed(idx, g.GenomeID, fmt.Errorf("genome %d: its weights do not fit on the device: %w", g.GenomeID, err)), nil
		}
		logLoadOOM(e.opts.Logger, g.GenomeID, idx, err, "loading alone: tried again")
	}
	defer func() {
		m.Unload()
		e.b.Device().EmptyCache()
	}()
	return scoreGenome(ctx, e.b, e.ctl, &e.opts, idx, m, e.data, needOf(e.b, g, e.data))
}

func logLoadOOM(log *zerolog.Logger, genome int64, idx int, err error, what string) {
	log.Warn().Str(KeyEvent, EventLoadOOM).Int64(KeyGenome, genome).Int(KeyIndex, idx).Str(KeyError, err.Error()).Msg(what)
}

func (e *Evaluator) deliver(r Result) {
	ev := e.opts.Logger.Debug().Str(KeyEvent, EventGenomeDone)
	if !r.OK() {
		ev = e.opts.Logger.Warn().Str(KeyEvent, EventGenomeError).Str(KeyError, r.Err.Error())
	}
	ev.Int64(KeyGenome, r.GenomeID).Int(KeyIndex, r.Index).Float64(KeyFitness, r.Fitness).
		Int(KeyImages, r.Images).Int(KeyBatch, r.Batch).Float64(KeySeconds, r.Seconds).Msg("")
	if e.opts.OnResult != nil {
		e.opts.OnResult(r)
	}
}

func sortResults(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int { return a.Index - b.Index })
}
