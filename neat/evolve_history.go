package neat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

func (h GenStats) json() genStatsJSON {
	return genStatsJSON{
		Generation: h.Generation, Best: fptr(h.Best), Mean: fptr(h.Mean), BestGenome: h.BestGenome,
		BestParams: h.BestParams, BestFLOPs: h.BestFLOPs, BestNodes: h.BestNodes,
		Evaluated: h.Evaluated, Failed: h.Failed, Species: h.Species, Threshold: h.Threshold, ESSigma: fptr(h.ESSigma),
	}
}

func (h genStatsJSON) stats() GenStats {
	return GenStats{
		Generation: h.Generation, Best: fval(h.Best, math.NaN()), Mean: fval(h.Mean, math.NaN()),
		BestGenome: h.BestGenome, BestParams: h.BestParams, BestFLOPs: h.BestFLOPs, BestNodes: h.BestNodes,
		Evaluated: h.Evaluated, Failed: h.Failed, Species: h.Species, Threshold: h.Threshold, ESSigma: fval(h.ESSigma, math.NaN()),
	}
}

// historyLines writes hs as JSON lines to w.
func historyLines(w io.Writer, hs []GenStats) error {
	enc := json.NewEncoder(w)
	for _, h := range hs {
		if err := enc.Encode(h.json()); err != nil {
			return err
		}
	}
	return nil
}

// saveHistory brings dir's history file up to e.history and syncs it:
// the lines not yet in it are appended when it is the file this run last
// saved or loaded; otherwise (a new folder, or a run that never saved) it
// is written whole, atomically.
func (e *Evolution) saveHistory(dir string) error {
	path := filepath.Join(dir, checkpointHist)
	if e.histDir != dir || e.histSaved > len(e.history) {
		err := writeAtomic(path, func(w *bufio.Writer) error { return historyLines(w, e.history) })
		if err != nil {
			return err
		}
		e.histDir, e.histSaved = dir, len(e.history)
		return nil
	}
	if e.histSaved == len(e.history) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := historyLines(&buf, e.history[e.histSaved:]); err != nil {
		f.Close()
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// The file's end is unknown now: rewrite it whole next time.
		e.histDir = ""
		return err
	}
	e.histSaved = len(e.history)
	return nil
}

// loadHistory appends the first n lines of dir's history file to
// e.history and cuts the file after them: lines past n were appended by a
// process killed before it committed their generation.
func (e *Evolution) loadHistory(dir string, n int) error {
	path := filepath.Join(dir, checkpointHist)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	end := 0
	for i := range n {
		nl := bytes.IndexByte(data[end:], '\n')
		if nl < 0 {
			return fmt.Errorf("%s: %d lines, want %d", path, i, n)
		}
		var h genStatsJSON
		if err := json.Unmarshal(data[end:end+nl], &h); err != nil {
			return fmt.Errorf("%s: line %d: %w", path, i+1, err)
		}
		e.history = append(e.history, h.stats())
		end += nl + 1
	}
	if end < len(data) {
		if err := os.Truncate(path, int64(end)); err != nil {
			return err
		}
	}
	e.histDir, e.histSaved = dir, len(e.history)
	return nil
}
