package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/ortrun"
	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/vram"
)

// Options say what to measure: `neateval bench`'s flags.
type Options struct {
	Preset   string // small | wide | evolve | both (small and wide) | all
	Size     int    // genomes per population; 0: the preset's own
	Seed     int64
	Images   int
	Dataset  string // mnist | synthetic
	Batch    int    // images per forward (both engines); 0: each engine's default
	Parallel int    // fitness_eval_parallel; 0: the backend's (cpu.DefaultParallel)
	Threads  int
	Repeat   int
	Torch    string // auto | off
	Ceiling  string // auto | off
	ORT      string // auto | off
	Python   string
	BenchDir string
}

// Sizes are the population sizes of the generated presets: the small one
// as `run` generates it, the wide one smaller, so that both engines score
// it in about a minute each on two cores. The evolve preset is the
// genomes of an evolve run shipped with the bench (EvolvePopulation).
var Sizes = map[string]int{"small": 64, "wide": 16}

// presetsOf are the populations each --preset names.
var presetsOf = map[string][]string{
	"small": {"small"}, "wide": {"wide"}, "evolve": {"evolve"},
	"both": {"small", "wide"}, "all": {"small", "wide", "evolve"},
}

// OptionError is an option out of its range.
type OptionError struct{ msg string }

func (e *OptionError) Error() string { return e.msg }

func optionf(format string, args ...any) error { return &OptionError{fmt.Sprintf(format, args...)} }

func (o *Options) check() error {
	switch {
	case presetsOf[o.Preset] == nil:
		return optionf("bench: --preset %q: want small, wide, evolve, both or all", o.Preset)
	case o.Size < 0:
		return optionf("bench: --size %d: must be ≥ 0", o.Size)
	case o.Images < 1:
		return optionf("bench: --images %d: must be ≥ 1", o.Images)
	case o.Dataset != "mnist" && o.Dataset != "synthetic":
		return optionf("bench: --dataset %q: want mnist or synthetic", o.Dataset)
	case o.Batch < 0:
		return optionf("bench: --batch %d: must be ≥ 0", o.Batch)
	case o.Parallel < 0:
		return optionf("bench: --parallel %d: must be ≥ 0", o.Parallel)
	case o.Threads < 0:
		return optionf("bench: --threads %d: must be ≥ 0", o.Threads)
	case o.Repeat < 1:
		return optionf("bench: --repeat %d: must be ≥ 1", o.Repeat)
	case o.Torch != "auto" && o.Torch != "off":
		return optionf("bench: --torch %q: want auto or off", o.Torch)
	case o.Ceiling != "auto" && o.Ceiling != "off":
		return optionf("bench: --ceiling %q: want auto or off", o.Ceiling)
	case o.ORT != "auto" && o.ORT != "off":
		return optionf("bench: --ort %q: want auto or off", o.ORT)
	}
	return nil
}

// Report is what a bench run measured.
type Report struct {
	Dataset  string `json:"dataset"`
	Images   int    `json:"images"`
	Seed     int64  `json:"seed"`
	Threads  int    `json:"threads"`
	Parallel int    `json:"parallel"`
	Batch    int    `json:"batch"`
	Repeat   int    `json:"repeat"`
	CPU      string `json:"cpu"`
	// LoadBefore and LoadAfter are the 1-minute load averages of the
	// machine around the run (/proc/loadavg; empty where there is none):
	// above the thread count, other work shared the cores.
	LoadBefore string         `json:"load_before,omitempty"`
	LoadAfter  string         `json:"load_after,omitempty"`
	Ceiling    *ceilingResult `json:"ceiling"`
	// CeilingSamples are the ceiling's measurements in GFLOP/s: before
	// each neateval run and at the end; Ceiling is the best of them.
	CeilingSamples []float64   `json:"ceiling_samples,omitempty"`
	CeilingNote    string      `json:"ceiling_note,omitempty"`
	TorchNote      string      `json:"torch_note,omitempty"`
	ORTNote        string      `json:"ort_note,omitempty"`
	Populations    []PopResult `json:"populations"`
}

