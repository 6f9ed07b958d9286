package neat_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

var in28 = neat.Input{Channels: 1, Height: 28, Width: 28}

// toyFitness scores a genome without a forward: the closer the output
// node's mean weight is to 0.05, and the more conv2d nodes it has (a
// little), the better. Weights and structure both matter, so selection,
// mutation and crossover all have work to do. Genomes whose id is a
// multiple of nanEvery (when > 0) get NaN, as an unscorable genome would.
func toyFitness(nanEvery int64, calls *[]int) neat.Evaluate {
	return func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		if calls != nil {
			*calls = append(*calls, len(pop.Genomes))
		}
		fs := make([]float64, len(pop.Genomes))
		for i, g := range pop.Genomes {
			if nanEvery > 0 && g.ID%nanEvery == 0 {
				fs[i] = math.NaN()
				continue
			}
			w := g.Params[g.Output].Weight.Data
			var sum float64
			for _, v := range w {
				sum += float64(v)
			}
			convs := 0
			for _, n := range g.Nodes {
				if n.Op == neat.OpConv2D {
					convs++
				}
			}
			fs[i] = -math.Abs(sum/float64(len(w))-0.05) + 0.001*float64(convs)
		}
		return fs, nil
	}
}

func smallConfig() neat.EvolveConfig {
	cfg := neat.DefaultEvolveConfig()
	cfg.PopulationSize = 16
	cfg.PAddConv, cfg.PAddSkip, cfg.PRemoveNode, cfg.PChannels = 0.3, 0.2, 0.05, 0.2
	return cfg
}

func newEvolution(t testing.TB, cfg neat.EvolveConfig) *neat.Evolution {
	t.Helper()
	e, err := neat.NewEvolution(in28, 10, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func steps(t testing.TB, e *neat.Evolution, n int, eval neat.Evaluate) {
	t.Helper()
	for range n {
		if _, err := e.Step(context.Background(), eval); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvolveInvariants runs generations and checks, each time, what every
// generation must hold: the population's size, unique genome ids, every
// genome valid within the FLOP limit, node ids increasing; the best
// fitness never falls and elites are not scored again.
func TestEvolveInvariants(t *testing.T) {
	for _, init := range []string{neat.InitMinimal, neat.InitGenerate, neat.InitConv, "legacy"} {
		t.Run(init, func(t *testing.T) {
			cfg := smallConfig()
			if init == "legacy" {
				legacy := neat.LegacyEvolveConfig()
				legacy.PopulationSize = cfg.PopulationSize
				legacy.PAddConv, legacy.PAddSkip, legacy.PRemoveNode, legacy.PChannels = cfg.PAddConv, cfg.PAddSkip, cfg.PRemoveNode, cfg.PChannels
				cfg = legacy
			} else {
				cfg.Init = init
			}
			e := newEvolution(t, cfg)
			first := 3 // nodes a genome must exceed to have grown (conv: conv, pool, dense)
			if init == neat.InitMinimal {
				first = 2 // pool, dense
			}
			var calls []int
			eval := toyFitness(7, &calls)
			prevBest := math.Inf(-1)
			grew := false
			for gen := range 25 {
				pop := e.Population()
				if len(pop.Genomes) != cfg.PopulationSize || e.Generation() != gen {
					t.Fatalf("generation %d (%d): %d genomes", gen, e.Generation(), len(pop.Genomes))
				}
				ids := map[int64]bool{}
				for _, g := range pop.Genomes {
					if ids[g.ID] {
						t.Fatalf("generation %d: genome id %d twice", gen, g.ID)
					}
					ids[g.ID] = true
					gr, err := neat.Compile(g, in28, 10)
					if err != nil {
						t.Fatalf("generation %d: %v", gen, err)
					}
					if gr.FLOPs > cfg.MaxFLOPs {
						t.Fatalf("generation %d: genome %d has %d FLOPs", gen, g.ID, gr.FLOPs)
					}
					grew = grew || len(g.Nodes) > first
					for i := 1; i < len(g.Nodes); i++ {
						if g.Nodes[i].ID <= g.Nodes[i-1].ID {
							t.Fatalf("generation %d: genome %d node ids not increasing", gen, g.ID)
						}
					}
				}
				st, err := e.Step(context.Background(), eval)
				if err != nil {
					t.Fatal(err)
				}
				if st.Best < prevBest {
					t.Fatalf("generation %d: best fitness fell from %v to %v", gen, prevBest, st.Best)
				}
				prevBest = st.Best
				if _, f, _ := e.Best(); f != st.Best {
					t.Fatalf("generation %d: Best() %v, generation's best %v", gen, f, st.Best)
				}
				if gen > 0 && !cfg.RescoreElites && calls[gen] >= cfg.PopulationSize {
					t.Fatalf("generation %d: %d genomes scored: the elites were scored again", gen, calls[gen])
				}
				if gen > 0 && cfg.RescoreElites && calls[gen] != cfg.PopulationSize {
					t.Fatalf("generation %d: %d genomes scored, want all %d (rescore_elites)", gen, calls[gen], cfg.PopulationSize)
				}
				nan := 0
				for _, g := range pop.Genomes {
					if g.ID%7 == 0 {
						nan++
					}
				}
				if st.Failed != nan {
					t.Fatalf("generation %d: %d failed, %d genomes scored NaN", gen, st.Failed, nan)
				}
			}
			h := e.History()
			if len(h) != 25 || h[24].Best <= h[0].Best {
				t.Errorf("history of %d generations, best %v → %v: no progress", len(h), h[0].Best, h[len(h)-1].Best)
			}
			if !grew {
				t.Error("no genome ever grew a node")
			}
		})
	}
}

// checkpointFiles reads every file of a checkpoint folder.
func checkpointFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, de := range entries {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[de.Name()] = b
	}
	return files
}

func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d files and %d files", what, len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Fatalf("%s: %s differs", what, name)
		}
	}
}

