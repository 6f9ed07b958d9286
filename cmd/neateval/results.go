package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// resultsVersion is the results file's format. Format 1 began with a
// header line; format 2 has none and writes the run id (runID) on every
// line instead. The version is hashed into that id, so a file of another
// format is never resumed as one of this format.
const resultsVersion = 2

// ResultsHeader says which run a results file belongs to, so that --resume
// refuses a file written for another population, dataset or fitness. It is
// not written out as a line: every line of the file is one genome's result,
// and each carries the header's hash as "run" (see runID).
type ResultsHeader struct {
	// Version is the results format; CreateResults and ResumeResults set
	// it to resultsVersion.
	Version int `json:"neateval_results"`
	// Population is "sha256:<hex>" of the population's files (see
	// populationFileDigest) or of a generated population's content.
	Population string `json:"population"`
	Genomes    int    `json:"genomes"`
	// Dataset names the validation set and its size: "mnist test 10000".
	Dataset string `json:"dataset"`
	Fitness string `json:"fitness"`
}

// Result is one genome's line in the results file. The line also carries
// "run", the id of the run that wrote it (runID), first.
//
// A genome that could not be scored has Error set and nil Fitness,
// Accuracy and Loss; Images is the number of images it saw (0 for an
// invalid genome). A scored genome has all three and a nil Error.
type Result struct {
	GenomeID int64    `json:"genome_id"`
	Index    int      `json:"index"` // position in the population, from 0
	Fitness  *float64 `json:"fitness"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   int      `json:"images"`
	Error    *string  `json:"error"`
	Params   int64    `json:"params"`  // parameters of the reachable nodes
	FLOPs    int64    `json:"flops"`   // per image: 2 × multiply-adds
	Seconds  float64  `json:"seconds"` // wall time of this genome's forwards
}

// runID is the "run" field of every line of h's results file:
// "sha256:" and, in hex, the first 16 bytes (32 hex digits) of the SHA-256
// of h with Version set to resultsVersion, as json.Marshal writes it (keys
// in field order, no spaces). 128 bits tell runs apart; the fields cannot
// be read back from the id, only compared through it.
func runID(h ResultsHeader) string {
	h.Version = resultsVersion
	b, _ := json.Marshal(h) // strings and ints only: cannot fail
	sum := sha256.Sum256(b)
	return runIDPrefix + hex.EncodeToString(sum[:runIDBytes])
}

// check says what is wrong with r, for a population of n genomes.
func (r *Result) check(n int) error {
	if r.Index < 0 || r.Index >= n {
		return fmt.Errorf("genome %d: index %d outside the population [0, %d)", r.GenomeID, r.Index, n)
	}
	metrics := []struct {
		name string
		v    *float64
	}{{"fitness", r.Fitness}, {"accuracy", r.Accuracy}, {"loss", r.Loss}}
	for _, m := range metrics {
		switch {
		case r.Error != nil && m.v != nil:
			return fmt.Errorf("genome %d: %s set on an error result", r.GenomeID, m.name)
		case r.Error == nil && m.v == nil:
			return fmt.Errorf("genome %d: %s missing on a result without error", r.GenomeID, m.name)
		case m.v != nil && (math.IsNaN(*m.v) || math.IsInf(*m.v, 0)):
			return fmt.Errorf("genome %d: %s is %v; a non-finite result must be an error result", r.GenomeID, m.name, *m.v)
		}
	}
	if r.Images < 0 {
		return fmt.Errorf("genome %d: images %d < 0", r.GenomeID, r.Images)
	}
	return nil
}

// ResultsWriter writes a results file (JSON Lines: every line one genome's
// result, with its "index" in the population and the "run" it belongs to)
// so that a crash or a kill loses at most the chunk in flight:
//
//   - result lines are appended as chunks finish, in any order, written and
//     fsync'd per Append;
//   - at the end, Finalize rewrites the file atomically (a temporary file,
//     fsync, rename) in population order.
//
// A file left by an interrupted run is picked up by ResumeResults. A
// ResultsWriter is safe for concurrent use.
type ResultsWriter struct {
	mu      sync.Mutex
	path    string
	header  ResultsHeader
	run     string // runID(header)
	f       *os.File
	written []bool // by index
	buf     bytes.Buffer
}

// CreateResults starts an empty results file at path for the run described
// by h, replacing any file there.
func CreateResults(path string, h ResultsHeader) (*ResultsWriter, error) {
	h.Version = resultsVersion
	if h.Genomes < 0 || h.Genomes > maxResultsGenomes {
		return nil, fmt.Errorf("results %s: header: %d genomes", path, h.Genomes)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	w := &ResultsWriter{path: path, header: h, run: runID(h), f: f, written: make([]bool, h.Genomes)}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// ResumeResults reopens the results file of an interrupted run for h and
// returns the results it already holds, by index.
//
// A file that does not exist, or holds no result and no run id (empty,
// blank, or a first line torn by a crash before its id was whole), is
// started afresh, with no results done. A torn last line is cut off; a
// whole last line whose newline is missing is kept and the newline
// written. A file whose lines carry another run id (written for another
// population, dataset, genome count or fitness), or no run id, or that is
// not a results file (one of an older format included), is refused and
// left as it is.
func ResumeResults(path string, h ResultsHeader) (*ResultsWriter, map[int]Result, error) {
	h.Version = resultsVersion
	if h.Genomes < 0 || h.Genomes > maxResultsGenomes {
		return nil, nil, fmt.Errorf("results %s: header: %d genomes", path, h.Genomes)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w, err := CreateResults(path, h)
		return w, map[int]Result{}, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	const advice = "choose another output.results (--results) or run without --resume to start over"
	run, results, valid, err := parseResults(data, path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w; refusing to resume it (the file is left as it is): %s", err, advice)
	}
	if run == "" {
		w, err := CreateResults(path, h)
		return w, map[int]Result{}, err
	}
	want := runID(h)
	if run != want {
		return nil, nil, &usageError{fmt.Sprintf("results %s was written for another population, data set or fitness "+
			"(run %s, this run %s); refusing to resume it (the file is left as it is): %s", path, run, want, advice)}
	}
	for i := range results {
		if err := results[i].check(h.Genomes); err != nil {
			return nil, nil, fmt.Errorf("results %s: %w, though the file's run id is this run's: it is damaged; %s", path, err, advice)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	w := &ResultsWriter{path: path, header: h, run: want, f: f, written: make([]bool, h.Genomes)}
	if err := w.reopenAt(valid, valid > 0 && data[valid-1] != '\n'); err != nil {
		f.Close()
		return nil, nil, err
	}
	done := make(map[int]Result, len(results))
	for _, r := range results {
		done[r.Index] = r
		w.written[r.Index] = true
	}
	return w, done, nil
}

// reopenAt cuts the file to its first valid bytes (a torn last line goes),
// ends the last line with a newline where it lacks one, and syncs: Append
// then writes after it.
func (w *ResultsWriter) reopenAt(valid int64, addNewline bool) error {
	if err := w.f.Truncate(valid); err != nil {
		return fmt.Errorf("results %s: cutting the torn last line: %w", w.path, err)
	}
	if _, err := w.f.Seek(valid, 0); err != nil {
		return fmt.Errorf("results %s: %w", w.path, err)
	}
	if addNewline {
		if _, err := w.f.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("results %s: ending the last line: %w", w.path, err)
		}
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("results %s: %w", w.path, err)
	}
	return nil
}

// Append writes results (of one chunk, say) and syncs them to disk before
// it returns. Each must be valid for the header's population and not
// written before.
func (w *ResultsWriter) Append(results []Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("results %s: append after Finalize or Close", w.path)
	}
	w.buf.Reset()
	seen := map[int]bool{}
	for i := range results {
		r := &results[i]
		if err := r.check(w.header.Genomes); err != nil {
			return fmt.Errorf("results %s: %w", w.path, err)
		}
		if w.written[r.Index] || seen[r.Index] {
			return fmt.Errorf("results %s: genome %d (index %d) written twice", w.path, r.GenomeID, r.Index)
		}
		seen[r.Index] = true
		if err := encodeLine(&w.buf, w.run, r); err != nil {
			return fmt.Errorf("results %s: genome %d: %w", w.path, r.GenomeID, err)
		}
	}
	if err := w.writeSync(w.buf.Bytes()); err != nil {
		return err
	}
	for i := range results {
		w.written[results[i].Index] = true
	}
	return nil
}

// Finalize rewrites the file with all results in population order
// (all[i].Index must be i, one per genome) atomically, and closes w.
// Every line keeps its "run" and "index".
func (w *ResultsWriter) Finalize(all []Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("results %s: Finalize after Finalize or Close", w.path)
	}
	if len(all) != w.header.Genomes {
		return fmt.Errorf("results %s: %d results for %d genomes", w.path, len(all), w.header.Genomes)
	}
	var buf bytes.Buffer
	for i := range all {
		r := &all[i]
		if r.Index != i {
			return fmt.Errorf("results %s: result %d (genome %d) has index %d", w.path, i, r.GenomeID, r.Index)
		}
		if err := r.check(w.header.Genomes); err != nil {
			return fmt.Errorf("results %s: %w", w.path, err)
		}
		if err := encodeLine(&buf, w.run, r); err != nil {
			return fmt.Errorf("results %s: genome %d: %w", w.path, r.GenomeID, err)
		}
	}
	if err := writeFileAtomic(w.path, buf.Bytes()); err != nil {
		return err
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("results %s: %w", w.path, err)
	}
	return nil
}

// Close closes the file without finalizing it (an interrupted run): what
// was appended stays, for --resume.
func (w *ResultsWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

func (w *ResultsWriter) writeSync(b []byte) error {
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("results %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("results %s: %w", w.path, err)
	}
	return nil
}

// lineOut is a result line as written: the run id first, so that even a
// line torn by a crash says which run it belongs to, then r's fields.
type lineOut struct {
	Run string `json:"run"`
	*Result
}

// encodeLine writes r as one JSON line of run, without HTML escaping so
// error messages stay readable.
func encodeLine(buf *bytes.Buffer, run string, r *Result) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(lineOut{Run: run, Result: r})
}

// writeFileAtomic replaces path by data: a temporary file in the same
// folder, synced, renamed over path, and the folder synced.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("results %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("results %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir makes a created or renamed entry in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return fmt.Errorf("results: sync %s: %w", dir, err)
	}
	return nil
}
