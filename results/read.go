package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The run id's form (Header.RunID): runIDPrefix, then 2·runIDBytes hex digits.
const (
	runIDPrefix = "sha256:"
	runIDBytes  = 16
	runIDLen    = len(runIDPrefix) + 2*runIDBytes
)

// maxGenomes bounds a population's genome count, and so a result's
// index.
const maxGenomes = 1<<31 - 1

// lineStart is how every line of a results file starts: encodeLine writes
// "run" first and "genome_id" next.
const lineStart = `{"run":"`

// oldHeaderStart is how the header line of results format 1 started.
const oldHeaderStart = `{"neateval_results":`

// Read reads a whole results file: its results in file order
// (population order once the run has finished). Every line is a result and
// every one is read; blank lines hold nothing. A last line whose newline is
// missing is read when it is whole and ignored when a crash tore it (it is
// then a strict prefix of a result line). The lines must all carry the same
// "run". name is used in messages.
//
// The file carries its run only as a hash (runID), from which the
// population, dataset, genome count and fitness cannot be read back: the
// header returned has only Version set. Resume is what checks that a file
// belongs to a run.
func Read(r io.Reader, name string) (Header, []Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Header{}, nil, fmt.Errorf("results %s: %w", name, err)
	}
	_, rs, _, err := parseResults(data, name)
	if err != nil {
		return Header{}, nil, err
	}
	return Header{Version: FormatVersion}, rs, nil
}

// resultLine is a result line as read: pointers tell absent from zero.
type resultLine struct {
	Run      *string  `json:"run"`
	GenomeID *int64   `json:"genome_id"`
	Index    *int     `json:"index"`
	Fitness  *float64 `json:"fitness"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   *int     `json:"images"`
	Error    *string  `json:"error"`
	Params   int64    `json:"params"`
	FLOPs    int64    `json:"flops"`
	Seconds  float64  `json:"seconds"`
}

// parseResults reads data as a results file. Each line ended by a newline
// is one result (blank lines are skipped), checked: a well-formed "run",
// the same on every line; metrics consistent with "error"; an index not
// repeated (its upper bound, the genome count, is not in the file: the
// caller checks it). What follows the last newline is either a whole
// result line whose newline is missing, read like the others, or a line
// torn by a crash (a strict prefix of a line of the same run), not read.
//
// run is the lines' run id; "" when there is none: no result, and no torn
// line holding a whole id. valid is the length of what was read: data
// without its torn last line.
func parseResults(data []byte, name string) (run string, results []Result, valid int64, err error) {
	seen := map[int]bool{}
	for start, lineNo := 0, 1; start < len(data); lineNo++ {
		line, next := data[start:], len(data)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], start+i+1
		} else if id, torn := tornLine(line, run); torn {
			if run == "" {
				run = id
			}
			return run, results, int64(start), nil
		}
		start = next
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, lineRun, err := parseResultLine(line)
		if err != nil {
			return run, nil, int64(start), &LineError{File: name, Line: lineNo, Err: err}
		}
		if run == "" {
			run = lineRun
		} else if lineRun != run {
			return run, nil, int64(start), &LineError{File: name, Line: lineNo, Err: fmt.Errorf("run %s, but the lines before it have run %s: the file mixes two runs", lineRun, run)}
		}
		if seen[r.Index] {
			return run, nil, int64(start), &LineError{File: name, Line: lineNo, Err: fmt.Errorf("genome %d: index %d appears twice", r.GenomeID, r.Index)}
		}
		seen[r.Index] = true
		results = append(results, r)
	}
	return run, results, int64(len(data)), nil
}

// tornLine reports whether tail, a last line without its newline, is what
// a crash left of a result line of run (of any run when run is ""): a
// strict prefix of one, so not valid JSON. id is the run id tail holds, ""
// when it was torn before its id ended.
func tornLine(tail []byte, run string) (id string, torn bool) {
	if json.Valid(tail) {
		return "", false
	}
	if run != "" {
		want := lineStart + run + `","genome_id":`
		n := min(len(tail), len(want))
		return run, bytes.Equal(tail[:n], []byte(want[:n]))
	}
	n := min(len(tail), len(lineStart))
	if !bytes.Equal(tail[:n], []byte(lineStart[:n])) {
		return "", false
	}
	rest := tail[n:]
	n = min(len(rest), runIDLen)
	if !runIDPrefixOf(string(rest[:n])) {
		return "", false
	}
	if n < runIDLen {
		return "", true
	}
	id, rest = string(rest[:n]), rest[n:]
	after := `","genome_id":`
	n = min(len(rest), len(after))
	return id, bytes.Equal(rest[:n], []byte(after[:n]))
}

// runIDPrefixOf reports whether s is a prefix of a string of runID's form
// (the whole of one included).
func runIDPrefixOf(s string) bool {
	if len(s) > runIDLen {
		return false
	}
	n := min(len(s), len(runIDPrefix))
	if s[:n] != runIDPrefix[:n] {
		return false
	}
	for _, c := range []byte(s[n:]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseResultLine reads one whole line: a result and the run it names.
func parseResultLine(line []byte) (Result, string, error) {
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte(oldHeaderStart)) {
		return Result{}, "", fmt.Errorf("a header line of an older results format (%s...); this neateval writes no header line but the run on every result line, and cannot read or resume that file", oldHeaderStart)
	}
	var raw resultLine
	if err := json.Unmarshal(line, &raw); err != nil {
		return Result{}, "", fmt.Errorf("not a result line: %w", err)
	}
	switch {
	case raw.Run == nil:
		return Result{}, "", fmt.Errorf("not a result line of a neateval results file: no \"run\"")
	case len(*raw.Run) != runIDLen || !runIDPrefixOf(*raw.Run):
		return Result{}, "", fmt.Errorf("\"run\" is %q; want %q and %d hex digits", *raw.Run, runIDPrefix, 2*runIDBytes)
	case raw.GenomeID == nil || raw.Index == nil || raw.Images == nil:
		return Result{}, "", fmt.Errorf("result line lacks one of \"genome_id\", \"index\", \"images\"")
	}
	r := Result{
		GenomeID: *raw.GenomeID, Index: *raw.Index,
		Fitness: raw.Fitness, Accuracy: raw.Accuracy, Loss: raw.Loss,
		Images: *raw.Images, Error: raw.Error,
		Params: raw.Params, FLOPs: raw.FLOPs, Seconds: raw.Seconds,
	}
	if err := r.Check(maxGenomes); err != nil {
		return Result{}, "", err
	}
	return r, *raw.Run, nil
}
