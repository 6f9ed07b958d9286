package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/tfevents"
	"github.com/neateval/neateval/vram"
)

// Spec is one scoring run: what `neateval run` does with its config.
type Spec struct {
	// Config is the run's configuration, validated (config.Load,
	// config.Overrides.Load).
	Config *config.Config
	// ConfigName names the config in the run_start line; "" is
	// "(defaults)".
	ConfigName string
	// Resume continues the results file (output.results) of an interrupted
	// run of the same population, data set and fitness instead of replacing
	// it: only the genomes it lacks are scored.
	Resume bool
	// Logger receives the run's events, and the libraries' (nil: none).
	Logger *zerolog.Logger
	// Progress, when set, is told the genomes to score and each one scored.
	Progress Progress
	// Remote, when set, opens what scores the genomes instead of a backend
	// of this process (a cluster's coordinator); the results file, resume
	// and the summary are the same.
	Remote OpenRemote
}

// Progress follows a run: Start once the population and the results
// already done are known, then Add as genomes are scored (from the
// goroutines that score them).
type Progress interface {
	Start(total, done int)
	Add(genomes int, images int64)
}

// Run scores the population that spec.Config describes and writes its
// results file:
//
//   - load the data set and the population (from its file, or generated);
//   - open the backend and its device;
//   - create the results file, or with Resume reopen it and keep the
//     genomes it already holds;
//   - score the rest through the evaluator (staging plan, chunks, the batch
//     controller), appending each finished chunk's results to the file;
//   - rewrite the file in population order, and log the summary.
//
// A cancelled context leaves the appended results in the file and returns
// an *InterruptedError (which matches ctx's error); a run in which some
// genomes got an error result returns its Summary and a *GenomeErrors.
func Run(ctx context.Context, spec Spec) (Summary, error) {
	log := logger(spec.Logger)
	cfg := spec.Config
	logStart(log, spec)
	s, err := score(ctx, spec, log)
	var ge *GenomeErrors
	switch {
	case err == nil, errors.As(err, &ge):
		return s, err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		ie := &InterruptedError{Results: cfg.Output.Results, Err: err}
		event(log, zerolog.WarnLevel, EventRunInterrupted).Str(KeyResults, cfg.Output.Results).Err(err).Msg(ie.Error())
		return s, ie
	}
	event(log, zerolog.ErrorLevel, EventRunFailed).Err(err).Msg("run failed")
	return s, err
}

func logStart(log *zerolog.Logger, spec Spec) {
	cfg := spec.Config
	threads := cfg.Eval.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	name := spec.ConfigName
	if name == "" {
		name = "(defaults)"
	}
	event(log, zerolog.InfoLevel, EventRunStart).
		Str(KeyVersion, Version()).
		Str(KeyConfig, name).
		Str(KeyBackend, cfg.Eval.Backend).
		Str(KeyDType, cfg.Eval.DType).
		Int(KeyEvalBatchSize, cfg.Eval.EvalBatchSize).
		Int(KeyFitnessEvalParallel, cfg.Eval.FitnessEvalParallel).
		Int(KeyThreads, threads).
		Str(KeyResults, cfg.Output.Results).
		Bool(KeyResume, spec.Resume).
		Msg("neateval run")
}

