package plot_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/plot"
)

// The files in testdata are real: state.json is the checkpoint of an
// 80-generation `neateval evolve` on MNIST, results.jsonl its last
// population scored on the MNIST test set, run.log the first lines of a
// `neateval run --log-format json --log-level debug` on a 48 MiB device.

func TestReadHistory(t *testing.T) {
	gens, err := plot.ReadHistory("testdata") // a folder: its state.json
	if err != nil {
		t.Fatal(err)
	}
	if len(gens) != 80 || gens[0].Gen != 0 || gens[79].Gen != 79 {
		t.Fatalf("%d generations, want 80 numbered 0 … 79", len(gens))
	}
	if g := gens[0]; g.Best != 0.222 || g.Species != 1 || g.Evaluated != 40 || g.BestParams != 500 {
		t.Errorf("generation 0: %+v", g)
	}
}

func TestReadResults(t *testing.T) {
	rs, err := plot.ReadResults("testdata/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 40 || rs[0].Params <= 0 || rs[0].FLOPs <= 0 || !(rs[0].Accuracy > 0) {
		t.Fatalf("%d results, first %+v", len(rs), rs[0])
	}
}

func TestReadTimeline(t *testing.T) {
	tl, err := plot.ReadTimeline("testdata/run.log")
	if err != nil {
		t.Fatal(err)
	}
	if tl.DeviceBytes != 48<<20 || tl.PeakPredicted != 1289147392 || tl.Mode != "cpu_staged" || tl.ConfigBatch != 45000 {
		t.Errorf("device %d, plan %d %q, batch %d", tl.DeviceBytes, tl.PeakPredicted, tl.Mode, tl.ConfigBatch)
	}
	c := tl.Changes[0]
	if c.Event != "batch_shrink" || !c.OOM() || c.Old != 10000 || c.New != 113 || c.Requested != 777632768 || c.Free != 16777216 {
		t.Errorf("first change %+v", c)
	}
	if len(tl.Genomes) == 0 || tl.Genomes[0].Batch != 46 {
		t.Errorf("genomes %+v, want the first to end at batch 46", tl.Genomes)
	}
	if tl.End <= c.T {
		t.Errorf("End %g before the first change at %g", tl.End, c.T)
	}
}

const goodLine = `{"level":"info","event":"batch_grow","genome":0,"old_batch":37,"new_batch":43,"bytes_requested":3371121,"bytes_free":18939392,"reason":"probe","time":"2026-12-02T02:53:18.204Z"}`

func TestParseErrors(t *testing.T) {
	hist := func(s string) error { _, err := plot.ParseHistory(strings.NewReader(s), "state.json"); return err }
	res := func(s string) error { _, err := plot.ParseResults(strings.NewReader(s), "r.jsonl"); return err }
	tl := func(s string) error { _, err := plot.ParseTimeline(strings.NewReader(s), "run.log"); return err }
	for _, c := range []struct {
		name  string
		parse func(string) error
		in    string
		want  string
	}{
		{"history: not JSON", hist, "{\n\"format\": \"neateval.evolution/v1\",\n\"history\": [}", "state.json:3: "},
		{"history: wrong type", hist, "{\"format\": \"neateval.evolution/v1\",\n\"history\": [{\"generation\": \"0\"}]}", "state.json:2: "},
		{"history: wrong format", hist, `{"format": "x", "history": []}`, `state.json: format "x"`},
		{"history: empty", hist, `{"format": "neateval.evolution/v1", "history": []}`, "no generations"},
		{"history: order", hist, `{"format": "neateval.evolution/v1", "history": [{"generation": 1}, {"generation": 1}]}`, "history[1]: generation 1 after 1"},
		{"history: no number", hist, `{"format": "neateval.evolution/v1", "history": [{"best": 1}]}`, `history[0]: no "generation"`},
		{"results: not an object", res, "{\"genome_id\": 1, \"accuracy\": 0.5}\n[1]", "r.jsonl:2: not a JSON object"},
		{"results: no id", res, "\n\n{\"accuracy\": 0.5}", `r.jsonl:3: no "genome_id"`},
		{"results: bad accuracy", res, `{"genome_id": 4, "accuracy": 1.5}`, "r.jsonl:1: genome 4: accuracy 1.5 outside [0, 1]"},
		{"results: neither", res, `{"genome_id": 4, "error": null}`, `genome 4: no "accuracy" and no "error"`},
		{"results: empty", res, "\n", "r.jsonl: no results"},
		{"log: console format", tl, "3:04AM INF neateval run", "run.log:1: not a JSON object"},
		{"log: no time", tl, goodLine + "\n" + `{"event":"plan"}`, `run.log:2: a log line without "time" or "event"`},
		{"log: bad time", tl, `{"event":"plan","time":"yesterday"}`, `run.log:1: "time": `},
		{"log: no batch", tl, `{"event":"batch_shrink","time":"2026-12-02T02:53:18.204Z","new_batch":3}`, `run.log:1: batch_shrink without "old_batch"`},
		{"log: negative", tl, `{"event":"batch_shrink","time":"2026-12-02T02:53:18.204Z","old_batch":3,"new_batch":-1}`, "run.log:1: batch_shrink: a negative size"},
		{"log: empty", tl, "", "run.log: no log lines"},
	} {
		err := c.parse(c.in)
		var ie *plot.InputError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an *InputError containing %q", c.name, err, c.want)
		}
	}
}

