package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Writer writes a results file (JSON Lines: every line one genome's
// result, with its "index" in the population and the "run" it belongs to)
// so that a crash or a kill loses at most the chunk in flight:
//
//   - result lines are appended as chunks finish, in any order, written and
//     fsync'd per Append;
//   - at the end, Finalize rewrites the file atomically (a temporary file,
//     fsync, rename) in population order.
//
// A file left by an interrupted run is picked up by Resume. A
// Writer is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	path    string
	header  Header
	run     string // runID(header)
	f       *os.File
	written []bool // by index
	buf     bytes.Buffer
}

// Create starts an empty results file at path for the run described
// by h, replacing any file there.
func Create(path string, h Header) (*Writer, error) {
	h.Version = FormatVersion
	if h.Genomes < 0 || h.Genomes > maxGenomes {
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
	w := &Writer{path: path, header: h, run: h.RunID(), f: f, written: make([]bool, h.Genomes)}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Resume reopens the results file of an interrupted run for h and
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
func Resume(path string, h Header) (*Writer, map[int]Result, error) {
	h.Version = FormatVersion
	if h.Genomes < 0 || h.Genomes > maxGenomes {
		return nil, nil, fmt.Errorf("results %s: header: %d genomes", path, h.Genomes)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w, err := Create(path, h)
		return w, map[int]Result{}, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	run, results, valid, err := parseResults(data, path)
	if err != nil {
		return nil, nil, &NotResumableError{Path: path, Err: err}
	}
	if run == "" {
		w, err := Create(path, h)
		return w, map[int]Result{}, err
	}
	want := h.RunID()
	if run != want {
		return nil, nil, &NotResumableError{Path: path, Err: &OtherRunError{Run: run, Want: want}}
	}
	for i := range results {
		if err := results[i].Check(h.Genomes); err != nil {
			return nil, nil, &NotResumableError{Path: path, Err: fmt.Errorf("%w: %w, though the file's run id is this run's", ErrDamaged, err)}
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	w := &Writer{path: path, header: h, run: want, f: f, written: make([]bool, h.Genomes)}
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
func (w *Writer) reopenAt(valid int64, addNewline bool) error {
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
func (w *Writer) Append(results []Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("results %s: append after Finalize or Close", w.path)
	}
	w.buf.Reset()
	seen := map[int]bool{}
	for i := range results {
		r := &results[i]
		if err := r.Check(w.header.Genomes); err != nil {
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
func (w *Writer) Finalize(all []Result) error {
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
		if err := r.Check(w.header.Genomes); err != nil {
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
// was appended stays, for Resume.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

func (w *Writer) writeSync(b []byte) error {
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