// PopResult is one population's measurements.
type PopResult struct {
	Preset  string `json:"preset"`
	Genomes int    `json:"genomes"`
	Invalid int    `json:"invalid"`
	// FLOPsPerImage is Σ over the valid genomes of their FLOPs per image
	// (2 × multiply-adds of conv2d and dense, as the population format
	// counts them); WeightBytes their parameters in float32.
	FLOPsPerImage int64         `json:"flops_per_image"`
	WeightBytes   int64         `json:"weight_bytes"`
	Neateval      EngineResult  `json:"neateval"`
	PyTorch       *EngineResult `json:"pytorch"`
	Check         *fitnessCheck `json:"fitness_check"`
	ONNXRuntime   *EngineResult `json:"onnxruntime"`
	ORTCheck      *fitnessCheck `json:"ort_fitness_check"`
	parallel      int           // the fitness_eval_parallel neateval ran with (Report.Parallel)
}

// EngineResult is one engine's fastest evaluation of a population.
type EngineResult struct {
	Engine  string  `json:"engine"`
	Seconds float64 `json:"seconds"`
	// ImagesGenomes is Σ over the scored genomes of their images.
	ImagesGenomes   int64   `json:"images_genomes"`
	ImagesGenomesPS float64 `json:"images_genomes_per_s"`
	GFLOPS          float64 `json:"gflops"`
	VsPyTorch       float64 `json:"vs_pytorch,omitempty"`       // throughput ÷ PyTorch's
	OfCeiling       float64 `json:"share_of_ceiling,omitempty"` // GFLOP/s ÷ the ceiling's
	results         []engineGenome
	flops           float64 // FLOPs of the whole evaluation
}

// engineGenome is one genome's result, as both engines report it.
type engineGenome struct {
	ID       int64
	OK       bool
	Accuracy float64
	Loss     float64
	Images   int
}

// Run measures the populations o asks for with each engine, logging its
// progress as lines on stderr, and returns the report; the error says when
// the engines' fitness disagree or PyTorch failed (the report is still
// returned).
func Run(ctx context.Context, o Options, stderr io.Writer) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	threads := o.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	cfg := benchConfig(o)
	rep := &Report{
		Dataset: o.Dataset, Images: o.Images, Seed: o.Seed, Threads: threads, Parallel: o.Parallel,
		Batch: o.Batch, Repeat: o.Repeat, CPU: run.CPUFeatures(), LoadBefore: loadAverage(),
	}
	ds, err := datasets.Open(cfg.DatasetSpec())
	if err != nil {
		return nil, fmt.Errorf("bench: dataset: %w", err)
	}
	if ds.N < o.Images {
		return nil, optionf("bench: --images %d: the %s set has %d images", o.Images, ds.Name, ds.N)
	}
	rep.Images = ds.N

	tmp, err := os.MkdirTemp("", "neateval-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)
	ext := newBenchExternal(ctx, o, threads, tmp, stderr)
	rep.TorchNote, rep.CeilingNote = ext.torchNote, ext.ceilingNote
	ort := newBenchORT(ctx, o.ORT, o.BenchDir, threads, o.Batch, tmp, stderr)
	rep.ORTNote = ort.note
	if ext.torch || ort.on() {
		if err := ortrun.WriteIDX(tmp, ds); err != nil {
			return nil, fmt.Errorf("bench: writing the images for PyTorch: %w", err)
		}
	}
	var failed []string
	for _, preset := range presetsOf[o.Preset] {
		pr, err := benchPopulation(ctx, o, cfg, ds, preset, ext, ort, stderr)
		if err != nil {
			return nil, err
		}
		if pr.Check != nil && !pr.Check.OK || pr.ORTCheck != nil && !pr.ORTCheck.OK {
			failed = append(failed, preset)
		}
		rep.Populations = append(rep.Populations, *pr)
		rep.Parallel = pr.parallel
	}
	ext.sampleCeiling(ctx)
	rep.Ceiling, rep.CeilingSamples = ext.best, ext.samples
	if rep.Ceiling == nil {
		rep.CeilingNote = ext.ceilingNote
	}
	rep.LoadAfter = loadAverage()
	rep.ratios()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if ext.torchErr != nil {
		return rep, fmt.Errorf("bench: PyTorch: %w", ext.torchErr)
	}
	if ort.err != nil {
		return rep, fmt.Errorf("bench: onnxruntime: %w", ort.err)
	}
	if len(failed) > 0 {
		return rep, fmt.Errorf("bench: neateval's fitness differs from PyTorch's or onnxruntime's on the %v population(s) (see the fitness lines of the table)", failed)
	}
	return rep, nil
}

