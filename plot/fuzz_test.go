package plot_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/neateval/neateval/plot"
)

func seed(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/3])
}

// The fuzz targets parse arbitrary input and draw what parses: neither
// may panic, and a parse error must be an *InputError.

func FuzzParseHistory(f *testing.F) {
	seed(f, "testdata/state.json")
	f.Add([]byte(`{"format":"neateval.evolution/v1","history":[{"generation":0,"best":1e308,"mean":-1e308,"species":9}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		gens, err := plot.ParseHistory(bytes.NewReader(data), "f")
		if err != nil {
			checkInputError(t, err)
			return
		}
		if len(gens) < 50 {
			plot.FitnessCurve(io.Discard, gens, "")
		}
	})
}

func FuzzParseResults(f *testing.F) {
	seed(f, "testdata/results.jsonl")
	f.Add([]byte(`{"genome_id":1,"accuracy":0,"params":1,"flops":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := plot.ParseResults(bytes.NewReader(data), "f")
		if err != nil {
			checkInputError(t, err)
			return
		}
		if len(rs) < 50 {
			plot.Results(io.Discard, rs, "")
		}
	})
}

func FuzzParseTimeline(f *testing.F) {
	seed(f, "testdata/run.log")
	f.Add([]byte(goodLine))
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := plot.ParseTimeline(bytes.NewReader(data), "f")
		if err != nil {
			checkInputError(t, err)
			return
		}
		if len(tl.Changes)+len(tl.Genomes) < 50 {
			plot.TimelinePlot(io.Discard, tl, "")
		}
	})
}

func checkInputError(t *testing.T, err error) {
	if _, ok := err.(*plot.InputError); !ok {
		t.Fatalf("error %T %v, want *plot.InputError", err, err)
	}
}

func FuzzParseHistoryLines(f *testing.F) {
	f.Add([]byte(`{"generation":0,"best":0.5,"mean":0.1,"species":1,"evaluated":4}`+"\n"+`{"generation":1,"best":null}`+"\n"), 2)
	f.Add([]byte(`{"generation":3}`+"\n"+`{"gen`), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		gens, err := plot.ParseHistoryLines(bytes.NewReader(data), "f", n%100)
		if err != nil {
			checkInputError(t, err)
			return
		}
		plot.FitnessCurve(io.Discard, gens, "")
	})
}
