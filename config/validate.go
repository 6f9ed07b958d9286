package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/neateval/neateval/datasets"
)

// ValueError is a config value outside what its key allows:
// `vram.vram_usage_threshold = 1.5: must be in (0, 1]`.
type ValueError struct {
	Key   string // "section.key"
	Value string // the value as TOML would write it
	Rule  string // what is allowed
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s = %s: %s", e.Key, e.Value, e.Rule) }

// Validate checks every value against its allowed range and the keys
// against each other. The first problem found is returned as a *ValueError.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, key string, v any, rule string, args ...any) {
		if !ok {
			errs = append(errs, &ValueError{Key: key, Value: tomlValue(v), Rule: fmt.Sprintf(rule, args...)})
		}
	}
	oneOf := func(key, v string, allowed ...string) {
		for _, a := range allowed {
			if v == a {
				return
			}
		}
		check(false, key, v, "must be one of %s", quoteList(allowed))
	}

	p := &c.Population
	check(p.GenerateSize >= 1, "population.generate_size", p.GenerateSize, "must be ≥ 1")
	oneOf("population.generate_preset", p.GeneratePreset, "small", "wide")

	d := &c.Dataset
	oneOf("dataset.kind", d.Kind, datasetKinds...)
	oneOf("dataset.split", d.Split, "test", "train")
	check(d.Limit >= 0, "dataset.limit", d.Limit, "must be ≥ 0 (0 = all images)")
	check(d.SyntheticSize >= 1, "dataset.synthetic_size", d.SyntheticSize, "must be ≥ 1")
	switch d.Kind {
	case "idx":
		check(d.Images != "", "dataset.images", d.Images, "must name the images file (in dataset.path, if set) when dataset.kind = \"idx\"")
		check(d.Labels != "", "dataset.labels", d.Labels, "must name the labels file (in dataset.path, if set) when dataset.kind = \"idx\"")
	case "fashion-mnist", "cifar10":
		check(d.Path != "", "dataset.path", d.Path, "must be set when dataset.kind = %q (only MNIST ships with neateval)", d.Kind)
	}
	check(len(d.Mean) == len(d.Std), "dataset.std", d.Std, "must have as many entries as dataset.mean (%d)", len(d.Mean))
	for i, m := range d.Mean {
		check(isFinite(m), fmt.Sprintf("dataset.mean[%d]", i), m, "must be finite")
	}
	for i, s := range d.Std {
		check(s > 0 && !math.IsInf(s, 1), fmt.Sprintf("dataset.std[%d]", i), s, "must be > 0 and finite")
	}

	e := &c.Eval
	oneOf("eval.backend", e.Backend, "cpu", "cuda", "auto")
	check(e.Device >= 0, "eval.device", e.Device, "must be ≥ 0 (a CUDA device index)")
	oneOf("eval.dtype", e.DType, "float32", "bfloat16")
	check(e.EvalBatchSize >= 1, "eval.eval_batch_size", e.EvalBatchSize, "must be ≥ 1")
	check(e.FitnessEvalParallel >= 0, "eval.fitness_eval_parallel", e.FitnessEvalParallel, "must be ≥ 0 (0 = the backend's suggestion)")
	check(e.Threads >= 0, "eval.threads", e.Threads, "must be ≥ 0 (0 = all cores)")
	oneOf("eval.fitness", e.Fitness, FitnessAccuracy, FitnessNegLoss)
	oneOf("eval.compute_precision", e.ComputePrecision, "fp32", "tf32")

	v := &c.VRAM
	check(v.MemoryBytes >= 0, "vram.memory_bytes", v.MemoryBytes, "must be ≥ 0")
	unit := func(key string, x float64) { check(x > 0 && x <= 1, key, x, "must be in (0, 1]") }
	unit("vram.vram_usage_threshold", v.VRAMUsageThreshold)
	unit("vram.population_vram_resident_threshold", v.PopulationVRAMResidentThreshold)
	unit("vram.population_gpu_batch_frac_min", v.PopulationGPUBatchFracMin)
	unit("vram.population_gpu_batch_frac_max", v.PopulationGPUBatchFracMax)
	check(!(v.PopulationGPUBatchFracMin > v.PopulationGPUBatchFracMax), "vram.population_gpu_batch_frac_min", v.PopulationGPUBatchFracMin,
		"must be ≤ vram.population_gpu_batch_frac_max (%s)", tomlValue(v.PopulationGPUBatchFracMax))
	check(v.PopulationGPUChunkBytes >= 0, "vram.population_gpu_chunk_bytes", v.PopulationGPUChunkBytes, "must be ≥ 0 (0 = unset)")
	check(v.CUDAGraphMemoryReserveBytes >= 0, "vram.cuda_graph_memory_reserve_bytes", v.CUDAGraphMemoryReserveBytes, "must be ≥ 0")
	check(v.FaultRate >= 0 && v.FaultRate <= 1, "vram.fault_rate", v.FaultRate, "must be in [0, 1]")
	for i, n := range v.FaultAt {
		check(n >= 1, fmt.Sprintf("vram.fault_at[%d]", i), n, "must be ≥ 1 (allocations are numbered from 1)")
	}

	o := &c.Output
	check(strings.TrimSpace(o.Results) != "", "output.results", o.Results, "must name a file")
	oneOf("output.log_format", o.LogFormat, "auto", "console", "json")
	oneOf("output.log_level", o.LogLevel, logLevels...)
	oneOf("output.progress", o.Progress, "auto", "on", "off")

	c.Evolve.validate(check)
	c.Cluster.validate(check)

	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// datasetKinds are the values of dataset.kind.
var datasetKinds = datasets.Kinds

// logLevels are the values of output.log_level.
var logLevels = []string{"trace", "debug", "info", "warn", "error"}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// tomlValue writes v as it would appear in a TOML file.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case ByteSize:
		return strconv.FormatInt(int64(x), 10)
	}
	// Named strings (neat.Activation) and lists of anything.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.String:
		return strconv.Quote(rv.String())
	case reflect.Slice:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = tomlValue(rv.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}
