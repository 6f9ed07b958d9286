package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neateval/neateval/neat"
)

// Evolve is the [evolve] section: `neateval evolve`, a NEAT run on the
// configured data set. Its NEAT keys decode straight into the embedded
// neat.EvolveConfig (its toml tags name them; see there what each does);
// the others say how long the run is, what fitness it measures and where
// it writes.
type Evolve struct {
	neat.EvolveConfig
	// Generations is how many generations the run evaluates in all; a
	// resumed run may raise it.
	Generations int `toml:"generations"`
	// ValSize is how many training images, drawn by Seed, the fitness is
	// measured on.
	ValSize int `toml:"val_size"`
	// ValBatch, when > 0, measures each generation's fitness on ValBatch
	// images drawn afresh from the ValSize validation images (seeded by
	// Seed and the generation, see ValSampleSeed), rather than on all of
	// them: many cheap, noisy generations instead of few exact ones. The
	// elites should then be re-scored (rescore_elites), and the best
	// genome is chosen at the end on all ValSize images.
	ValBatch int `toml:"val_batch"`
	// ValBatchFinal, when > 0, is the sample size the generations grow to:
	// generation gen is scored on ValBatchAt(gen) images, rising from
	// ValBatch along the half cosine of es_anneal (neat.Anneal) to
	// ValBatchFinal at generation es_anneal. Early on, a small noisy
	// sample a generation buys more generations; near the end, when the
	// strategy's steps are small, the sample's noise outweighs them and a
	// bigger sample pays (a larger batch in place of a smaller step).
	ValBatchFinal int `toml:"val_batch_final"`
	// LossWeight is subtracted from eval.fitness per unit of the mean
	// cross-entropy loss: it ranks genomes of equal accuracy by how sure
	// they are, and keeps logits from growing without bound.
	LossWeight float64 `toml:"loss_weight"`
	// ParamPenalty is subtracted from eval.fitness per parameter.
	ParamPenalty float64 `toml:"param_penalty"`
	// CheckpointDir holds the checkpoint.
	CheckpointDir string `toml:"checkpoint_dir"`
	// CheckpointSeconds is the least time between two checkpoints: one is
	// taken after the first generation that ends this long after the last
	// one (0: after every generation), after the last generation, and when
	// the run stops early.
	CheckpointSeconds float64 `toml:"checkpoint_seconds"`
	// Best is the population JSON the best genome is written to (its
	// safetensors file beside it).
	Best string `toml:"best"`
}

// defaultEvolve is the [evolve] section of Default: neat's defaults, 1500
// generations (37–39 s on 2 quiet cores), each scored on 200 images drawn afresh from 10000 training
// images, on accuracy less half the loss.
func defaultEvolve() Evolve {
	return Evolve{
		EvolveConfig:      neat.DefaultEvolveConfig(),
		Generations:       1500,
		ValSize:           10000,
		ValBatch:          200,
		LossWeight:        0.5,
		ParamPenalty:      1e-6,
		CheckpointDir:     "evolve-checkpoint",
		CheckpointSeconds: 2,
		Best:              "best.json",
	}
}

