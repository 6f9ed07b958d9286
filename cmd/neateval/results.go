package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// resultsVersion is the value of "neateval_results" in the header line.
const resultsVersion = 1

// ResultsHeader is the first line of a results file. It says which run the
// results belong to, so that --resume refuses a file written for another
// population, dataset or fitness.
type ResultsHeader struct {
	Version int `json:"neateval_results"`
	// Population is "sha256:<hex>" of the population's files (see
	// populationFileDigest) or of a generated population's content.
	Population string `json:"population"`
	Genomes    int    `json:"genomes"`
	// Dataset names the validation set and its size: "mnist test 10000".
	Dataset string `json:"dataset"`
	Fitness string `json:"fitness"`
}

// Result is one genome's line in the results file.
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

// ResultsWriter writes a results file (JSON Lines) so that a crash or a
// kill loses at most the chunk in flight:
//
//   - the header line first, then result lines appended as chunks finish,
//     in any order (each names its "index"), written and fsync'd per Append;
//   - at the end, Finalize rewrites the file atomically (a temporary file,
//     fsync, rename) in population order.
//
// A file left by an interrupted run is picked up by ResumeResults. A
// ResultsWriter is safe for concurrent use.
type ResultsWriter struct {
	mu      sync.Mutex
	path    string
	header  ResultsHeader
	f       *os.File
	written []bool // by index
	buf     bytes.Buffer
}

// CreateResults starts a results file at path for the run described by h,
// replacing any file there.
func CreateResults(path string, h ResultsHeader) (*ResultsWriter, error) {
	h.Version = resultsVersion
	if h.Genomes < 0 {
		return nil, fmt.Errorf("results %s: header: %d genomes", path, h.Genomes)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	w := &ResultsWriter{path: path, header: h, f: f, written: make([]bool, h.Genomes)}
	if err := w.writeSync(encodeHeader(h)); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// ResumeResults reopens the results file of an interrupted run for h and
// returns the results it already holds, by index. A file that does not
// exist, is empty, or whose header line was torn by a crash is started
// afresh (with no results done). A torn last result line is cut off. A file
// written for another population, dataset, genome count or fitness is
// refused, as is one that is not a results file.
func ResumeResults(path string, h ResultsHeader) (*ResultsWriter, map[int]Result, error) {
	h.Version = resultsVersion
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w, err := CreateResults(path, h)
		return w, map[int]Result{}, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	got, results, valid, err := parseResults(data, path)
	if err != nil {
		return nil, nil, err
	}
	if valid == 0 { // nothing whole, not even the header
		if !tornHeader(data) {
			return nil, nil, fmt.Errorf("results %s: not a neateval results file (it does not start with {\"neateval_results\":); refusing to overwrite it", path)
		}
		w, err := CreateResults(path, h)
		return w, map[int]Result{}, err
	}
	if err := matchHeader(path, got, h); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	if valid < int64(len(data)) {
		if err := f.Truncate(valid); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("results %s: cutting the torn last line: %w", path, err)
		}
	}
	if _, err := f.Seek(valid, 0); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("results %s: %w", path, err)
	}
	w := &ResultsWriter{path: path, header: h, f: f, written: make([]bool, h.Genomes)}
	done := make(map[int]Result, len(results))
	for _, r := range results {
		done[r.Index] = r
		w.written[r.Index] = true
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("results %s: %w", path, err)
	}
	return w, done, nil
}

// matchHeader refuses to resume a file written for another run.
func matchHeader(path string, got, want ResultsHeader) error {
	diff := func(what, g, w string) error {
		return fmt.Errorf("results %s was written for another run: %s %s, this run has %s; "+
			"choose another output.results (--results) or run without --resume to start over", path, what, g, w)
	}
	switch {
	case got.Population != want.Population:
		return diff("population", got.Population, want.Population)
	case got.Genomes != want.Genomes:
		return diff("genome count", fmt.Sprint(got.Genomes), fmt.Sprint(want.Genomes))
	case got.Dataset != want.Dataset:
		return diff("dataset", fmt.Sprintf("%q", got.Dataset), fmt.Sprintf("%q", want.Dataset))
	case got.Fitness != want.Fitness:
		return diff("fitness", fmt.Sprintf("%q", got.Fitness), fmt.Sprintf("%q", want.Fitness))
	}
	return nil
}

// Path is the results file's path.
func (w *ResultsWriter) Path() string { return w.path }

// Header is the header the file was written with.
func (w *ResultsWriter) Header() ResultsHeader { return w.header }

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
		if err := encodeLine(&w.buf, r); err != nil {
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
	buf.Write(encodeHeader(w.header))
	for i := range all {
		r := &all[i]
		if r.Index != i {
			return fmt.Errorf("results %s: result %d (genome %d) has index %d", w.path, i, r.GenomeID, r.Index)
		}
		if err := r.check(w.header.Genomes); err != nil {
			return fmt.Errorf("results %s: %w", w.path, err)
		}
		if err := encodeLine(&buf, r); err != nil {
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

func encodeHeader(h ResultsHeader) []byte {
	b, _ := json.Marshal(h) // strings and ints only: cannot fail
	return append(b, '\n')
}

// encodeLine writes r as one JSON line, without HTML escaping so error
// messages stay readable.
func encodeLine(buf *bytes.Buffer, r *Result) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
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
