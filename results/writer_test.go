package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f64(x float64) *float64 { return &x }
func str(s string) *string   { return &s }

var testHeader = Header{Population: "sha256:abc", Genomes: 4, Dataset: "mnist test 10000", Fitness: "accuracy"}

// testRun is runID(testHeader), worked out apart from Go: the first 16
// bytes of the SHA-256 of
// {"neateval_results":2,"population":"sha256:abc","genomes":4,"dataset":"mnist test 10000","fitness":"accuracy"}.
const testRun = "sha256:68d9a7c61010b4d4cfba249e0b090f79"

// testResults are the results of testHeader's population, in order; genome
// 2 is invalid.
func testResults() []Result {
	return []Result{
		{GenomeID: 10, Index: 0, Fitness: f64(0.5), Accuracy: f64(0.5), Loss: f64(1.25), Images: 10000, Params: 100, FLOPs: 2000, Seconds: 0.5},
		{GenomeID: 11, Index: 1, Fitness: f64(0.75), Accuracy: f64(0.75), Loss: f64(0.5), Images: 10000},
		{GenomeID: 12, Index: 2, Images: 0, Error: str("genome 12, node 4: conv2d weight shape [8 1 3 3], want [8 2 3 3]")},
		{GenomeID: 13, Index: 3, Fitness: f64(0.125), Accuracy: f64(0.125), Loss: f64(2.5), Images: 10000},
	}
}

func readAll(t *testing.T, path string) (Header, []Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, rs, err := Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return h, rs
}

