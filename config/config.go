package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// Config is the whole of neateval's configuration: a config.toml, with
// command-line flags merged over it (Overrides). The key names are the
// seed's (000_402b17961448f9e0) where it has one; Default holds the seed's
// defaults and is exactly what the shipped config.toml says.
type Config struct {
	Population PopulationConfig `toml:"population"`
	Dataset    DatasetConfig    `toml:"dataset"`
	Eval       EvalConfig       `toml:"eval"`
	VRAM       VRAMConfig       `toml:"vram"`
	Output     OutputConfig     `toml:"output"`
	Evolve     Evolve           `toml:"evolve"`
	Cluster    ClusterConfig    `toml:"cluster"`
}

// PopulationConfig says which genomes are scored.
type PopulationConfig struct {
	// Path is the population JSON (its safetensors file beside it). Empty:
	// a population is generated in memory from the Generate* keys.
	Path           string `toml:"path"`
	GenerateSize   int    `toml:"generate_size"`
	GenerateSeed   int64  `toml:"generate_seed"`
	GeneratePreset string `toml:"generate_preset"` // "small" | "wide"
}

// DatasetConfig says which labelled images the genomes are scored on.
type DatasetConfig struct {
	Kind   string `toml:"kind"` // mnist | fashion-mnist | idx | cifar10 | synthetic
	Path   string `toml:"path"` // folder; empty for mnist: see resolveDatasetDir
	Split  string `toml:"split"`
	Images string `toml:"images"` // kind "idx": file names inside Path
	Labels string `toml:"labels"`
	Limit  int    `toml:"limit"` // 0 = all images
	// Mean and Std are per-channel normalisation, (x − mean) / std after
	// x/255; empty means none. Same length.
	Mean          []float64 `toml:"mean"`
	Std           []float64 `toml:"std"`
	SyntheticSize int       `toml:"synthetic_size"`
	SyntheticSeed int64     `toml:"synthetic_seed"`
}

// EvalConfig sets how forwards run.
type EvalConfig struct {
	Backend string `toml:"backend"` // cpu | cuda | auto
	// Device is the GPU a GPU backend opens (its CUDA device index); the
	// CPU backend ignores it. Local workers (cluster.workers) take
	// Device, Device+1, ….
	Device              int    `toml:"device"`
	DType               string `toml:"dtype"` // float32 | bfloat16 (storage; compute is float32)
	EvalBatchSize       int    `toml:"eval_batch_size"`
	FitnessEvalParallel int    `toml:"fitness_eval_parallel"`
	Threads             int    `toml:"threads"` // CPU worker threads in total; 0 = all cores
	Fitness             string `toml:"fitness"` // accuracy | neg_loss
	// ComputePrecision is how a GPU computes convolutions and dense
	// layers: fp32 (exact float32) or tf32 (tensor cores); the CPU
	// computes float32 either way.
	ComputePrecision string `toml:"compute_precision"`
}

// VRAMConfig sets device memory: budgets, modes and fault injection.
type VRAMConfig struct {
	// MemoryBytes is the CPU device's arena; 0 = the default share of host
	// memory.
	MemoryBytes                     ByteSize `toml:"memory_bytes"`
	VRAMUsageThreshold              float64  `toml:"vram_usage_threshold"`
	AdaptivePopulationVRAM          bool     `toml:"adaptive_population_vram"`
	PopulationVRAMResidentThreshold float64  `toml:"population_vram_resident_threshold"`
	// PopulationGPUChunkBytes is the weight budget of one chunk; 0 = unset
	// (the seed's None): one budget of the batch fractions instead.
	PopulationGPUChunkBytes     ByteSize `toml:"population_gpu_chunk_bytes"`
	PopulationGPUBatchFracMin   float64  `toml:"population_gpu_batch_frac_min"`
	PopulationGPUBatchFracMax   float64  `toml:"population_gpu_batch_frac_max"`
	CacheValOnGPU               bool     `toml:"cache_val_on_gpu"`
	CUDAGraphMemoryReserveBytes ByteSize `toml:"cuda_graph_memory_reserve_bytes"`
	Prefetch                    bool     `toml:"prefetch"`
	// FaultRate, FaultSeed and FaultAt inject out-of-memory failures into
	// the CPU device's allocator (for testing recovery): each allocation
	// fails with probability FaultRate, and allocations number FaultAt
	// (1-based) fail.
	FaultRate float64 `toml:"fault_rate"`
	FaultSeed int64   `toml:"fault_seed"`
	FaultAt   []int64 `toml:"fault_at"`
}

