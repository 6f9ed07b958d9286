package plot

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// checkpointFormat is the "format" of an evolve checkpoint's state.json
// (package neat).
const checkpointFormat = "neateval.evolution/v1"

// A Generation is one generation of an evolution run as its checkpoint's
// history records it.
type Generation struct {
	Gen        int
	Best, Mean float64 // fitness; NaN where no genome of the generation was scored
	Species    int
	BestParams int64
	BestFLOPs  int64 // per image
	Evaluated  int
	Failed     int
}

// genJSON is one generation of a checkpoint's history, as state.json
// (inline, older checkpoints) or history.jsonl (one per line) has it.
type genJSON struct {
	Generation *int     `json:"generation"`
	Best       *float64 `json:"best"` // null: none scored
	Mean       *float64 `json:"mean"`
	BestParams int64    `json:"best_params"`
	BestFLOPs  int64    `json:"best_flops"`
	Evaluated  int      `json:"evaluated"`
	Failed     int      `json:"failed"`
	Species    int      `json:"species"`
}

// historyJSON is the part of state.json that ReadHistory reads: the
// history inline, or the file beside it that holds it and how many of
// that file's lines are the run's (later ones belong to a generation a
// killed process never committed).
type historyJSON struct {
	Format      string    `json:"format"`
	History     []genJSON `json:"history"`
	HistoryFile string    `json:"history_file"`
	HistoryLen  int       `json:"history_len"`
}

// ReadHistory reads the history of an evolution run from its checkpoint:
// path is the checkpoint folder or the state.json in it (and the
// history.jsonl beside it that state.json names).
func ReadHistory(path string) ([]Generation, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "state.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st, err := parseState(data, path)
	if err != nil || st.HistoryFile == "" {
		return generations(st.History, path, err)
	}
	if filepath.Base(st.HistoryFile) != st.HistoryFile {
		return nil, &InputError{File: path, Err: fmt.Errorf("history_file %q is not a file name", st.HistoryFile)}
	}
	hp := filepath.Join(filepath.Dir(path), st.HistoryFile)
	f, err := os.Open(hp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseHistoryLines(f, hp, st.HistoryLen)
}

// ParseHistory reads the history from a checkpoint's state.json in r
// that holds it inline (checkpoints before history.jsonl); name names it
// in errors. The generations must be numbered upwards.
func ParseHistory(r io.Reader, name string) ([]Generation, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{File: name, Err: err}
	}
	st, err := parseState(data, name)
	if err == nil && st.HistoryFile != "" {
		err = &InputError{File: name, Err: fmt.Errorf("the history is in %s, not inline", st.HistoryFile)}
	}
	return generations(st.History, name, err)
}

// ParseHistoryLines reads the first n generations of a checkpoint's
// history.jsonl in r (one JSON object a line); name names it in errors.
func ParseHistoryLines(r io.Reader, name string, n int) ([]Generation, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	hs := make([]genJSON, 0, min(max(n, 0), 1<<16))
	for len(hs) < n && sc.Scan() {
		var h genJSON
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			return nil, &InputError{File: name, Err: fmt.Errorf("line %d: %w", len(hs)+1, err)}
		}
		hs = append(hs, h)
	}
	if err := sc.Err(); err != nil {
		return nil, &InputError{File: name, Err: err}
	}
	if len(hs) < n {
		return nil, &InputError{File: name, Err: fmt.Errorf("%d lines, want %d", len(hs), n)}
	}
	return generations(hs, name, nil)
}

func parseState(data []byte, name string) (*historyJSON, error) {
	var st historyJSON
	if err := decodeJSON(data, name, &st); err != nil {
		return &st, err
	}
	if st.Format != checkpointFormat {
		return &st, &InputError{File: name, Err: fmt.Errorf("format %q, want %q (an evolve checkpoint's state.json)", st.Format, checkpointFormat)}
	}
	return &st, nil
}

// generations checks and converts hs (read from name), unless err.
func generations(hs []genJSON, name string, err error) ([]Generation, error) {
	if err != nil {
		return nil, err
	}
	gens := make([]Generation, 0, len(hs))
	for i, h := range hs {
		bad := func(format string, a ...any) error {
			return &InputError{File: name, Err: fmt.Errorf("history[%d]: "+format, append([]any{i}, a...)...)}
		}
		switch {
		case h.Generation == nil:
			return nil, bad("no \"generation\"")
		case i > 0 && *h.Generation <= gens[i-1].Gen:
			return nil, bad("generation %d after %d", *h.Generation, gens[i-1].Gen)
		case h.Species < 0 || h.Evaluated < 0 || h.Failed < 0 || h.BestParams < 0 || h.BestFLOPs < 0:
			return nil, bad("a negative count")
		}
		gens = append(gens, Generation{
			Gen: *h.Generation, Best: orNaN(h.Best), Mean: orNaN(h.Mean), Species: h.Species,
			BestParams: h.BestParams, BestFLOPs: h.BestFLOPs, Evaluated: h.Evaluated, Failed: h.Failed,
		})
	}
	if len(gens) == 0 {
		return nil, &InputError{File: name, Err: errors.New("no generations in its history")}
	}
	return gens, nil
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