// score is the run itself, once run_start is logged.
func score(ctx context.Context, spec Spec, log *zerolog.Logger) (Summary, error) {
	cfg, start := spec.Config, time.Now()
	ds, err := OpenDataset(cfg, log)
	if err != nil {
		return Summary{}, err
	}
	pop, compiled, digest, err := openPopulation(cfg, ds, log)
	if err != nil {
		return Summary{}, err
	}
	var b evaluator.Backend
	var remote Remote
	if spec.Remote != nil {
		if remote, err = spec.Remote(cfg, ds, log); err != nil {
			return Summary{}, err
		}
		defer remote.Close()
	} else {
		if b, err = OpenBackend(cfg, log); err != nil {
			return Summary{}, err
		}
		defer b.Close()
		cfg = cfg.WithParallel(b)
		spec.Config = cfg
	}
	tb, err := openTracker(cfg)
	if err != nil {
		return Summary{}, err
	}
	defer tb.close()

	header := results.Header{Population: digest, Genomes: len(pop.Genomes), Dataset: ds.Identity(), Fitness: cfg.Eval.Fitness}
	w, done, err := openResults(cfg.Output.Results, header, spec.Resume, log)
	if err != nil {
		return Summary{}, err
	}
	all := make([]results.Result, len(pop.Genomes))
	for i, r := range done {
		all[i] = r
	}
	if spec.Progress != nil {
		spec.Progress.Start(len(pop.Genomes), len(done))
	}
	var rstats RemoteStats
	pk := &peaks{}
	if remote != nil {
		rstats, err = scoreRemote(ctx, spec, remote, header, pop, pendingIndexes(len(pop.Genomes), done), all, w)
	} else {
		pk, err = scorePending(ctx, spec, b, ds, pop, compiled, done, all, w, tb, log)
	}
	if err != nil {
		w.Close()
		return Summary{}, err
	}
	if err := w.Finalize(all); err != nil {
		return Summary{}, err
	}
	event(log, zerolog.InfoLevel, EventResultsWritten).Str(KeyResults, cfg.Output.Results).
		Int(KeyGenomes, len(all)).Msgf("results: %s", cfg.Output.Results)
	s := Summarize(all, done, time.Since(start))
	if remote != nil {
		s.Remote = &rstats
	}
	s.log(log)
	if err := errors.Join(tb.run(tfevents.Run{ImagesGenomesPerS: s.Rate(), PeakPredictedBytes: pk.predicted, PeakAllocatedBytes: pk.allocated.Load()}), tb.close()); err != nil {
		return s, err
	}
	if s.Failed > 0 {
		return s, &GenomeErrors{Failed: s.Failed, Total: len(all), Results: cfg.Output.Results}
	}
	return s, nil
}

// peaks are a run's device memory: the staging plan's predicted peak, and
// the highest peak the allocator reported after any genome's forwards.
type peaks struct {
	predicted int64
	allocated atomic.Int64
}

// raise makes the allocated peak at least p.
func (pk *peaks) raise(p int64) {
	for {
		old := pk.allocated.Load()
		if p <= old || pk.allocated.CompareAndSwap(old, p) {
			return
		}
	}
}

// scorePending scores the genomes of pop (compiled: c) that done lacks, as
// a population of their own, into all (by population index) and the
// results file.
func scorePending(ctx context.Context, spec Spec, b evaluator.Backend, ds *datasets.Dataset, pop *neat.Population, c *evaluator.Compiled,
	done map[int]results.Result, all []results.Result, w *results.Writer, tb *tracker, log *zerolog.Logger) (*peaks, error) {
	pk := &peaks{}
	sub := &neat.Population{Input: pop.Input, NumClasses: pop.NumClasses}
	var index []int // sub's positions in pop
	for i, g := range pop.Genomes {
		if _, ok := done[i]; !ok {
			sub.Genomes = append(sub.Genomes, g)
			index = append(index, i)
		}
	}
	if len(sub.Genomes) == 0 {
		return pk, nil
	}
	opts := spec.Config.EvaluatorOptions(log)
	opts.OnBatchChange = tb.onBatch()
	opts.OnResult = func(r evaluator.Result) {
		pk.raise(b.Device().Stats().PeakAllocated)
		if spec.Progress != nil {
			spec.Progress.Add(1, int64(r.Images))
		}
	}
	ev, err := evaluator.New(b, ds, spec.Config.StagingConfig(), opts)
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	tb.batchChanged(0, ev.Batch(), "start")
	_, err = ev.EvaluateCompiled(ctx, sub, c.Subset(index), func(rs []evaluator.Result) error {
		out := make([]results.Result, len(rs))
		for k, r := range rs {
			out[k] = ResultLine(r, index[r.Index])
			all[out[k].Index] = out[k]
		}
		return w.Append(out)
	})
	if p := ev.Manager().Plan(); p != nil {
		pk.predicted = p.PeakPredicted
	}
	return pk, err
}

