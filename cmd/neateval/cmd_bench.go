package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// benchOptions are the flags of `neateval bench`.
type benchOptions struct {
	Preset   string // small | wide | both
	Size     int    // genomes per population; 0: the preset's own
	Seed     int64
	Images   int
	Dataset  string // mnist | synthetic
	Batch    int    // images per forward (both engines); 0: each engine's default
	Parallel int
	Threads  int
	Repeat   int
	Torch    string // auto | off
	Ceiling  string // auto | off
	ORT      string // auto | off
	JSON     string
	Python   string
	BenchDir string
}

// benchSizes are the population sizes of the presets: the small one as
// `run` generates it, the wide one smaller, so that both engines score it
// in about a minute each on two cores.
var benchSizes = map[string]int{"small": 64, "wide": 16}

func newBenchFlags(o *benchOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.Preset, "preset", "both", "population preset, `P`: small, wide or both")
	fs.IntVar(&o.Size, "size", 0, "genomes per population, `N` (0: 64 small, 16 wide)")
	fs.Int64Var(&o.Seed, "seed", 1, "generator seed, `S`")
	fs.IntVar(&o.Images, "images", 10000, "images to score each genome on, `N` (the MNIST test set has 10000)")
	fs.StringVar(&o.Dataset, "dataset", "mnist", "images, `D`: mnist (the real test set) or synthetic")
	fs.IntVar(&o.Batch, "batch", 0, "images per forward for both engines, `N` (0: neateval's eval_batch_size default, PyTorch 256)")
	fs.IntVar(&o.Parallel, "parallel", 1, "genomes scored at once by neateval, `P` (fitness_eval_parallel)")
	fs.IntVar(&o.Threads, "threads", 0, "CPU threads of each engine and of the ceiling, `T` (0: all cores)")
	fs.IntVar(&o.Repeat, "repeat", 1, "score each population `R` times with each engine, alternating, and keep each engine's fastest")
	fs.StringVar(&o.Torch, "torch", "auto", "compare with PyTorch (bench/torch_ref.py), `M`: auto (when python can import torch) or off")
	fs.StringVar(&o.Ceiling, "ceiling", "auto", "measure the fp32 ceiling (bench/ceiling.sh, OpenBLAS sgemm), `M`: auto (when cc and OpenBLAS are there) or off")
	fs.StringVar(&o.ORT, "ort", "auto", "compare with onnxruntime (bench/ort_ref.js, onnxruntime-node; see scripts/ort-deps.sh), `M`: auto (when node can load onnxruntime-node) or off")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to `FILE`")
	fs.StringVar(&o.Python, "python", "/usr/bin/python3", "the Python that runs torch_ref.py, `PATH`")
	fs.StringVar(&o.BenchDir, "bench-dir", "", "the repository's bench/ folder, `DIR` (default: found from the working directory or the binary)")
	return fs
}

// cmdBench parses the flags of `neateval bench` and runs it.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := benchOptions{}
	if err := parseFlags(newBenchFlags(&o), args, stdout, benchUsage); err != nil {
		return err
	}
	return runBench(ctx, o, stdout, stderr)
}

func (o *benchOptions) check() error {
	switch {
	case o.Preset != "small" && o.Preset != "wide" && o.Preset != "both":
		return usagef("bench: --preset %q: want small, wide or both", o.Preset)
	case o.Size < 0:
		return usagef("bench: --size %d: must be ≥ 0", o.Size)
	case o.Images < 1:
		return usagef("bench: --images %d: must be ≥ 1", o.Images)
	case o.Dataset != "mnist" && o.Dataset != "synthetic":
		return usagef("bench: --dataset %q: want mnist or synthetic", o.Dataset)
	case o.Batch < 0:
		return usagef("bench: --batch %d: must be ≥ 0", o.Batch)
	case o.Parallel < 1:
		return usagef("bench: --parallel %d: must be ≥ 1", o.Parallel)
	case o.Threads < 0:
		return usagef("bench: --threads %d: must be ≥ 0", o.Threads)
	case o.Repeat < 1:
		return usagef("bench: --repeat %d: must be ≥ 1", o.Repeat)
	case o.Torch != "auto" && o.Torch != "off":
		return usagef("bench: --torch %q: want auto or off", o.Torch)
	case o.Ceiling != "auto" && o.Ceiling != "off":
		return usagef("bench: --ceiling %q: want auto or off", o.Ceiling)
	case o.ORT != "auto" && o.ORT != "off":
		return usagef("bench: --ort %q: want auto or off", o.ORT)
	}
	return nil
}

// benchReport is what `neateval bench` measured; --json writes it.
type benchReport struct {
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
	CeilingSamples []float64        `json:"ceiling_samples,omitempty"`
	CeilingNote    string           `json:"ceiling_note,omitempty"`
	TorchNote      string           `json:"torch_note,omitempty"`
	ORTNote        string           `json:"ort_note,omitempty"`
	Populations    []benchPopResult `json:"populations"`
}