func TestParseTolerates(t *testing.T) {
	// The CLI's one-line error report after a failed run's log, blank
	// lines and events plot does not know.
	in := goodLine + "\n\n" + `{"event":"something_new","time":"2026-12-02T02:53:19.204Z","x":[1,2]}` + "\nneateval: run failed: disk full\n"
	tl, err := plot.ParseTimeline(strings.NewReader(in), "run.log")
	if err != nil || len(tl.Changes) != 1 || tl.End != 1 {
		t.Fatalf("%v, %+v", err, tl)
	}
	rs, err := plot.ParseResults(strings.NewReader(`{"genome_id": 3, "accuracy": null, "error": "out of memory"}`), "r")
	if err != nil || rs[0].Err != "out of memory" || !math.IsNaN(rs[0].Accuracy) {
		t.Fatalf("%v, %+v", err, rs)
	}
}

// TestReadHistoryLines: a checkpoint of today's neat package keeps its
// history in history.jsonl; ReadHistory reads the lines state.json counts
// and ignores a torn tail a killed process appended.
func TestReadHistoryLines(t *testing.T) {
	cfg := neat.DefaultEvolveConfig()
	cfg.PopulationSize = 8
	e, err := neat.NewEvolution(neat.Input{Channels: 1, Height: 8, Width: 8}, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for range 5 {
		_, err := e.Step(context.Background(), func(_ context.Context, p *neat.Population) ([]float64, error) {
			fs := make([]float64, len(p.Genomes))
			for i, g := range p.Genomes {
				fs[i] = float64(g.ID % 7)
			}
			return fs, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SaveCheckpoint(dir, ""); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "history.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"generation":5,"best":1}` + "\n" + `{"gener`)
	f.Close()
	gens, err := plot.ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(gens) != 5 || gens[4].Gen != 4 || gens[4].Evaluated == 0 {
		t.Fatalf("%d generations %+v, want 5 numbered 0 … 4", len(gens), gens)
	}
	_, err = plot.ParseHistoryLines(strings.NewReader(`{"generation":0}`+"\n"), "h.jsonl", 2)
	if err == nil || err.Error() != "h.jsonl: 1 lines, want 2" {
		t.Errorf("short file: %v", err)
	}
	_, err = plot.ParseHistory(strings.NewReader(`{"format":"neateval.evolution/v1","history_file":"history.jsonl","history_len":1}`), "state.json")
	if err == nil || !strings.Contains(err.Error(), "not inline") {
		t.Errorf("state.json without its history: %v", err)
	}
}
