package plot

import (
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

// historyJSON is the part of state.json that ReadHistory reads.
type historyJSON struct {
	Format  string `json:"format"`
	History []struct {
		Generation *int     `json:"generation"`
		Best       *float64 `json:"best"` // null: none scored
		Mean       *float64 `json:"mean"`
		BestParams int64    `json:"best_params"`
		BestFLOPs  int64    `json:"best_flops"`
		Evaluated  int      `json:"evaluated"`
		Failed     int      `json:"failed"`
		Species    int      `json:"species"`
	} `json:"history"`
}

// ReadHistory reads the history of an evolution run from its checkpoint:
// path is the checkpoint folder or the state.json in it.
func ReadHistory(path string) ([]Generation, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "state.json")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseHistory(f, path)
}

// ParseHistory reads the history from a checkpoint's state.json in r;
// name names it in errors. The generations must be numbered upwards.
func ParseHistory(r io.Reader, name string) ([]Generation, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{File: name, Err: err}
	}
	var st historyJSON
	if err := decodeJSON(data, name, &st); err != nil {
		return nil, err
	}
	if st.Format != checkpointFormat {
		return nil, &InputError{File: name, Err: fmt.Errorf("format %q, want %q (an evolve checkpoint's state.json)", st.Format, checkpointFormat)}
	}
	gens := make([]Generation, 0, len(st.History))
	for i, h := range st.History {
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
