package neat

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A checkpoint is a folder holding:
//
//	state.json                     the run's state, written last: the commit point
//	population-GGGGGG.json         the generation to evaluate next (population format)
//	population-GGGGGG.safetensors
//	archive-GGGGGG.json            species representatives and the best genome so far
//	archive-GGGGGG.safetensors
//	history.jsonl                  one line of GenStats per generation, appended
//
// state.json names the files of its generation; each file is written
// atomically (a temporary file renamed over the old one) before state.json
// is, and the files of other generations are removed after it. The history
// only grows, so it is appended to (and synced) rather than rewritten: a
// run of 50,000 generations would otherwise write its whole history, ~15
// MB, after every generation. state.json says how many of its lines are
// the run's (history_len); lines past them, appended by a process killed
// before it wrote state.json, are cut off when the checkpoint is loaded.
// A process killed at any moment leaves the last checkpoint whole.
const (
	checkpointFormat = "neateval.evolution/v1"
	checkpointState  = "state.json"
	checkpointHist   = "history.jsonl"
)

type checkpointJSON struct {
	Format      string        `json:"format"`
	Generation  int           `json:"generation"`
	Meta        string        `json:"meta"`
	Config      EvolveConfig  `json:"config"`
	Input       Input         `json:"input"`
	NumClasses  int           `json:"num_classes"`
	RNG         []byte        `json:"rng"` // the PCG's MarshalBinary
	NextNode    int           `json:"next_node"`
	NextGenome  int64         `json:"next_genome"`
	NextSpecies int           `json:"next_species"`
	Threshold   float64       `json:"threshold"`
	Population  string        `json:"population"`
	Archive     string        `json:"archive,omitempty"`
	Fitness     []*float64    `json:"fitness"` // null: NaN
	Known       []bool        `json:"known"`
	Species     []speciesJSON `json:"species"`
	Best        *bestJSON     `json:"best,omitempty"`
	// HistoryLen is how many lines of HistoryFile are the run's history
	// (the generations before Generation).
	HistoryFile string `json:"history_file,omitempty"`
	HistoryLen  int    `json:"history_len"`
	// History is the history inline, as checkpoints before history.jsonl
	// kept it (read, never written).
	History []genStatsJSON `json:"history,omitempty"`
	// ESParents maps each evolution-strategy sample of the population
	// (its genome id, in decimal) to its centre's id.
	ESParents map[string]int64 `json:"es_parents,omitempty"`
	// ESState is the σ and velocity of each of those centres, by its id.
	ESState map[int64]*esState `json:"es_state,omitempty"`
}

type speciesJSON struct {
	ID           int      `json:"id"`
	Created      int      `json:"created"`
	LastImproved int      `json:"last_improved"`
	Best         *float64 `json:"best"` // null: none scored yet
	Rep          int64    `json:"representative"`
}

type bestJSON struct {
	Genome     int64   `json:"genome"`
	Fitness    float64 `json:"fitness"`
	Generation int     `json:"generation"`
}

type genStatsJSON struct {
	Generation int      `json:"generation"`
	Best       *float64 `json:"best"`
	Mean       *float64 `json:"mean"`
	BestGenome int64    `json:"best_genome"`
	BestParams int64    `json:"best_params"`
	BestFLOPs  int64    `json:"best_flops"`
	BestNodes  int      `json:"best_nodes"`
	Evaluated  int      `json:"evaluated"`
	Failed     int      `json:"failed"`
	Species    int      `json:"species"`
	Threshold  float64  `json:"threshold"`
	ESSigma    *float64 `json:"es_sigma,omitempty"`
	ESRate     *float64 `json:"es_rate,omitempty"`
}

func fptr(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func fval(p *float64, none float64) float64 {
	if p == nil {
		return none
	}
	return *p
}

// CheckpointExists reports whether dir holds a checkpoint (its state.json).
func CheckpointExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, checkpointState))
	return err == nil
}

// SaveCheckpoint writes the run's state into dir (created if needed) so
// that LoadCheckpoint continues it exactly: the generation to evaluate next
// with the fitness already known, the random stream's state, the
// innovation counter, the species with their representatives, the best
// genome so far and the history. meta is kept as it is, for the caller (a
// digest of what else the run depends on, say). A process killed while
// SaveCheckpoint runs leaves the previous checkpoint whole. It is
// Snapshot then Write.
func (e *Evolution) SaveCheckpoint(dir, meta string) error {
	snap, err := e.Snapshot(dir, meta)
	if err != nil {
		return err
	}
	return snap.Write()
}