// OutputConfig says where results and logs go.
type OutputConfig struct {
	Results   string `toml:"results"`
	LogFormat string `toml:"log_format"` // auto | console | json
	LogLevel  string `toml:"log_level"`  // trace | debug | info | warn | error
	Progress  string `toml:"progress"`   // auto | on | off
	// TBLogdir, when set, is the folder of a TensorBoard event file the
	// run writes its scalars to (package tfevents).
	TBLogdir string `toml:"tb_logdir"`
}

// Default is the configuration with nothing set: the real MNIST test set
// on the CPU, a generated population of 64, results in results.jsonl. It
// equals the shipped config.toml (a test holds it to that). The defaults of
// the memory keys are the libraries' own (staging.DefaultConfig, vram's
// Default* constants), written once there.
func Default() *Config {
	st := staging.DefaultConfig()
	return &Config{
		Population: PopulationConfig{
			GenerateSize:   64,
			GenerateSeed:   1,
			GeneratePreset: "small",
		},
		Dataset: DatasetConfig{
			Kind:          "mnist",
			Split:         "test",
			Mean:          []float64{},
			Std:           []float64{},
			SyntheticSize: 2000,
			SyntheticSeed: 1,
		},
		Eval: EvalConfig{
			Backend:             "cpu",
			DType:               vram.Float32.String(),
			EvalBatchSize:       vram.DefaultEvalBatchSize,
			FitnessEvalParallel: 0, // the backend's: cpu.DefaultParallel on the CPU, a GPU's streams
			Fitness:             FitnessAccuracy,
			ComputePrecision:    "fp32",
		},
		VRAM: VRAMConfig{
			VRAMUsageThreshold:              st.UsageThreshold,
			AdaptivePopulationVRAM:          st.Adaptive,
			PopulationVRAMResidentThreshold: st.ResidentThreshold,
			PopulationGPUBatchFracMin:       st.BatchFracMin,
			PopulationGPUBatchFracMax:       st.BatchFracMax,
			CacheValOnGPU:                   true,
			Prefetch:                        st.Prefetch,
			FaultSeed:                       1,
			FaultAt:                         []int64{},
		},
		Output: OutputConfig{
			Results:   "results.jsonl",
			LogFormat: "auto",
			LogLevel:  "info",
			Progress:  "auto",
		},
		Evolve:  defaultEvolve(),
		Cluster: defaultCluster(),
	}
}

// Load reads a TOML config over Default: keys not in the file keep their
// defaults. Unknown keys, values of the wrong type or out of
// range, and TOML syntax errors are refused with an error that starts with
// the path and names the key (and the line, where toml knows it).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "x.toml: no such file or directory", not "x.toml: open x.toml: ..."
		}
		return nil, &FileError{File: path, Err: err}
	}
	return Parse(data, path)
}

// Parse is Load on bytes; name is used in messages.
func Parse(data []byte, name string) (*Config, error) {
	cfg := Default()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(cfg)
	if err != nil {
		return nil, &FileError{File: name, Err: tomlError(err)}
	}
	if err := checkKeys(md); err != nil {
		return nil, &FileError{File: name, Err: err}
	}
	if err := cfg.Validate(); err != nil {
		return nil, &FileError{File: name, Err: err}
	}
	return cfg, nil
}

// FileError is a problem with a config file: its name and what is wrong
// (often a *ValueError).
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// tomlError rewrites the toml package's errors without their "toml: "
// prefix (the file name takes its place) and keeps only the one-line form:
// line, last key and message.
func tomlError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			return fmt.Errorf("line %d (key %q): %s", pe.Position.Line, pe.LastKey, msg)
		}
		return fmt.Errorf("line %d: %s", pe.Position.Line, msg)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "toml: "))
}