// validate checks the section's keys, each against its range, with check
// as Config.Validate gives it.
func (s *Evolve) validate(check func(ok bool, key string, v any, rule string, args ...any)) {
	check(s.Generations >= 1, "evolve.generations", s.Generations, "must be ≥ 1")
	if err := s.EvolveConfig.Validate(); err != nil {
		var fe *neat.FieldError
		if errors.As(err, &fe) {
			check(false, "evolve."+fe.Key, fe.Value, "%s", strings.ReplaceAll(fe.Rule, " … population_size", " … evolve.population_size"))
		} else {
			check(false, "evolve", "", "%v", err)
		}
	}
	check(s.ValSize >= 1, "evolve.val_size", s.ValSize, "must be ≥ 1")
	check(s.ValBatch >= 0, "evolve.val_batch", s.ValBatch, "must be ≥ 0 (0 or ≥ evolve.val_size: all of them)")
	check(s.ValBatchFinal == 0 || s.ValBatch > 0 && s.ValBatchFinal >= s.ValBatch && s.ESAnneal > 0,
		"evolve.val_batch_final", s.ValBatchFinal, "must be 0 (no growth) or ≥ evolve.val_batch > 0, with evolve.es_anneal > 0 (its schedule)")
	check(s.LossWeight >= 0 && isFinite(s.LossWeight), "evolve.loss_weight", s.LossWeight, "must be finite and ≥ 0")
	check(s.ParamPenalty >= 0 && isFinite(s.ParamPenalty), "evolve.param_penalty", s.ParamPenalty, "must be finite and ≥ 0")
	check(strings.TrimSpace(s.CheckpointDir) != "", "evolve.checkpoint_dir", s.CheckpointDir, "must name a folder")
	check(s.CheckpointSeconds >= 0 && s.CheckpointSeconds <= 86400 && isFinite(s.CheckpointSeconds), "evolve.checkpoint_seconds", s.CheckpointSeconds, "must be ≥ 0 and ≤ 86400")
	check(strings.HasSuffix(s.Best, ".json"), "evolve.best", s.Best, "must name a .json file (the weights go beside it)")
}

// EvolveIdentity lists, one "key = value" per line, the config keys a
// run's course depends on: the [evolve] keys but generations and the
// output paths, the data set's identity, and eval.fitness. A checkpoint
// records it, and --resume refuses a config whose identity differs; other
// keys (the backend, batch sizes, memory, logs, dataset.limit, which only
// caps the test set) may change between the two.
func EvolveIdentity(c *Config) string {
	skip := []string{"evolve.generations", "evolve.checkpoint_dir", "evolve.checkpoint_seconds", "evolve.best", "dataset.split", "dataset.limit"}
	var lines []string
	for _, key := range Keys() {
		sec, _, _ := strings.Cut(key, ".")
		if (sec == "evolve" || sec == "dataset") && !slices.Contains(skip, key) {
			v, _ := c.field(key)
			lines = append(lines, key+" = "+tomlValue(v.Interface()))
		}
	}
	lines = append(lines, "eval.fitness = "+tomlValue(c.Eval.Fitness))
	return strings.Join(lines, "\n")
}

// IdentityDiff says which keys differ between two identities.
func IdentityDiff(was, now string) string {
	old := strings.Split(was, "\n")
	var diffs []string
	for _, line := range strings.Split(now, "\n") {
		if slices.Contains(old, line) {
			continue
		}
		key, _, _ := strings.Cut(line, " = ")
		then := "(not set)"
		for _, o := range old {
			if k, v, _ := strings.Cut(o, " = "); k == key {
				then = v
			}
		}
		diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", key, then, strings.TrimPrefix(line, key+" = ")))
	}
	if len(diffs) == 0 {
		return "the recorded configuration is unreadable"
	}
	return strings.Join(diffs, "; ")
}

// ValBatchAt is how many images generation gen is scored on: ValBatch,
// or with ValBatchFinal > 0 the point of its growth to ValBatchFinal
// (rounded) that generation. 0 means all ValSize images.
func (s *Evolve) ValBatchAt(gen int) int {
	if s.ValBatchFinal == 0 {
		return s.ValBatch
	}
	from, to := float64(s.ValBatch), float64(s.ValBatchFinal)
	return int(math.Round(to + (from-to)*neat.Anneal(gen, s.ESAnneal, 0)))
}

// ValSampleSeed is the seed of generation gen's validation sample when
// ValBatch > 0: a fixed mix of the run's seed and the generation, so a run
// and its resumption draw the same images.
func (s *Evolve) ValSampleSeed(gen int) int64 {
	// 48 bits: the seed is logged, and JSON readers hold numbers as doubles.
	return int64((uint64(s.Seed)*0x9e3779b97f4a7c15 + uint64(gen+1)*0xbf58476d1ce4e5b9) >> 16)
}