// benchConfig is the configuration `run` would have with bench's flags:
// the defaults of config.toml, the CPU backend, the data set, batch,
// parallelism and threads asked.
func benchConfig(o Options) *config.Config {
	cfg := config.Default()
	cfg.Eval.Backend = "cpu"
	cfg.Dataset.Kind = o.Dataset
	cfg.Dataset.Limit = o.Images
	cfg.Dataset.SyntheticSize = o.Images
	cfg.Dataset.SyntheticSeed = o.Seed
	if o.Batch > 0 {
		cfg.Eval.EvalBatchSize = o.Batch
	}
	cfg.Eval.FitnessEvalParallel = o.Parallel
	cfg.Eval.Threads = o.Threads
	return cfg
}

// presetPopulation is the population of one preset for the data set's
// shape: generated (small, wide: o.Size genomes, or the preset's own, with
// o.Seed), or the shipped evolve population (its first o.Size genomes, or
// all).
func presetPopulation(o Options, ds *datasets.Dataset, preset string) (*neat.Population, error) {
	in := neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}
	if preset == "evolve" {
		pop, err := EvolvePopulation()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if pop.Input != in || pop.NumClasses != ds.NumClasses {
			return nil, optionf("bench: the evolve population is for %d×%d×%d images of %d classes, the data set's are %d×%d×%d of %d",
				pop.Input.Channels, pop.Input.Height, pop.Input.Width, pop.NumClasses, in.Channels, in.Height, in.Width, ds.NumClasses)
		}
		if o.Size > len(pop.Genomes) {
			return nil, optionf("bench: --size %d: the evolve population has %d genomes", o.Size, len(pop.Genomes))
		}
		if o.Size > 0 {
			pop.Genomes = pop.Genomes[:o.Size]
		}
		return pop, nil
	}
	size := o.Size
	if size == 0 {
		size = Sizes[preset]
	}
	pc := config.PopulationConfig{GenerateSize: size, GenerateSeed: o.Seed, GeneratePreset: preset}
	pop, err := pc.Generate(in, ds.NumClasses)
	if err != nil {
		return nil, optionf("bench: %v", err)
	}
	return pop, nil
}

