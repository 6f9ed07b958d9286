package serve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/serve"
)

// TestFrontsACluster: with a cluster's coordinator as its scorer (what
// `neateval serve --workers 2` does: an in-process NATS broker and two
// workers), the service answers with the lines `neateval run` writes.
func TestFrontsACluster(t *testing.T) {
	cfg := testConfig(t)
	cfg.Cluster.Workers = 2
	nop := zerolog.Nop()
	s, err := serve.New(cfg, serve.Options{NewScorer: func(ds *datasets.Dataset) (evaluator.Scorer, error) {
		return cluster.Open(cfg, ds, &nop)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	path := population(t, t.TempDir(), 6, 3)
	want := runLines(t, path, 120, "accuracy")
	js, st := files(t, path)
	resp, err := http.DefaultClient.Do(uploadRequest(t, context.Background(), ts.URL, "?limit=120", js, st))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := readStream(t, resp.Body)
	if resp.StatusCode != 200 || len(got.lines) != len(want) {
		t.Fatalf("status %d, %d lines, want %d", resp.StatusCode, len(got.lines), len(want))
	}
	for _, l := range got.lines {
		i := int(l["index"].(float64))
		delete(l, "seconds")
		if g, w := jsonOf(l), jsonOf(want[i]); g != w {
			t.Errorf("line %d\n got %s\nwant %s", i, g, w)
		}
	}
}
