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
		Evaluated: h.Evaluated, Failed: h.Failed, Species: h.Species, Threshold: h.Threshold, ESSigma: fptr(h.ESSigma), ESRate: fptr(h.ESRate),
	}
}

func (h genStatsJSON) stats() GenStats {
	return GenStats{
		Generation: h.Generation, Best: fval(h.Best, math.NaN()), Mean: fval(h.Mean, math.NaN()),
		BestGenome: h.BestGenome, BestParams: h.BestParams, BestFLOPs: h.BestFLOPs, BestNodes: h.BestNodes,
		Evaluated: h.Evaluated, Failed: h.Failed, Species: h.Species, Threshold: h.Threshold, ESSigma: fval(h.ESSigma, math.NaN()),
		ESRate: fval(h.ESRate, math.NaN()),
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

// historyToSave is what a checkpoint in dir writes of the history: the
// lines not yet in dir's history file, when it is the file this run last
// saved to or loaded from and no write of it failed since; otherwise
// (another folder, a run that never saved, a failed write) the whole
// history, written atomically (all).
func (e *Evolution) historyToSave(dir string) (lines []byte, all bool, err error) {
	from := e.histSaved
	if e.histLost.Swap(false) || e.histDir != dir {
		from, all = 0, true
	}
	var buf bytes.Buffer
	if err := historyLines(&buf, e.history[from:]); err != nil {
		return nil, false, err
	}
	e.histDir, e.histSaved = dir, len(e.history)
	return buf.Bytes(), all, nil
}

// writeHistory appends lines to the history file at path and syncs it,
// or replaces the file with them (all).
func writeHistory(path string, lines []byte, all bool) error {
	if all {
		return writeAtomic(path, func(w *bufio.Writer) error {
			_, err := w.Write(lines)
			return err
		})
	}
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(lines)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
