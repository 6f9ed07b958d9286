package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the whole of neateval's configuration: config.toml, with the
// command-line flags of `neateval run` merged over it. The key names are the
// seed's (000_402b17961448f9e0) where it has one; DefaultConfig holds the
// seed's defaults and is exactly what the shipped config.toml says.
type Config struct {
	Population PopulationConfig `toml:"population"`
	Dataset    DatasetConfig    `toml:"dataset"`
	Eval       EvalConfig       `toml:"eval"`
	VRAM       VRAMConfig       `toml:"vram"`
	Output     OutputConfig     `toml:"output"`
	Evolve     EvolveConfig     `toml:"evolve"`
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
	Backend             string `toml:"backend"` // cpu | cuda | auto
	DType               string `toml:"dtype"`   // float32 | bfloat16 (storage; compute is float32)
	EvalBatchSize       int    `toml:"eval_batch_size"`
	FitnessEvalParallel int    `toml:"fitness_eval_parallel"`
	Threads             int    `toml:"threads"` // CPU worker threads in total; 0 = all cores
	Fitness             string `toml:"fitness"` // accuracy | neg_loss
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
}

// DefaultConfig is the configuration with nothing set: the real MNIST test
// set on the CPU, a generated population of 64, results in results.jsonl.
// It equals the shipped config.toml (a test holds it to that).
func DefaultConfig() *Config {
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
			DType:               "float32",
			EvalBatchSize:       45000,
			FitnessEvalParallel: 1,
			Fitness:             "accuracy",
		},
		VRAM: VRAMConfig{
			VRAMUsageThreshold:              0.80,
			AdaptivePopulationVRAM:          true,
			PopulationVRAMResidentThreshold: 0.50,
			PopulationGPUBatchFracMin:       0.40,
			PopulationGPUBatchFracMax:       0.50,
			CacheValOnGPU:                   true,
			Prefetch:                        true,
			FaultSeed:                       1,
			FaultAt:                         []int64{},
		},
		Output: OutputConfig{
			Results:   "results.jsonl",
			LogFormat: "auto",
			LogLevel:  "info",
			Progress:  "auto",
		},
		Evolve: defaultEvolve(),
	}
}

// LoadConfig reads a TOML config over DefaultConfig: keys not in the file
// keep their defaults. Unknown keys, values of the wrong type or out of
// range, and TOML syntax errors are refused with an error that starts with
// the path and names the key (and the line, where toml knows it).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "x.toml: no such file or directory", not "x.toml: open x.toml: ..."
		}
		return nil, &ConfigError{File: path, Err: err}
	}
	return parseConfig(data, path)
}

// parseConfig is LoadConfig on bytes; name is used in messages.
func parseConfig(data []byte, name string) (*Config, error) {
	cfg := DefaultConfig()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(cfg)
	if err != nil {
		return nil, &ConfigError{File: name, Err: tomlError(err)}
	}
	if err := checkKeys(md); err != nil {
		return nil, &ConfigError{File: name, Err: err}
	}
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{File: name, Err: err}
	}
	return cfg, nil
}

// ConfigError is a problem with a config file: its name and what is wrong.
type ConfigError struct {
	File string
	Err  error
}

func (e *ConfigError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

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

// checkKeys refuses keys that the config does not have, by name, with the
// nearest known key as a suggestion. toml matches struct fields without
// regard to case, so a key decoded under another spelling is refused too.
func checkKeys(md toml.MetaData) error {
	const maxReported = 3
	known := knownKeys()
	var msgs []string
	more := 0
	reported := map[string]bool{}
	bad := func(k string) {
		// A key under an unknown table is covered by the table's message.
		for i := range len(k) {
			if k[i] == '.' && reported[k[:i]] {
				return
			}
		}
		reported[k] = true
		if len(msgs) == maxReported {
			more++
			return
		}
		m := fmt.Sprintf("unknown key %q", k)
		if s := suggestKey(k, known); s != "" {
			m += fmt.Sprintf(" (did you mean %q?)", s)
		}
		msgs = append(msgs, m)
	}
	for _, k := range md.Undecoded() {
		bad(k.String())
	}
	for _, k := range md.Keys() {
		if ks := k.String(); !known[ks] && !reported[ks] {
			bad(ks)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more unknown keys", more))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// knownKeys is every table and key of Config, as toml writes them:
// "eval", "eval.eval_batch_size", ...
func knownKeys() map[string]bool {
	keys := map[string]bool{}
	for _, k := range configKeys() {
		keys[k] = true
		if i := strings.IndexByte(k, '.'); i > 0 {
			keys[k[:i]] = true
		}
	}
	return keys
}

// configKeys lists the leaf keys of Config in declaration order.
func configKeys() []string {
	var keys []string
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		sec := ct.Field(i)
		for j := 0; j < sec.Type.NumField(); j++ {
			keys = append(keys, sec.Tag.Get("toml")+"."+sec.Type.Field(j).Tag.Get("toml"))
		}
	}
	return keys
}

// suggestKey returns the known key nearest to k, or "" if none is close:
// the same name in another table, a spelling differing only in case, or
// one within a small edit distance.
func suggestKey(k string, known map[string]bool) string {
	if len(k) > 100 { // no key is this long
		return ""
	}
	cands := make([]string, 0, len(known))
	for c := range known {
		cands = append(cands, c)
	}
	sort.Strings(cands)
	last := k[strings.LastIndexByte(k, '.')+1:]
	for _, c := range cands {
		if strings.EqualFold(c, k) {
			return c
		}
	}
	best, bestD := "", 1<<30
	for _, c := range cands {
		if strings.Contains(c, ".") && c[strings.LastIndexByte(c, '.')+1:] == last {
			return c
		}
		if d := editDistance(strings.ToLower(k), c); d < bestD {
			best, bestD = c, d
		}
	}
	if limit := max(2, len(k)/5); bestD <= limit {
		return best
	}
	// A key in the right table but misspelled beyond the limit: compare the
	// last parts alone.
	best, bestD = "", 1<<30
	for _, c := range cands {
		if i := strings.LastIndexByte(c, '.'); i > 0 {
			if d := editDistance(strings.ToLower(last), c[i+1:]); d < bestD {
				best, bestD = c, d
			}
		}
	}
	if bestD <= max(2, len(last)/4) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