// A Snapshot is a checkpoint taken but not yet written: Write puts it in
// its folder, and may run while the run goes on (Step does not change
// what a Snapshot holds), so that a generation's evaluation hides the
// files' writes and syncs. Snapshots of one run must be written in the
// order they were taken, one at a time, and each one taken must be
// written: the history file grows by what each adds.
type Snapshot struct {
	e       *Evolution
	dir     string
	tag     string
	state   []byte // state.json
	pop     *Population
	archive *Population
	hist    []byte // history lines to append, or the whole history (histAll)
	histAll bool
}

// Snapshot captures the run's state for a checkpoint in dir (see
// SaveCheckpoint), without writing anything.
func (e *Evolution) Snapshot(dir, meta string) (*Snapshot, error) {
	tag := fmt.Sprintf("%06d", e.gen)
	rng, err := e.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	st := checkpointJSON{
		Format: checkpointFormat, Generation: e.gen, Meta: meta, Config: e.cfg,
		Input: e.in, NumClasses: e.nc, RNG: rng,
		NextNode: e.inn.next, NextGenome: e.nextGenome, NextSpecies: e.nextSpecies, Threshold: e.threshold,
		Population: "population-" + tag + ".json",
		Known:      slices.Clone(e.known),
		ESState:    e.esState,
	}
	if len(e.esParent) > 0 {
		st.ESParents = make(map[string]int64, len(e.esParent))
		for id, p := range e.esParent {
			st.ESParents[strconv.FormatInt(id, 10)] = p
		}
	}
	for _, f := range e.fitness {
		st.Fitness = append(st.Fitness, fptr(f))
	}
	var archive []*Genome
	seen := map[int64]bool{}
	keep := func(g *Genome) {
		if !seen[g.ID] {
			seen[g.ID] = true
			archive = append(archive, g)
		}
	}
	for _, s := range e.species {
		st.Species = append(st.Species, speciesJSON{ID: s.id, Created: s.created, LastImproved: s.lastImproved, Best: fptr(s.best), Rep: s.rep.ID})
		keep(s.rep)
	}
	if e.best != nil {
		st.Best = &bestJSON{Genome: e.best.ID, Fitness: e.bestFit, Generation: e.bestGen}
		keep(e.best)
	}
	snap := &Snapshot{e: e, dir: dir, tag: tag, pop: &Population{Input: e.in, NumClasses: e.nc, Genomes: slices.Clone(e.pop)}}
	if len(archive) > 0 {
		st.Archive = "archive-" + tag + ".json"
		snap.archive = &Population{Input: e.in, NumClasses: e.nc, Genomes: archive}
	}
	if snap.hist, snap.histAll, err = e.historyToSave(dir); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	st.HistoryFile, st.HistoryLen = checkpointHist, len(e.history)
	if snap.state, err = json.MarshalIndent(&st, "", " "); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	snap.state = append(snap.state, '\n')
	return snap, nil
}

