package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/serve"
)

func TestHealth(t *testing.T) {
	ts := httptest.NewServer(newServer(t, serve.Options{Token: "t0ken"}).Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/health") // no token: health never needs one
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("health: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestStatus(t *testing.T) {
	ts := httptest.NewServer(newServer(t, serve.Options{Queue: 3}).Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st serve.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || st.Backend != "cpu" || st.DType != "float32" || st.Dataset.Images != 300 ||
		!strings.HasPrefix(st.Dataset.Name, "synthetic") ||
		st.Queue != (serve.StatusQueue{Length: 0, Capacity: 3}) || st.Running != nil || st.Memory.TotalBytes <= 0 ||
		st.Fitness != "accuracy" || st.Version == "" {
		t.Errorf("status %d: %+v", resp.StatusCode, st)
	}
}

// TestResultsEqualRun: every line the service streams is the line
// `neateval run` writes for the same files, limit and fitness, seconds
// aside, run id included; the summary counts them.
func TestResultsEqualRun(t *testing.T) {
	dir := t.TempDir()
	path := population(t, dir, 6, 3)
	ts := httptest.NewServer(newServer(t, serve.Options{}).Handler())
	defer ts.Close()
	for _, fitness := range []string{"accuracy", "neg_loss"} {
		want := runLines(t, path, 120, fitness)
		js, st := files(t, path)
		resp, err := http.DefaultClient.Do(uploadRequest(t, context.Background(), ts.URL, "?limit=120&fitness="+fitness, js, st))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" || resp.Header.Get("X-Neateval-Genomes") != "6" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
		got := readStream(t, resp.Body)
		resp.Body.Close()
		if len(got.lines) != len(want) {
			t.Fatalf("%s: %d lines, want %d", fitness, len(got.lines), len(want))
		}
		for _, l := range got.lines {
			i := int(l["index"].(float64))
			delete(l, "seconds")
			if g, w := jsonOf(l), jsonOf(want[i]); g != w {
				t.Errorf("%s: line %d\n got %s\nwant %s", fitness, i, g, w)
			}
			if l["run"] != resp.Header.Get("X-Neateval-Run") {
				t.Errorf("run %v, header %q", l["run"], resp.Header.Get("X-Neateval-Run"))
			}
		}
		sum, _ := got.last["summary"].(map[string]any)
		if sum == nil || sum["genomes"] != 6.0 || sum["images"] != 720.0 {
			t.Errorf("%s: last line %v", fitness, got.last)
		}
	}
}

// runLines runs `neateval run` (run.Run) on the population and returns its
// results file's lines without "seconds", by index.
func runLines(t *testing.T, popPath string, limit int, fitness string) []map[string]any {
	t.Helper()
	cfg := testConfig(t)
	cfg.Population.Path = popPath
	cfg.Dataset.Limit = limit
	cfg.Eval.Fitness = fitness
	cfg.Output.Results = filepath.Join(t.TempDir(), "r.jsonl")
	if _, err := run.Run(context.Background(), run.Spec{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(cfg.Output.Results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "seconds")
		out = append(out, m)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMalformedGenomeIsALine: a genome the evaluator cannot compile is a
// result line with its error, not a 400; the others are scored.
func TestMalformedGenomeIsALine(t *testing.T) {
	path := population(t, t.TempDir(), 3, 5)
	js, st := files(t, path)
	// Genome 0's output names a node it does not have.
	var doc map[string]any
	json.Unmarshal(js, &doc)
	doc["genomes"].([]any)[0].(map[string]any)["output"] = 9999
	js, _ = json.Marshal(doc)
	ts := httptest.NewServer(newServer(t, serve.Options{}).Handler())
	defer ts.Close()
	resp, err := http.DefaultClient.Do(uploadRequest(t, context.Background(), ts.URL, "?limit=20", js, st))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := readStream(t, resp.Body)
	var errs int
	for _, l := range got.lines {
		if e, ok := l["error"].(string); ok {
			errs++
			if !strings.Contains(e, "genome") || l["fitness"] != nil {
				t.Errorf("error line %v", l)
			}
		}
	}
	if resp.StatusCode != 200 || len(got.lines) != 3 || errs != 1 || got.last["summary"].(map[string]any)["failed"] != 1.0 {
		t.Errorf("%d: %d lines, %d errors, last %v", resp.StatusCode, len(got.lines), errs, got.last)
	}
}

func TestMetrics(t *testing.T) {
	ts := httptest.NewServer(newServer(t, serve.Options{Queue: 2}).Handler())
	defer ts.Close()
	js, st := files(t, population(t, t.TempDir(), 2, 1))
	resp, err := http.DefaultClient.Do(uploadRequest(t, context.Background(), ts.URL, "?limit=10", js, st))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`neateval_genomes_total{outcome="scored"} 2`, `neateval_images_genomes_total 20`,
		`neateval_evaluations_total{outcome="ok"} 1`, `neateval_http_requests_total{code="200",path="/v1/evaluate"} 1`,
		`neateval_queue_capacity 2`, `neateval_queue_length 0`, `neateval_running 0`, `neateval_batch_shrinks_total 0`,
		`neateval_batch_grows_total`, `neateval_ooms_total 0`, `neateval_images_genomes_per_second`,
		`neateval_evaluation_seconds_count 1`, `neateval_device_memory_bytes{kind="total"}`,
		`neateval_http_request_duration_seconds_count{path="/v1/evaluate"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