// pendingIndexes are the indexes of n genomes that done lacks.
func pendingIndexes(n int, done map[int]results.Result) []int {
	var out []int
	for i := range n {
		if _, ok := done[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// openResults creates the results file, or on resume reopens it with the
// results it holds.
func openResults(path string, h results.Header, resume bool, log *zerolog.Logger) (*results.Writer, map[int]results.Result, error) {
	if !resume {
		w, err := results.Create(path, h)
		return w, map[int]results.Result{}, err
	}
	w, done, err := results.Resume(path, h)
	if err != nil {
		return nil, nil, err
	}
	event(log, zerolog.InfoLevel, EventResume).Str(KeyResults, path).
		Int(KeyDone, len(done)).Int(KeyRemaining, h.Genomes-len(done)).
		Msgf("resuming: %d of %d genomes already scored", len(done), h.Genomes)
	return w, done, nil
}

// ResultLine is an evaluator result as a results-file line at population
// index idx. A non-finite fitness becomes an error line: the file holds
// only finite metrics.
func ResultLine(r evaluator.Result, idx int) results.Result {
	out := results.Result{GenomeID: r.GenomeID, Index: idx, Images: r.Images, Params: r.Params, FLOPs: r.FLOPs, Seconds: r.Seconds}
	if r.Err != nil {
		msg := r.Err.Error()
		out.Error = &msg
		return out
	}
	f, a, l := r.Fitness, r.Accuracy, r.Loss
	if math.IsNaN(f) || math.IsInf(f, 0) {
		msg := fmt.Sprintf("genome %d: the fitness function returned %v", r.GenomeID, f)
		out.Error = &msg
		return out
	}
	out.Fitness, out.Accuracy, out.Loss = &f, &a, &l
	return out
}

// OpenBackend opens the configured backend and logs the device it got.
func OpenBackend(cfg *config.Config, log *zerolog.Logger) (evaluator.Backend, error) {
	b, err := cfg.OpenBackend(log)
	if err != nil {
		return nil, err
	}
	total, _ := b.Device().MemInfo()
	event(log, zerolog.InfoLevel, EventDevice).
		Str(KeyBackend, b.Name()).Str(KeyDevice, b.Device().Name()).Str(KeyDType, b.DType().String()).
		Int64(KeyMemoryBytes, total).
		Msgf("device %s: %s, %s", b.Device().Name(), vram.FormatBytes(total), b.DType())
	return b, nil
}

// OpenDataset opens the configured data set and logs it.
func OpenDataset(cfg *config.Config, log *zerolog.Logger) (*datasets.Dataset, error) {
	start := time.Now()
	ds, err := openDataset(cfg.DatasetSpec())
	if err != nil {
		return nil, err
	}
	event(log, zerolog.InfoLevel, EventDatasetLoaded).
		Str(KeyDataset, ds.Name).Str(KeySplit, cfg.Dataset.Split).Int(KeyImages, ds.N).
		Int(KeyChannels, ds.Channels).Int(KeyHeight, ds.Height).Int(KeyWidth, ds.Width).
		Int(KeyClasses, ds.NumClasses).Float64(KeySeconds, time.Since(start).Seconds()).
		Msgf("data set %s: %d images of %d×%d×%d", ds.Name, ds.N, ds.Channels, ds.Height, ds.Width)
	return ds, nil
}

func openDataset(spec datasets.Spec) (*datasets.Dataset, error) {
	ds, err := datasets.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return ds, nil
}

// openPopulation loads the population file, or generates one for the data
// set's shape, and returns it compiled (once for the whole run: the log's
// figures and the scoring use the same graphs), with its digest for the
// results file.
func openPopulation(cfg *config.Config, ds *datasets.Dataset, log *zerolog.Logger) (*neat.Population, *evaluator.Compiled, string, error) {
	start := time.Now()
	pop, digest, err := loadPopulation(&cfg.Population, ds)
	if err != nil {
		return nil, nil, "", err
	}
	c := evaluator.Compile(pop)
	var params, weightBytes int64
	for _, gr := range c.Graphs {
		if gr != nil {
			params += gr.Params
			weightBytes += gr.WeightBytes(4)
		}
	}
	invalid := c.Invalid()
	name := cfg.Population.Name()
	event(log, zerolog.InfoLevel, EventPopulationLoaded).
		Str(KeyPopulation, name).Int(KeyGenomes, len(pop.Genomes)).Int(KeyInvalid, invalid).
		Int64(KeyParams, params).Int64(KeyWeightBytes, weightBytes).Str(KeyDigest, digest).
		Float64(KeySeconds, time.Since(start).Seconds()).
		Msgf("population %s: %d genomes (%d invalid), %d parameters", name, len(pop.Genomes), invalid, params)
	return pop, c, digest, nil
}

func loadPopulation(p *config.PopulationConfig, ds *datasets.Dataset) (*neat.Population, string, error) {
	if p.Path != "" {
		return neat.LoadDigest(p.Path)
	}
	pop, err := p.Generate(neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}, ds.NumClasses)
	if err != nil {
		return nil, "", err
	}
	return pop, neat.ContentDigest(pop), nil
}