// benchPopResult is one population's measurements.
type benchPopResult struct {
	Preset  string `json:"preset"`
	Genomes int    `json:"genomes"`
	Invalid int    `json:"invalid"`
	// FLOPsPerImage is Σ over the valid genomes of their FLOPs per image
	// (2 × multiply-adds of conv2d and dense, as the population format
	// counts them); WeightBytes their parameters in float32.
	FLOPsPerImage int64         `json:"flops_per_image"`
	WeightBytes   int64         `json:"weight_bytes"`
	Neateval      engineResult  `json:"neateval"`
	PyTorch       *engineResult `json:"pytorch"`
	Check         *fitnessCheck `json:"fitness_check"`
	ONNXRuntime   *engineResult `json:"onnxruntime"`
	ORTCheck      *fitnessCheck `json:"ort_fitness_check"`
}

// engineResult is one engine's fastest evaluation of a population.
type engineResult struct {
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

func runBench(ctx context.Context, o benchOptions, stdout, stderr io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	threads := o.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	rep := &benchReport{
		Dataset: o.Dataset, Images: o.Images, Seed: o.Seed, Threads: threads, Parallel: o.Parallel,
		Batch: o.Batch, Repeat: o.Repeat, CPU: cpuFeatures(), LoadBefore: loadAverage(),
	}
	cfg := benchConfig(o)
	ds, err := openDataset(cfg)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if ds.N < o.Images {
		return usagef("bench: --images %d: the %s set has %d images", o.Images, ds.Name, ds.N)
	}
	rep.Images = ds.N

	tmp, err := os.MkdirTemp("", "neateval-bench-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)
	ext := newBenchExternal(ctx, o, threads, tmp, stderr)
	rep.TorchNote, rep.CeilingNote = ext.torchNote, ext.ceilingNote
	ort := newBenchORT(ctx, o.ORT, o.BenchDir, threads, o.Batch, tmp, stderr)
	rep.ORTNote = ort.note
	if ext.torch || ort.on() {
		if err := writeIDX(tmp, ds); err != nil {
			return fmt.Errorf("bench: writing the images for PyTorch: %w", err)
		}
	}
	presets := []string{o.Preset}
	if o.Preset == "both" {
		presets = []string{"small", "wide"}
	}
	var failed []string
	for _, preset := range presets {
		pr, err := benchPopulation(ctx, o, cfg, ds, preset, ext, ort, stderr)
		if err != nil {
			return err
		}
		if pr.Check != nil && !pr.Check.OK || pr.ORTCheck != nil && !pr.ORTCheck.OK {
			failed = append(failed, preset)
		}
		rep.Populations = append(rep.Populations, *pr)
	}
	ext.sampleCeiling(ctx)
	rep.Ceiling, rep.CeilingSamples = ext.best, ext.samples
	if rep.Ceiling == nil {
		rep.CeilingNote = ext.ceilingNote
	}
	rep.LoadAfter = loadAverage()
	rep.ratios()
	printBenchTable(stdout, rep)
	if o.JSON != "" {
		if err := writeBenchJSON(o.JSON, rep); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ext.torchErr != nil {
		return fmt.Errorf("bench: PyTorch: %w", ext.torchErr)
	}
	if ort.err != nil {
		return fmt.Errorf("bench: onnxruntime: %w", ort.err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("bench: neateval's fitness differs from PyTorch's or onnxruntime's on the %v population(s) (see the fitness lines above)", failed)
	}
	return nil
}

// benchConfig is the configuration `run` would have with bench's flags:
// the defaults of config.toml, the CPU backend, the data set, batch,
// parallelism and threads asked.
func benchConfig(o benchOptions) *Config {
	cfg := DefaultConfig()
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

// benchPopulation generates one preset's population and measures it with
// each engine, o.Repeat times, alternating.
func benchPopulation(ctx context.Context, o benchOptions, cfg *Config, ds *datasets.Dataset, preset string, ext *benchExternal, ort *benchORT, stderr io.Writer) (*benchPopResult, error) {
	size := o.Size
	if size == 0 {
		size = benchSizes[preset]
	}
	in := neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}
	pop, err := generatePopulation(PopulationConfig{GenerateSize: size, GenerateSeed: o.Seed, GeneratePreset: preset}, in, ds.NumClasses)
	if err != nil {
		return nil, usagef("bench: %v", err)
	}
	pr := &benchPopResult{Preset: preset, Genomes: len(pop.Genomes)}
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
	b, err := openBackend(cfg)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ev, err := evaluator.New(b, ds, stagingConfig(cfg), evaluator.Options{
		EvalBatchSize: cfg.Eval.EvalBatchSize, Parallel: cfg.Eval.FitnessEvalParallel, Threads: cfg.Eval.Threads,
		VRAMUsageThreshold: cfg.VRAM.VRAMUsageThreshold, CacheData: cfg.VRAM.CacheValOnGPU,
		Fitness: fitnessFunc(cfg.Eval.Fitness),
	})
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
func benchNeateval(ctx context.Context, ev *evaluator.Evaluator, pop *neat.Population) (*engineResult, error) {
	start := time.Now()
	rs, err := ev.Evaluate(ctx, pop, nil)
	sec := time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	e := &engineResult{Engine: "neateval (cpu)", Seconds: sec}
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
func (r *benchReport) ratios() {
	for i := range r.Populations {
		p := &r.Populations[i]
		for _, e := range []*engineResult{&p.Neateval, p.PyTorch, p.ONNXRuntime} {
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

func writeBenchJSON(path string, rep *benchReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: --json: %w", err)
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