// Write writes the snapshot's files into its folder, state.json last (the
// commit point), and removes the files of other generations.
func (s *Snapshot) Write() error {
	err := s.write()
	if err != nil {
		s.e.histLost.Store(true) // the history file's end is unknown now
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func (s *Snapshot) write() error {
	dir, tag := s.dir, s.tag
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := Save(s.pop, filepath.Join(dir, "population-"+tag+".json"), "population-"+tag+".safetensors"); err != nil {
		return err
	}
	if s.archive != nil {
		if err := Save(s.archive, filepath.Join(dir, "archive-"+tag+".json"), "archive-"+tag+".safetensors"); err != nil {
			return err
		}
	}
	if err := writeHistory(filepath.Join(dir, checkpointHist), s.hist, s.histAll); err != nil {
		return err
	}
	err := writeAtomic(filepath.Join(dir, checkpointState), func(w *bufio.Writer) error {
		_, err := w.Write(s.state)
		return err
	})
	if err != nil {
		return err
	}
	// Files of other generations (older ones, or a newer one whose
	// state.json a killed process never wrote) are no longer needed.
	entries, _ := os.ReadDir(dir)
	for _, de := range entries {
		name := de.Name()
		if (strings.HasPrefix(name, "population-") || strings.HasPrefix(name, "archive-")) && !strings.Contains(name, "-"+tag+".") {
			os.Remove(filepath.Join(dir, name))
		}
	}
	return nil
}

// LoadCheckpoint reads the checkpoint in dir and returns the run, ready to
// Step the generation it was saved before, with the meta string it was
// saved with. Errors name the file at fault.
func LoadCheckpoint(dir string) (*Evolution, string, error) {
	path := filepath.Join(dir, checkpointState)
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	// Keys added since the format began keep their defaults, but for the
	// schedule: older checkpoints ran without one.
	st := checkpointJSON{Config: DefaultEvolveConfig()}
	st.Config.ESAnneal = 0
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	bad := func(format string, args ...any) (*Evolution, string, error) {
		return nil, "", fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if st.Format != checkpointFormat {
		return bad("format %q, want %q", st.Format, checkpointFormat)
	}
	if err := st.Config.Validate(); err != nil {
		return bad("config: %v", err)
	}
	e := &Evolution{cfg: st.Config, in: st.Input, nc: st.NumClasses, gen: st.Generation,
		nextGenome: st.NextGenome, nextSpecies: st.NextSpecies, threshold: st.Threshold, bestFit: math.Inf(-1)}
	e.inn.next = st.NextNode
	e.src = &rand.PCG{}
	if err := e.src.UnmarshalBinary(st.RNG); err != nil {
		return bad("rng: %v", err)
	}
	e.setup()

	pop, err := Load(filepath.Join(dir, st.Population))
	if err != nil {
		return nil, "", err
	}
	if pop.Input != e.in || pop.NumClasses != e.nc {
		return bad("population %s does not match the run's input and classes", st.Population)
	}
	if len(st.Fitness) != len(pop.Genomes) || len(st.Known) != len(pop.Genomes) {
		return bad("%d fitness values and %d known flags for %d genomes", len(st.Fitness), len(st.Known), len(pop.Genomes))
	}
	byID := map[int64]*Genome{}
	for i, g := range pop.Genomes {
		if _, err := Compile(g, e.in, e.nc); err != nil {
			return bad("population %s: %v", st.Population, err)
		}
		e.pop = append(e.pop, g)
		e.fitness = append(e.fitness, fval(st.Fitness[i], math.NaN()))
		e.known = append(e.known, st.Known[i])
		byID[g.ID] = g
	}
	e.esParent = make(map[int64]int64, len(st.ESParents))
	for k, p := range st.ESParents {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return bad("es_parents: genome id %q: %v", k, err)
		}
		e.esParent[id] = p
	}
	e.esState = st.ESState
	if e.esState == nil {
		e.esState = map[int64]*esState{}
	}
	for id, s := range e.esState {
		if s == nil || s.Sigma == nil {
			return bad("es_state: centre %d has no sigma", id)
		}
	}
	if st.Archive != "" {
		arch, err := Load(filepath.Join(dir, st.Archive))
		if err != nil {
			return nil, "", err
		}
		for _, g := range arch.Genomes {
			if _, err := Compile(g, e.in, e.nc); err != nil {
				return bad("archive %s: %v", st.Archive, err)
			}
			byID[g.ID] = g
		}
	}
	for _, s := range st.Species {
		rep := byID[s.Rep]
		if rep == nil {
			return bad("species %d: representative genome %d is in no file", s.ID, s.Rep)
		}
		e.species = append(e.species, &species{id: s.ID, created: s.Created, lastImproved: s.LastImproved,
			best: fval(s.Best, math.Inf(-1)), rep: rep})
	}
	if b := st.Best; b != nil {
		if e.best = byID[b.Genome]; e.best == nil {
			return bad("best genome %d is in no file", b.Genome)
		}
		e.bestFit, e.bestGen = b.Fitness, b.Generation
	}
	for _, h := range st.History {
		e.history = append(e.history, h.stats())
	}
	if st.HistoryFile != "" {
		if st.HistoryFile != checkpointHist {
			return bad("history_file %q, want %q", st.HistoryFile, checkpointHist)
		}
		if err := e.loadHistory(dir, st.HistoryLen); err != nil {
			return nil, "", err
		}
	}
	return e, st.Meta, nil
}