// benchPopulation generates one preset's population and measures it with
// each engine, o.Repeat times, alternating.
func benchPopulation(ctx context.Context, o Options, cfg *config.Config, ds *datasets.Dataset, preset string, ext *benchExternal, ort *benchORT, stderr io.Writer) (*PopResult, error) {
	pop, err := presetPopulation(o, ds, preset)
	if err != nil {
		return nil, err
	}
	pr := &PopResult{Preset: preset, Genomes: len(pop.Genomes)}
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			pr.Invalid++
			continue
		}
		pr.FLOPsPerImage += gr.FLOPs
		pr.WeightBytes += gr.WeightBytes(4)
	}
	fmt.Fprintf(stderr, "bench: %s population: %d genomes, %.1f MFLOP per image in all, %s of weights\n",
		preset, len(pop.Genomes), float64(pr.FLOPsPerImage)/1e6, vram.FormatBytes(pr.WeightBytes))
	popPath := ""
	if ext.torch {
		popPath = filepath.Join(ext.dir, preset+".json")
		if err := neat.Save(pop, popPath, preset+".safetensors"); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	ortDir := ""
	if ort.on() {
		if ortDir, err = ort.export(preset, pop); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	b, err := cfg.OpenBackend(nil)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	cfg = cfg.WithParallel(b)
	pr.parallel = cfg.Eval.FitnessEvalParallel
	ev, err := evaluator.New(b, ds, cfg.StagingConfig(), cfg.EvaluatorOptions(nil))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer ev.Close()
	for r := range o.Repeat {
		ext.sampleCeiling(ctx)
		ne, err := benchNeateval(ctx, ev, pop)
		if err != nil {
			return nil, fmt.Errorf("bench: %s population: %w", preset, err)
		}
		fmt.Fprintf(stderr, "bench: %s: neateval %.2f s, %.1f GFLOP/s (run %d of %d)\n", preset, ne.Seconds, ne.GFLOPS, r+1, o.Repeat)
		if r == 0 || ne.Seconds < pr.Neateval.Seconds {
			pr.Neateval = *ne
		}
		benchORTRun(ctx, ort, pr, preset, ortDir, ext.dir, ne.flops, r, o.Repeat, stderr)
		if !ext.torch || ext.torchErr != nil {
			continue
		}
		pt, err := ext.runTorch(ctx, popPath)
		if err != nil {
			ext.torchErr = fmt.Errorf("%s population: %w", preset, err)
			continue
		}
		pt.flops = ne.flops
		pt.GFLOPS = pt.flops / pt.Seconds / 1e9
		fmt.Fprintf(stderr, "bench: %s: %s %.2f s, %.1f GFLOP/s (run %d of %d)\n", preset, pt.Engine, pt.Seconds, pt.GFLOPS, r+1, o.Repeat)
		if pr.PyTorch == nil || pt.Seconds < pr.PyTorch.Seconds {
			pr.PyTorch = pt
		}
	}
	if pr.PyTorch != nil {
		pr.Check = crossCheck(pr.Neateval.results, pr.PyTorch.results)
	}
	if pr.ONNXRuntime != nil {
		pr.ORTCheck = crossCheckORT(pr.Neateval.results, pr.ONNXRuntime.results)
	}
	return pr, ctx.Err()
}

// benchNeateval scores the population through the evaluator, as `run`
// does, and times Evaluate.
func benchNeateval(ctx context.Context, ev *evaluator.Evaluator, pop *neat.Population) (*EngineResult, error) {
	start := time.Now()
	rs, err := ev.Evaluate(ctx, pop, nil)
	sec := time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	e := &EngineResult{Engine: "neateval (cpu)", Seconds: sec}
	for _, r := range rs {
		e.flops += float64(r.FLOPs) * float64(r.Images)
		e.ImagesGenomes += int64(r.Images)
		e.results = append(e.results, engineGenome{ID: r.GenomeID, OK: r.OK(), Accuracy: r.Accuracy, Loss: r.Loss, Images: r.Images})
	}
	e.ImagesGenomesPS = float64(e.ImagesGenomes) / sec
	e.GFLOPS = e.flops / sec / 1e9
	return e, nil
}

// ratios fills each engine's ratio to PyTorch and share of the ceiling.
func (r *Report) ratios() {
	for i := range r.Populations {
		p := &r.Populations[i]
		for _, e := range []*EngineResult{&p.Neateval, p.PyTorch, p.ONNXRuntime} {
			if e == nil {
				continue
			}
			if p.PyTorch != nil && p.PyTorch.ImagesGenomesPS > 0 {
				e.VsPyTorch = e.ImagesGenomesPS / p.PyTorch.ImagesGenomesPS
			}
			if r.Ceiling != nil && r.Ceiling.GFLOPS > 0 {
				e.OfCeiling = e.GFLOPS / r.Ceiling.GFLOPS
			}
		}
	}
}

// loadAverage is the machine's 1-minute load average, or "" where
// /proc/loadavg cannot be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// WriteJSON writes the report, indented, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

var errNoBenchDir = errors.New("no bench/ folder with torch_ref.py and ceiling.sh found")

// findBenchDir returns the repository's bench/ folder: dir when given,
// else bench/ in the working directory or one of its parents, else beside
// the binary or one of its parents (bin/neateval in a checkout).
func findBenchDir(dir string) (string, error) {
	ok := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "torch_ref.py"))
		return err == nil
	}
	if dir != "" {
		if !ok(dir) {
			return "", fmt.Errorf("--bench-dir %s: %w", dir, errNoBenchDir)
		}
		return dir, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		for d := s; ; d = filepath.Dir(d) {
			if ok(filepath.Join(d, "bench")) {
				return filepath.Join(d, "bench"), nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("%w (run from the repository, or pass --bench-dir)", errNoBenchDir)
}
