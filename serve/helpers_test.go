package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/serve"
)

// testConfig is a small configuration: 300 synthetic MNIST-shaped images
// on the CPU backend, with a modest arena.
func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dataset.Kind = "synthetic"
	cfg.Dataset.SyntheticSize = 300
	cfg.Eval.Backend = "cpu"
	cfg.Eval.Threads = 1
	cfg.VRAM.MemoryBytes = 256 << 20
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newServer makes a server of testConfig with opts, closed at the end.
func newServer(t testing.TB, opts serve.Options) *serve.Server {
	t.Helper()
	s, err := serve.New(testConfig(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// population is a generated population of n genomes written to dir as
// pop.json and pop.safetensors; it returns the JSON file's path.
func population(t testing.TB, dir string, n int, seed int64) string {
	t.Helper()
	pop := neat.Generate(seed, n, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	path := filepath.Join(dir, "pop.json")
	if err := neat.Save(pop, path, "pop.safetensors"); err != nil {
		t.Fatal(err)
	}
	return path
}

// files reads a population's two files.
func files(t testing.TB, jsonPath string) (js, st []byte) {
	t.Helper()
	js, err := os.ReadFile(jsonPath)
	if err == nil {
		st, err = os.ReadFile(strings.TrimSuffix(jsonPath, ".json") + ".safetensors")
	}
	if err != nil {
		t.Fatal(err)
	}
	return js, st
}

// part is one part of a multipart body.
type part struct{ name, file, content string }

// multipartBody encodes parts as multipart/form-data.
func multipartBody(t testing.TB, parts ...part) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.file != "" {
			w, err = mw.CreateFormFile(p.name, p.file)
		} else {
			w, err = mw.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.content)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// uploadRequest is a POST /v1/evaluate of the population's files.
func uploadRequest(t testing.TB, ctx context.Context, base, query string, js, st []byte) *http.Request {
	t.Helper()
	body, ct := multipartBody(t, part{"population", "pop.json", string(js)}, part{"weights", "pop.safetensors", string(st)})
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/evaluate"+query, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	return req
}

// stream is a decoded 200 response: the result lines and the last line.
type stream struct {
	lines []map[string]any
	last  map[string]any
}

// readStream reads an NDJSON evaluation stream to its end.
func readStream(t testing.TB, r io.Reader) stream {
	t.Helper()
	var s stream
	dec := json.NewDecoder(r)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if _, ok := m["genome_id"]; ok {
			s.lines = append(s.lines, m)
		} else {
			s.last = m
		}
	}
	return s
}

// errorOf decodes a refusal's {"error": ...} body.
func errorOf(t testing.TB, resp *http.Response) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("status %d: body is not {\"error\": ...}: %v", resp.StatusCode, err)
	}
	return e.Error
}

// gate holds each evaluation before it starts until released (or its
// context ends), so that tests can fill the queue: a real evaluator
// behind a door, not a stand-in for one.
type gate struct {
	mu       sync.Mutex
	started  chan struct{} // one value per evaluation that reached the gate
	release  chan struct{}
	canceled chan struct{} // one value per evaluation cancelled at the gate
}

func newGate() *gate {
	return &gate{started: make(chan struct{}, 16), release: make(chan struct{}, 16), canceled: make(chan struct{}, 16)}
}

// scorer wraps the default evaluator of ds (built by mk) behind the gate.
func (g *gate) options(cfg *config.Config, o serve.Options) serve.Options {
	o.NewScorer = func(ds *datasets.Dataset) (evaluator.Scorer, error) {
		b, err := cfg.OpenBackend(nil)
		if err != nil {
			return nil, err
		}
		e, err := evaluator.New(b, ds, cfg.StagingConfig(), cfg.EvaluatorOptions(nil))
		if err != nil {
			return nil, err
		}
		return &gated{g: g, e: e, b: b}, nil
	}
	return o
}

type gated struct {
	g *gate
	e *evaluator.Evaluator
	b evaluator.Backend
}

func (s *gated) Evaluate(ctx context.Context, pop *neat.Population, onChunk func([]evaluator.Result) error) ([]evaluator.Result, error) {
	s.g.started <- struct{}{}
	select {
	case <-s.g.release:
	case <-ctx.Done():
		s.g.canceled <- struct{}{}
		return nil, ctx.Err()
	}
	return s.e.Evaluate(ctx, pop, onChunk)
}

func (s *gated) Close() {
	s.e.Close()
	s.b.Close()
}

// newGatedServer is a server of testConfig whose evaluations wait at g.
func newGatedServer(t testing.TB, g *gate, opts serve.Options) *serve.Server {
	t.Helper()
	cfg := testConfig(t)
	s, err := serve.New(cfg, g.options(cfg, opts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
