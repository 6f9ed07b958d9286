package results

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunID(t *testing.T) {
	if got := testHeader.RunID(); got != testRun {
		t.Errorf("testHeader.RunID() = %s, want %s", got, testRun)
	}
	v := testHeader
	v.Version = 7 // RunID hashes FormatVersion, whatever the caller set
	if got := v.RunID(); got != testRun {
		t.Errorf("RunID ignores Version: %s", got)
	}
	// Every field of the header changes the id.
	ids := map[string]string{testRun: "testHeader"}
	for name, h := range map[string]Header{
		"population": {Population: "sha256:abd", Genomes: 4, Dataset: "mnist test 10000", Fitness: "accuracy"},
		"genomes":    {Population: "sha256:abc", Genomes: 5, Dataset: "mnist test 10000", Fitness: "accuracy"},
		"dataset":    {Population: "sha256:abc", Genomes: 4, Dataset: "mnist test 1000", Fitness: "accuracy"},
		"fitness":    {Population: "sha256:abc", Genomes: 4, Dataset: "mnist test 10000", Fitness: "neg_loss"},
		// Field boundaries are kept: moving text between fields is another run.
		"boundary": {Population: "sha256:abc", Genomes: 4, Dataset: "mnist test 10000accuracy", Fitness: ""},
	} {
		id := h.RunID()
		if len(id) != runIDLen || !runIDPrefixOf(id) {
			t.Errorf("%s: id %q is not of the form", name, id)
		}
		if prev, ok := ids[id]; ok {
			t.Errorf("%s: same id as %s", name, prev)
		}
		ids[id] = name
	}
}