// TestEvolveReproducible: the same seed and config give the same run, byte
// for byte in the checkpoint; another seed another one.
func TestEvolveReproducible(t *testing.T) {
	run := func(seed int64) map[string][]byte {
		cfg := smallConfig()
		cfg.Seed = seed
		e := newEvolution(t, cfg)
		steps(t, e, 12, toyFitness(0, nil))
		dir := t.TempDir()
		if err := e.SaveCheckpoint(dir, "meta"); err != nil {
			t.Fatal(err)
		}
		return checkpointFiles(t, dir)
	}
	a, b := run(3), run(3)
	sameFiles(t, "two runs of seed 3", a, b)
	if c := run(4); bytes.Equal(a["state.json"], c["state.json"]) {
		t.Error("seeds 3 and 4 gave the same run")
	}
	if len(a) != 6 {
		t.Errorf("checkpoint files %v", slices.Sorted(func(yield func(string) bool) {
			for k := range a {
				if !yield(k) {
					return
				}
			}
		}))
	}
}

// TestEvolveResume: a run checkpointed, loaded and continued ends exactly
// as the run that never stopped, with the evolution strategy's σ per
// tensor (the default) and per parameter with momentum.
func TestEvolveResume(t *testing.T) {
	perParam := smallConfig()
	perParam.ESSigmaScope, perParam.ESMomentum, perParam.ESSigmaRate = neat.ESSigmaPerParameter, 0.5, 2
	annealed := smallConfig()
	annealed.ESAnneal, annealed.ESRateFinal, annealed.ESSigmaFinal = 6, 0.2, 0.5
	for name, cfg := range map[string]neat.EvolveConfig{"default": smallConfig(), "per parameter": perParam, "annealed": annealed} {
		t.Run(name, func(t *testing.T) { testResume(t, cfg) })
	}
}

func testResume(t *testing.T, cfg neat.EvolveConfig) {
	eval := toyFitness(11, nil)
	whole := newEvolution(t, cfg)
	steps(t, whole, 10, eval)
	wholeDir := t.TempDir()
	if err := whole.SaveCheckpoint(wholeDir, "m"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	e := newEvolution(t, cfg)
	for _, n := range []int{0, 3, 1, 6} { // save, load, go on, several times
		steps(t, e, n, eval)
		if err := e.SaveCheckpoint(dir, "m"); err != nil {
			t.Fatal(err)
		}
		tornHistory(t, dir)
		var meta string
		var err error
		if e, meta, err = neat.LoadCheckpoint(dir); err != nil {
			t.Fatal(err)
		}
		if meta != "m" {
			t.Fatalf("meta %q", meta)
		}
	}
	if err := e.SaveCheckpoint(dir, "m"); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "resumed and uninterrupted runs", checkpointFiles(t, wholeDir), checkpointFiles(t, dir))
	g1, f1, n1 := whole.Best()
	g2, f2, n2 := e.Best()
	if g1.ID != g2.ID || f1 != f2 || n1 != n2 {
		t.Errorf("best %d %v %d, resumed %d %v %d", g1.ID, f1, n1, g2.ID, f2, n2)
	}
}