func TestResultsCreateAppendFinalize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	w, err := Create(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	rs := testResults()
	// Chunks finish out of order.
	if err := w.Append([]Result{rs[2], rs[3]}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]Result{rs[0]}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte(`{"run":"`+testRun+`","genome_id":12,"index":2,`)) {
		t.Errorf("first line of the file: %.80s", data)
	}
	h, got := readAll(t, path)
	if h != (Header{Version: FormatVersion}) {
		t.Errorf("header %+v, want only the version", h)
	}
	if len(got) != 3 || got[0].Index != 2 || got[2].Index != 0 {
		t.Errorf("appended results %+v", got)
	}
	if err := w.Append([]Result{rs[1]}); err != nil {
		t.Fatal(err)
	}
	if err := w.Finalize(rs); err != nil {
		t.Fatal(err)
	}
	_, got = readAll(t, path)
	if len(got) != 4 {
		t.Fatalf("%d results after Finalize", len(got))
	}
	for i := range got {
		a, _ := json.Marshal(got[i])
		b, _ := json.Marshal(rs[i])
		if !bytes.Equal(a, b) {
			t.Errorf("line %d: %s, want %s", i, a, b)
		}
	}
	// The final file, byte for byte: population order, the run on every
	// line; null metrics on the error line; no HTML escaping.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want one per genome:\n%s", len(lines), data)
	}
	if lines[2] != `{"run":"`+testRun+`","genome_id":12,"index":2,"fitness":null,"accuracy":null,"loss":null,"images":0,"error":"genome 12, node 4: conv2d weight shape [8 1 3 3], want [8 2 3 3]","params":0,"flops":0,"seconds":0}` {
		t.Errorf("error line %s", lines[2])
	}
	// What a tracker sees: every line one genome, with the spec's fields.
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, k := range []string{"genome_id", "fitness", "accuracy", "loss", "images", "error", "index", "run"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %q: %s", i+1, k, line)
			}
		}
		if m["genome_id"] != float64(rs[i].GenomeID) || m["index"] != float64(i) || m["run"] != testRun {
			t.Errorf("line %d: %s", i+1, line)
		}
	}
	if err := w.Append(rs[:1]); err == nil {
		t.Error("Append after Finalize accepted")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestResultsAppendRefusesBadResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rs := testResults()
	nan := rs[0]
	nan.Loss = f64(math.NaN())
	errWithFit := rs[2]
	errWithFit.Fitness = f64(0)
	noFit := rs[1]
	noFit.Fitness = nil
	out := rs[0]
	out.Index = 4
	tests := []struct {
		name string
		in   []Result
		want string
	}{
		{"non-finite", []Result{nan}, "genome 10: loss is NaN; a non-finite result must be an error result"},
		{"error with fitness", []Result{errWithFit}, "genome 12: fitness set on an error result"},
		{"missing fitness", []Result{noFit}, "genome 11: fitness missing on a result without error"},
		{"index out of range", []Result{out}, "genome 10: index 4 outside the population [0, 4)"},
		{"twice in one append", []Result{rs[0], rs[0]}, "genome 10 (index 0) written twice"},
	}
	for _, tt := range tests {
		if err := w.Append(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if err := w.Append(rs[:1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(rs[:1]); err == nil || !strings.Contains(err.Error(), "written twice") {
		t.Errorf("second append of the same genome: %v", err)
	}
	_, got := readAll(t, path)
	if len(got) != 1 {
		t.Errorf("refused appends wrote something: %d results", len(got))
	}
	shuffled := testResults()
	shuffled[0], shuffled[1] = shuffled[1], shuffled[0]
	if err := w.Finalize(shuffled); err == nil || !strings.Contains(err.Error(), "result 0 (genome 11) has index 1") {
		t.Errorf("Finalize out of order: %v", err)
	}
	if err := w.Finalize(testResults()[:3]); err == nil || !strings.Contains(err.Error(), "3 results for 4 genomes") {
		t.Errorf("Finalize short: %v", err)
	}
}

func TestResultsResumeAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	rs := testResults()
	if err := w.Append([]Result{rs[3], rs[1]}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A crash in the middle of the next chunk's write leaves a torn line.
	var torn bytes.Buffer
	encodeLine(&torn, testRun, &rs[0])
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(torn.Bytes()[:torn.Len()/2])
	f.Close()
	sizeBefore := fileSize(t, path)

	w, done, err := Resume(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 || *done[3].Fitness != 0.125 || *done[1].Loss != 0.5 {
		t.Fatalf("done = %+v", done)
	}
	if fileSize(t, path) >= sizeBefore {
		t.Error("torn line not cut off")
	}
	if err := w.Append([]Result{rs[1]}); err == nil {
		t.Error("resumed writer accepted a genome already done")
	}
	if err := w.Append([]Result{rs[0], rs[2]}); err != nil {
		t.Fatal(err)
	}
	_, got := readAll(t, path)
	if len(got) != 4 {
		t.Fatalf("%d results after resume", len(got))
	}
	if err := w.Finalize(rs); err != nil {
		t.Fatal(err)
	}
	// The same file as a run that was never interrupted.
	clean := filepath.Join(t.TempDir(), "clean.jsonl")
	w2, _ := Create(clean, testHeader)
	w2.Append(rs)
	w2.Finalize(rs)
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(clean)
	if !bytes.Equal(a, b) {
		t.Errorf("resumed file differs from an uninterrupted one:\n%s\n%s", a, b)
	}
}

func TestResultsResumeKeepsAnUnterminatedWholeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	rs := testResults()
	var buf bytes.Buffer
	encodeLine(&buf, testRun, &rs[1])
	encodeLine(&buf, testRun, &rs[0])
	os.WriteFile(path, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), 0o644)
	w, done, err := Resume(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 || done[0].GenomeID != 10 {
		t.Fatalf("done = %+v", done)
	}
	if err := w.Append(rs[2:]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, got := readAll(t, path); len(got) != 4 {
		t.Errorf("%d results, want 4", len(got))
	}
}

func TestResultsResumeStartsAfresh(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"missing.jsonl":  "",
		"empty.jsonl":    "",
		"blank.jsonl":    "\n \n",
		"torn.jsonl":     `{"ru`,
		"torn-id.jsonl":  `{"run":"sha256:68d9a7c6101`,
		"torn-own.jsonl": `{"run":"` + testRun + `","genome_id":1`,
	} {
		path := filepath.Join(dir, name)
		if name != "missing.jsonl" {
			os.WriteFile(path, []byte(content), 0o644)
		}
		w, done, err := Resume(path, testHeader)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(done) != 0 {
			t.Errorf("%s: %d done", name, len(done))
		}
		if err := w.Append(testResults()[1:2]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w.Close()
		if _, rs := readAll(t, path); len(rs) != 1 || rs[0].Index != 1 {
			t.Errorf("%s: %+v", name, rs)
		}
	}
}

func TestResultsResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	w, _ := Create(path, testHeader)
	w.Append(testResults()[:2])
	w.Close()
	other := func(f func(h *Header)) Header {
		h := testHeader
		f(&h)
		return h
	}
	tests := []struct {
		name string
		h    Header
	}{
		{"population", other(func(h *Header) { h.Population = "sha256:def" })},
		{"genomes", other(func(h *Header) { h.Genomes = 5 })},
		{"dataset", other(func(h *Header) { h.Dataset = "mnist test 1000" })},
		{"fitness", other(func(h *Header) { h.Fitness = "neg_loss" })},
	}
	before, _ := os.ReadFile(path)
	for _, tt := range tests {
		want := "results " + path + " was written for another population, data set or fitness (run " + testRun +
			", this run " + tt.h.RunID() + "); refusing to resume it (the file is left as it is)"
		_, _, err := Resume(path, tt.h)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, want)
		}
		if !errors.Is(err, ErrOtherRun) {
			t.Errorf("%s: %v is not ErrOtherRun", tt.name, err)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a refused resume changed the file")
	}
	// Files that are not results files of this run are refused, and left
	// alone.
	var line bytes.Buffer
	encodeLine(&line, testRun, &testResults()[0])
	otherRun := strings.Replace(line.String(), testRun, tests[0].h.RunID(), 1)
	notResults := []struct{ name, content, want string }{
		{"notes.txt", "my precious notes", "line 1: not a result line: invalid character 'm'"},
		{"notes-line.txt", "my precious notes\n", "line 1: not a result line: invalid character 'm'"},
		{"other.json", "{\"a\": 1}\n", `line 1: not a result line of a neateval results file: no "run"`},
		{"format1.jsonl", `{"neateval_results":1,"population":"sha256:abc","genomes":4,"dataset":"mnist test 10000","fitness":"accuracy"}` + "\n",
			"line 1: a header line of an older results format"},
		{"broken.jsonl", line.String() + "not json\n", "line 2: not a result line"},
		{"no-run.jsonl", `{"genome_id":10,"index":0,"images":0,"error":"x"}` + "\n", `line 1: not a result line of a neateval results file: no "run"`},
		{"bad-run.jsonl", `{"run":"sha256:ab","genome_id":10,"index":0,"images":0,"error":"x"}` + "\n", `line 1: "run" is "sha256:ab"; want "sha256:" and 32 hex digits`},
		{"mixed.jsonl", line.String() + strings.Replace(otherRun, `"index":0`, `"index":1`, 1), "line 2: run sha256:"},
		{"torn-other.jsonl", otherRun[:60], "written for another population, data set or fitness"},
		{"out-of-range.jsonl", strings.Replace(line.String(), `"index":0`, `"index":4`, 1),
			"genome 10: index 4 outside the population [0, 4), though the file's run id is this run's"},
	}
	for _, tt := range notResults {
		p := filepath.Join(dir, tt.name)
		os.WriteFile(p, []byte(tt.content), 0o644)
		_, _, err := Resume(p, testHeader)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q and the path", tt.name, err, tt.want)
		}
		if got, _ := os.ReadFile(p); string(got) != tt.content {
			t.Errorf("%s: changed to %q", tt.name, got)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
