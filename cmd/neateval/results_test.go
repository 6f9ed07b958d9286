package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f64(x float64) *float64 { return &x }
func str(s string) *string   { return &s }

var testHeader = ResultsHeader{Population: "sha256:abc", Genomes: 4, Dataset: "mnist test 10000", Fitness: "accuracy"}

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

func readAll(t *testing.T, path string) (ResultsHeader, []Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, rs, err := ReadResults(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return h, rs
}

func TestResultsCreateAppendFinalize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	w, err := CreateResults(path, testHeader)
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
	h, got := readAll(t, path)
	if h.Version != 1 || h.Population != testHeader.Population || h.Genomes != 4 {
		t.Errorf("header %+v", h)
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
	// The final file, byte for byte: header first, then population order;
	// null metrics on the error line; no HTML escaping.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != `{"neateval_results":1,"population":"sha256:abc","genomes":4,"dataset":"mnist test 10000","fitness":"accuracy"}` {
		t.Errorf("header line %s", lines[0])
	}
	if lines[3] != `{"genome_id":12,"index":2,"fitness":null,"accuracy":null,"loss":null,"images":0,"error":"genome 12, node 4: conv2d weight shape [8 1 3 3], want [8 2 3 3]","params":0,"flops":0,"seconds":0}` {
		t.Errorf("error line %s", lines[3])
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
	w, err := CreateResults(path, testHeader)
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
	w, err := CreateResults(path, testHeader)
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
	encodeLine(&torn, &rs[0])
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(torn.Bytes()[:torn.Len()/2])
	f.Close()
	sizeBefore := fileSize(t, path)

	w, done, err := ResumeResults(path, testHeader)
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
	w2, _ := CreateResults(clean, testHeader)
	w2.Append(rs)
	w2.Finalize(rs)
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(clean)
	if !bytes.Equal(a, b) {
		t.Errorf("resumed file differs from an uninterrupted one:\n%s\n%s", a, b)
	}
}

func TestResultsResumeStartsAfresh(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"missing.jsonl": "",
		"empty.jsonl":   "",
		"torn.jsonl":    `{"neateval_results":1,"popul`,
	} {
		path := filepath.Join(dir, name)
		if name != "missing.jsonl" {
			os.WriteFile(path, []byte(content), 0o644)
		}
		w, done, err := ResumeResults(path, testHeader)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(done) != 0 {
			t.Errorf("%s: %d done", name, len(done))
		}
		w.Close()
		h, rs := readAll(t, path)
		if h.Population != testHeader.Population || len(rs) != 0 {
			t.Errorf("%s: header %+v, %d results", name, h, len(rs))
		}
	}
}

func TestResultsResumeRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	w, _ := CreateResults(path, testHeader)
	w.Append(testResults()[:2])
	w.Close()
	other := func(f func(h *ResultsHeader)) ResultsHeader {
		h := testHeader
		f(&h)
		return h
	}
	tests := []struct {
		name string
		h    ResultsHeader
		want string
	}{
		{"population", other(func(h *ResultsHeader) { h.Population = "sha256:def" }),
			"was written for another run: population sha256:abc, this run has sha256:def; choose another output.results (--results) or run without --resume to start over"},
		{"genomes", other(func(h *ResultsHeader) { h.Genomes = 5 }), "genome count 4, this run has 5"},
		{"dataset", other(func(h *ResultsHeader) { h.Dataset = "mnist test 1000" }), `dataset "mnist test 10000", this run has "mnist test 1000"`},
		{"fitness", other(func(h *ResultsHeader) { h.Fitness = "neg_loss" }), `fitness "accuracy", this run has "neg_loss"`},
	}
	before, _ := os.ReadFile(path)
	for _, tt := range tests {
		_, _, err := ResumeResults(path, tt.h)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Files that are not results files are refused, and left alone.
	notResults := map[string]string{
		"notes.txt":  "my precious notes",
		"other.json": "{\"a\": 1}\n",
		"newer.json": "{\"neateval_results\":2,\"population\":\"x\",\"genomes\":1,\"dataset\":\"d\",\"fitness\":\"accuracy\"}\n",
		"broken.txt": "{\"neateval_results\":1,\"population\":\"sha256:abc\",\"genomes\":4,\"dataset\":\"mnist test 10000\",\"fitness\":\"accuracy\"}\nnot json\n",
	}
	for name, content := range notResults {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, _, err := ResumeResults(p, testHeader); err == nil {
			t.Errorf("%s: resumed", name)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("%s: changed to %q", name, got)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a refused resume changed the file")
	}
}

func TestReadResultsErrors(t *testing.T) {
	h := `{"neateval_results":1,"population":"p","genomes":2,"dataset":"d","fitness":"accuracy"}` + "\n"
	ok := `{"genome_id":1,"index":0,"fitness":0.5,"accuracy":0.5,"loss":1,"images":10,"error":null}` + "\n"
	tests := []struct{ name, data, want string }{
		{"no header", "", "results r: no header line"},
		{"not json", "hello\n", "results r: line 1: not a neateval results header"},
		{"newer format", `{"neateval_results":2}` + "\n", "results r: line 1: results format 2; this neateval reads format 1"},
		{"header lacks", `{"neateval_results":1,"population":"p"}` + "\n", `line 1: header lacks one of "population", "genomes", "dataset", "fitness"`},
		{"negative genomes", `{"neateval_results":1,"population":"p","genomes":-1,"dataset":"d","fitness":"f"}` + "\n", "line 1: header: genomes = -1 out of range"},
		{"bad line", h + ok + "{\n", "results r: line 3: not a result line"},
		{"no index", h + `{"genome_id":1,"images":0,"error":"x"}` + "\n", `line 2: result line lacks one of "genome_id", "index", "images"`},
		{"duplicate", h + ok + ok, "results r: line 3: genome 1: index 0 appears twice"},
		{"out of range", h + `{"genome_id":1,"index":2,"images":0,"error":"x"}` + "\n", "line 2: genome 1: index 2 outside the population [0, 2)"},
		{"error with loss", h + `{"genome_id":1,"index":1,"loss":1,"images":0,"error":"x"}` + "\n", "line 2: genome 1: loss set on an error result"},
	}
	for _, tt := range tests {
		_, _, err := ReadResults(strings.NewReader(tt.data), "r")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Blank lines and a torn last line are fine.
	_, rs, err := ReadResults(strings.NewReader(h+"\n"+ok+`{"genome_id":2,"ind`), "r")
	if err != nil || len(rs) != 1 {
		t.Errorf("blank and torn lines: %v, %d results", err, len(rs))
	}
}

func FuzzReadResults(f *testing.F) {
	var buf bytes.Buffer
	buf.Write(encodeHeader(testHeader))
	for _, r := range testResults() {
		encodeLine(&buf, &r)
	}
	full := buf.Bytes()
	f.Add(full)
	f.Add(full[:len(full)-7])
	f.Add([]byte(`{"neateval_results":1,"population":"p","genomes":3,"dataset":"d","fitness":"f"}` + "\n\n" + `{"genome_id":-1,"index":2,"images":0,"error":"e"}` + "\n"))
	f.Add([]byte(`{"neateval_results":1,"genomes":2147483647,"population":"","dataset":"","fitness":""}` + "\n"))
	f.Add([]byte("{\"neateval_results\":1}\n{}\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"neateval_results":1,"population":"p","genomes":1,"dataset":"d","fitness":"f"}` + "\n" + `{"genome_id":1,"index":0,"fitness":1e309,"images":0}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, rs, valid, err := parseResults(data, "fuzz")
		if valid < 0 || valid > int64(len(data)) || (valid > 0 && data[valid-1] != '\n') {
			t.Fatalf("valid length %d of %d bytes", valid, len(data))
		}
		if err != nil || valid == 0 {
			return
		}
		// What was read writes back to a file that reads the same.
		var out bytes.Buffer
		out.Write(encodeHeader(h))
		for i := range rs {
			if err := rs[i].check(h.Genomes); err != nil {
				t.Fatalf("accepted result fails check: %v", err)
			}
			if err := encodeLine(&out, &rs[i]); err != nil {
				t.Fatalf("accepted result does not encode: %v", err)
			}
		}
		h2, rs2, _, err := parseResults(out.Bytes(), "again")
		if err != nil || h2 != h || len(rs2) != len(rs) {
			t.Fatalf("round trip: %v, %+v vs %+v, %d vs %d", err, h2, h, len(rs2), len(rs))
		}
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