// tornHistory appends to dir's history what a process killed after
// appending a generation's line (and half of the next one) but before
// writing state.json leaves there: LoadCheckpoint must cut it off.
func tornHistory(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "history.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("{\"generation\":999,\"best\":1}\n{\"generation\":1000,\"be"); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointShortHistory: a history file with fewer lines than
// state.json counts is an error that names it.
func TestCheckpointShortHistory(t *testing.T) {
	e := newEvolution(t, smallConfig())
	steps(t, e, 3, toyFitness(0, nil))
	dir := t.TempDir()
	if err := e.SaveCheckpoint(dir, ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "history.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:bytes.LastIndexByte(data[:len(data)-1], '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := neat.LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), path+": 2 lines, want 3") {
		t.Fatalf("short history: %v", err)
	}
}

// TestEvolveEvaluateError: a failing Evaluate leaves the run as it was.
func TestEvolveEvaluateError(t *testing.T) {
	e := newEvolution(t, smallConfig())
	steps(t, e, 3, toyFitness(0, nil))
	before := t.TempDir()
	if err := e.SaveCheckpoint(before, ""); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("device lost")
	_, err := e.Step(context.Background(), func(context.Context, *neat.Population) ([]float64, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Step returned %v", err)
	}
	_, err = e.Step(context.Background(), func(_ context.Context, p *neat.Population) ([]float64, error) {
		return make([]float64, len(p.Genomes)-1), nil
	})
	if err == nil || !strings.Contains(err.Error(), "fitness values for") {
		t.Fatalf("short fitness slice: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Step(ctx, toyFitness(0, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	after := t.TempDir()
	if err := e.SaveCheckpoint(after, ""); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "before and after failed steps", checkpointFiles(t, before), checkpointFiles(t, after))
}

// TestEvolveAllNaN: a generation no genome of which could be scored still
// breeds the next; nothing becomes the best.
func TestEvolveAllNaN(t *testing.T) {
	e := newEvolution(t, smallConfig())
	st, err := e.Step(context.Background(), toyFitness(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 16 || !math.IsNaN(st.Mean) || !math.IsNaN(st.Best) {
		t.Errorf("stats %+v", st)
	}
	if g, _, _ := e.Best(); g != nil {
		t.Errorf("best genome %d from a generation without fitness", g.ID)
	}
	if len(e.Population().Genomes) != 16 {
		t.Error("next generation not bred")
	}
	steps(t, e, 2, toyFitness(0, nil))
	if g, _, _ := e.Best(); g == nil {
		t.Error("no best after scored generations")
	}
}

func TestLoadCheckpointErrors(t *testing.T) {
	e := newEvolution(t, smallConfig())
	steps(t, e, 2, toyFitness(0, nil))
	dir := t.TempDir()
	if err := e.SaveCheckpoint(dir, ""); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.json")
	good, _ := os.ReadFile(state)
	tests := []struct {
		name, edit, want string
	}{
		{"not JSON", "{", "state.json: unexpected end of JSON input"},
		{"format", strings.Replace(string(good), "neateval.evolution/v1", "x/v9", 1), `format "x/v9"`},
		{"config", strings.Replace(string(good), `"PopulationSize": 16`, `"PopulationSize": 1`, 1), "config: population_size = 1"},
		{"missing population", strings.Replace(string(good), "population-000002.json", "population-000009.json", 1), "population-000009.json: no such file"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(state, []byte(tt.edit), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := neat.LoadCheckpoint(dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	if _, _, err := neat.LoadCheckpoint(t.TempDir()); err == nil || !strings.Contains(err.Error(), "state.json: no such file") {
		t.Errorf("empty folder: %v", err)
	}
	if neat.CheckpointExists(t.TempDir()) || !neat.CheckpointExists(dir) {
		t.Error("CheckpointExists")
	}
}

func TestEvolveConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *neat.EvolveConfig)
		want string
	}{
		{"population", func(c *neat.EvolveConfig) { c.PopulationSize = 1 }, "population_size = 1: must be in 2 … 1048576"},
		{"init", func(c *neat.EvolveConfig) { c.Init = "random" }, `init = random: must be one of "minimal", "conv", "generate", "fixed"`},
		{"even kernel", func(c *neat.EvolveConfig) { c.Kernels = []int{3, 4} }, "kernels[1] = 4: must be odd"},
		{"channels", func(c *neat.EvolveConfig) { c.MinChannels = 8; c.MaxChannels = 4 }, "max_channels = 4: must be in min_channels (8) … 65536"},
		{"activation", func(c *neat.EvolveConfig) { c.Activations = []neat.Activation{"swish"} }, `activations[0] = swish: must be one of "identity"`},
		{"probability", func(c *neat.EvolveConfig) { c.PAddSkip = 1.5 }, "p_add_skip = 1.5: must be in [0, 1]"},
		{"nan power", func(c *neat.EvolveConfig) { c.WeightPower = math.NaN() }, "weight_mutate_power = NaN: must be finite"},
		{"threshold", func(c *neat.EvolveConfig) { c.CompatThreshold = 0 }, "compat_threshold = 0: must be finite and > 0"},
		{"species elitism", func(c *neat.EvolveConfig) { c.SpeciesElitism = 0 }, "species_elitism = 0: must be ≥ 1"},
		{"elitism", func(c *neat.EvolveConfig) { c.Elitism = 41 }, "elitism = 41: must be in 0 … population_size (40)"},
		{"survival", func(c *neat.EvolveConfig) { c.SurvivalThreshold = 0 }, "survival_threshold = 0: must be in (0, 1]"},
		{"stagnation", func(c *neat.EvolveConfig) { c.Stagnation = 0 }, "stagnation = 0: must be ≥ 1"},
	}
	for _, tt := range tests {
		c := neat.DefaultEvolveConfig()
		tt.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	c := neat.DefaultEvolveConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	c.MaxFLOPs = 10 // below the minimal genome's
	if _, err := neat.NewEvolution(in28, 10, c); err == nil || !strings.Contains(err.Error(), "above the limit of 10") {
		t.Errorf("tiny max FLOPs: %v", err)
	}
}