func TestReadErrors(t *testing.T) {
	ok := `{"run":"` + testRun + `","genome_id":1,"index":0,"fitness":0.5,"accuracy":0.5,"loss":1,"images":10,"error":null}` + "\n"
	line := func(rest string) string { return `{"run":"` + testRun + `",` + rest + "\n" }
	tests := []struct{ name, data, want string }{
		{"not json", "hello\n", "results r: line 1: not a result line: invalid character 'h'"},
		{"format 1", `{"neateval_results":1,"population":"p","genomes":1,"dataset":"d","fitness":"f"}` + "\n", "results r: line 1: a header line of an older results format"},
		{"no run", `{"genome_id":1,"index":0,"images":0,"error":"x"}` + "\n", `results r: line 1: not a result line of a neateval results file: no "run"`},
		{"run not a string", `{"run":1,"genome_id":1,"index":0,"images":0,"error":"x"}` + "\n", "results r: line 1: not a result line: json: cannot unmarshal number"},
		{"upper-case hex", `{"run":"` + strings.ToUpper(testRun) + `","genome_id":1,"index":0,"images":0,"error":"x"}` + "\n", `line 1: "run" is "SHA256:68D9`},
		{"bad line", ok + "{\n", "results r: line 2: not a result line"},
		{"no index", line(`"genome_id":1,"images":0,"error":"x"}`), `line 1: result line lacks one of "genome_id", "index", "images"`},
		{"duplicate", ok + "\n" + ok, "results r: line 3: genome 1: index 0 appears twice"},
		{"negative index", line(`"genome_id":1,"index":-1,"images":0,"error":"x"}`), "line 1: genome 1: index -1 outside the population [0, 2147483647)"},
		{"error with loss", line(`"genome_id":1,"index":1,"loss":1,"images":0,"error":"x"}`), "line 1: genome 1: loss set on an error result"},
		{"two runs", ok + strings.Replace(strings.Replace(ok, "68d9", "0000", 1), `"index":0`, `"index":1`, 1),
			"results r: line 2: run sha256:0000a7c61010b4d4cfba249e0b090f79, but the lines before it have run " + testRun + ": the file mixes two runs"},
		{"torn line of another run", ok + `{"run":"sha256:0000`, "results r: line 2: not a result line: unexpected end of JSON input"},
		{"garbage without newline", ok + `hello`, "results r: line 2: not a result line: invalid character 'h'"},
	}
	for _, tt := range tests {
		_, _, err := Read(strings.NewReader(tt.data), "r")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestReadReadsEveryLine(t *testing.T) {
	var buf bytes.Buffer
	for _, r := range testResults() {
		encodeLine(&buf, testRun, &r)
	}
	full := buf.String()
	tests := []struct {
		name, data string
		n          int
	}{
		{"empty", "", 0},
		{"whole", full, 4},
		{"blank lines", "\n" + strings.ReplaceAll(full, "}\n", "}\n\n"), 4},
		{"no newline at the end", strings.TrimSuffix(full, "\n"), 4},
		{"torn last line", full[:len(full)-9], 3},
		{"torn in the run id", full + `{"run":"sha256:68d9a7c6`, 4},
		{"torn first line", `{"run":"sha256:68d9a7c61010b4d4cfba249e0b090f79","genome_id":1`, 0},
	}
	for _, tt := range tests {
		h, rs, err := Read(strings.NewReader(tt.data), "r")
		if err != nil || len(rs) != tt.n || h.Version != FormatVersion {
			t.Errorf("%s: %v, %d results, header %+v; want %d", tt.name, err, len(rs), h, tt.n)
			continue
		}
		for i := range rs {
			if rs[i].Index != i {
				t.Errorf("%s: result %d has index %d", tt.name, i, rs[i].Index)
			}
		}
	}
}

func TestTornLine(t *testing.T) {
	var buf bytes.Buffer
	encodeLine(&buf, testRun, &testResults()[0])
	whole := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	for n := 0; n < len(whole); n++ {
		for _, run := range []string{"", testRun} {
			id, torn := tornLine(whole[:n], run)
			if !torn {
				t.Fatalf("run %q: prefix of %d bytes not torn: %s", run, n, whole[:n])
			}
			if n >= len(lineStart)+runIDLen && id != testRun || run == "" && n < len(lineStart)+runIDLen && id != "" {
				t.Fatalf("run %q: prefix of %d bytes: id %q", run, n, id)
			}
		}
	}
	for _, tail := range []string{
		string(whole),         // whole: not torn
		`{"genome_id":1`,      // no run first
		`{"run":"sha257`,      // not a run id
		`{"run":"sha256:68D9`, // upper case
		`{"run":"sha256:0000a7c61010b4d4cfba249e0b090f79","genome`, // another run than testRun
		`{"run":"` + testRun + `","index":0`,                       // not what encodeLine writes
		` {"run"`,
	} {
		run := ""
		if strings.Contains(tail, "0000a7") {
			run = testRun
		}
		if _, torn := tornLine([]byte(tail), run); torn {
			t.Errorf("%q (run %q) taken for a torn line", tail, run)
		}
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	for _, r := range testResults() {
		encodeLine(&buf, testRun, &r)
	}
	full := buf.Bytes()
	f.Add(full)
	f.Add(full[:len(full)-7])
	f.Add(full[:len(full)-1])
	f.Add(full[:30])
	f.Add([]byte("\n" + `{"run":"` + testRun + `","genome_id":-1,"index":2,"images":0,"error":"e"}` + "\n\n"))
	f.Add([]byte(`{"run":"` + testRun + `","genome_id":1,"index":2147483646,"images":0,"error":""}`))
	f.Add([]byte(`{"run":"` + testRun + `","genome_id":1,"index":0,"fitness":1e309,"images":0}` + "\n"))
	f.Add([]byte(`{"neateval_results":1,"population":"p","genomes":1,"dataset":"d","fitness":"f"}` + "\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, rs, valid, err := parseResults(data, "fuzz")
		if valid < 0 || valid > int64(len(data)) || (valid > 0 && valid < int64(len(data)) && data[valid-1] != '\n') {
			t.Fatalf("valid length %d of %d bytes", valid, len(data))
		}
		if err != nil {
			return
		}
		if run != "" && (len(run) != runIDLen || !runIDPrefixOf(run)) || run == "" && len(rs) > 0 {
			t.Fatalf("run %q with %d results", run, len(rs))
		}
		// What was read writes back to a file that reads the same.
		var out bytes.Buffer
		for i := range rs {
			if err := rs[i].Check(maxGenomes); err != nil {
				t.Fatalf("accepted result fails check: %v", err)
			}
			if err := encodeLine(&out, run, &rs[i]); err != nil {
				t.Fatalf("accepted result does not encode: %v", err)
			}
		}
		run2, rs2, valid2, err := parseResults(out.Bytes(), "again")
		if err != nil || len(rs2) != len(rs) || valid2 != int64(out.Len()) || len(rs) > 0 && run2 != run {
			t.Fatalf("round trip: %v, run %q vs %q, %d vs %d results", err, run2, run, len(rs2), len(rs))
		}
		for i := range rs {
			var a, b bytes.Buffer
			encodeLine(&a, run, &rs[i])
			encodeLine(&b, run2, &rs2[i])
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("round trip: %s vs %s", a.Bytes(), b.Bytes())
			}
		}
	})
}
