package serve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/serve"
)

// TestRefusals: each refusal of the contract with its status and the
// message `neateval run` gives for the same input.
func TestRefusals(t *testing.T) {
	path := population(t, t.TempDir(), 2, 7)
	js, st := files(t, path)
	dupJS := bytes.Replace(js, []byte(`"id": 1,`), []byte(`"id": 0,`), 1)
	ts := httptest.NewServer(newServer(t, serve.Options{MaxBody: 1 << 20}).Handler())
	defer ts.Close()
	upload := func(parts ...part) func() (io.Reader, string) {
		return func() (io.Reader, string) { return multipartBody(t, parts...) }
	}
	pj, pw := part{"population", "pop.json", string(js)}, part{"weights", "pop.safetensors", string(st)}
	tests := []struct {
		name, method, path, ctype string
		body                      func() (io.Reader, string)
		status                    int
		msg                       string
	}{
		{"unknown path", "GET", "/v2/x", "", nil, 404, `no such path "/v2/x"`},
		{"method", "GET", "/v1/evaluate", "", nil, 405, "method GET, want POST"},
		{"content type", "POST", "/v1/evaluate", "text/plain", nil, 415, `content type "text/plain", want multipart/form-data or application/json`},
		{"no content type", "POST", "/v1/evaluate", "", nil, 415, `content type "", want multipart/form-data or application/json`},
		{"missing weights", "POST", "/v1/evaluate", "", upload(pj), 400, `missing part "weights"`},
		{"twice", "POST", "/v1/evaluate", "", upload(pj, pj, pw), 400, `part "population" given twice`},
		{"unknown part", "POST", "/v1/evaluate", "", upload(pj, pw, part{"extra", "", "x"}), 400, `unknown part "extra"`},
		{"bad limit", "POST", "/v1/evaluate?limit=x", "", upload(pj, pw), 400, `limit "x": want an integer ≥ 0`},
		{"negative limit", "POST", "/v1/evaluate", "", upload(pj, pw, part{"limit", "", "-1"}), 400, `limit "-1": want an integer ≥ 0`},
		{"empty limit", "POST", "/v1/evaluate?limit=", "", upload(pj, pw), 400, `limit "": want an integer ≥ 0`},
		{"empty fitness field", "POST", "/v1/evaluate", "", upload(pj, pw, part{"fitness", "", ""}), 400, `fitness "": want "accuracy" or "neg_loss"`},
		{"bad fitness", "POST", "/v1/evaluate?fitness=f1", "", upload(pj, pw), 400, `fitness "f1": want "accuracy" or "neg_loss"`},
		{"option conflict", "POST", "/v1/evaluate?limit=5", "", upload(pj, pw, part{"limit", "", "6"}), 400, `limit given twice with different values ("6" and "5")`},
		{"unknown query", "POST", "/v1/evaluate?limti=5", "", upload(pj, pw), 400, `unknown query parameter "limti"`},
		{"format", "POST", "/v1/evaluate", "", upload(part{"population", "pop.json", `{"format": "x"}`}, pw), 400, `pop.json: format "x", want "neateval.population/v1"`},
		{"duplicate genome", "POST", "/v1/evaluate", "", upload(part{"population", "pop.json", string(dupJS)}, pw), 400, `pop.json: genome #1`},
		{"weights cut", "POST", "/v1/evaluate", "", upload(pj, part{"weights", "w.safetensors", string(st[:20])}), 400, `w.safetensors: `},
		{"part without file name", "POST", "/v1/evaluate", "", upload(pj, part{"weights", "", string(st[:20])}), 400, `weights: `},
		{"too large", "POST", "/v1/evaluate", "", upload(pj, pw, part{"fitness", "", strings.Repeat("x", 2<<20)}), 413, `request body larger than 1048576 bytes (--max-body)`},
		{"path form off", "POST", "/v1/evaluate", "application/json", jsonBody(`{"path": "pop.json"}`), 403, `population paths are not enabled (start the service with --allow-dir)`},
		{"path form key", "POST", "/v1/evaluate", "application/json", jsonBody(`{"path": "pop.json", "x": 1}`), 400, `request body: json: unknown field "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			ct := tt.ctype
			if tt.body != nil {
				var mct string
				body, mct = tt.body()
				if ct == "" {
					ct = mct
				}
			}
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, body)
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			msg := errorOf(t, resp)
			if resp.StatusCode != tt.status || !strings.HasPrefix(msg, tt.msg) {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, msg, tt.status, tt.msg)
			}
			if resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("content type %q", resp.Header.Get("Content-Type"))
			}
			if tt.status == 405 && resp.Header.Get("Allow") != "POST" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
}

func jsonBody(s string) func() (io.Reader, string) {
	return func() (io.Reader, string) { return strings.NewReader(s), "application/json" }
}

// TestTooLargeWithoutLength: a body sent without Content-Length is judged
// while it is read.
func TestTooLargeWithoutLength(t *testing.T) {
	ts := httptest.NewServer(newServer(t, serve.Options{MaxBody: 4096}).Handler())
	defer ts.Close()
	js, st := files(t, population(t, t.TempDir(), 2, 7))
	req := uploadRequest(t, context.Background(), ts.URL, "", js, st)
	req.Body = io.NopCloser(req.Body) // hides the length: sent chunked
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if msg := errorOf(t, resp); resp.StatusCode != 413 || msg != "request body larger than 4096 bytes (--max-body)" {
		t.Errorf("%d %q", resp.StatusCode, msg)
	}
}

// TestPathForm: the path form reads only under the allowed folders.
func TestPathForm(t *testing.T) {
	root := t.TempDir()
	allowed, elsewhere := filepath.Join(root, "allowed"), filepath.Join(root, "elsewhere")
	os.MkdirAll(filepath.Join(allowed, "exp"), 0o755)
	os.MkdirAll(elsewhere, 0o755)
	population(t, filepath.Join(allowed, "exp"), 2, 9)
	out := population(t, elsewhere, 2, 9)
	os.Symlink(out, filepath.Join(allowed, "link.json"))
	// A population inside whose weights are a link to a file outside.
	js, _ := files(t, out)
	os.WriteFile(filepath.Join(allowed, "leak.json"), bytes.Replace(js, []byte(`"pop.safetensors"`), []byte(`"leak.safetensors"`), 1), 0o644)
	os.Symlink(strings.TrimSuffix(out, ".json")+".safetensors", filepath.Join(allowed, "leak.safetensors"))

	ts := httptest.NewServer(newServer(t, serve.Options{AllowDirs: []string{allowed}}).Handler())
	defer ts.Close()
	tests := []struct {
		body   string
		status int
		msg    string
	}{
		{`{"path": "exp/pop.json", "limit": 10}`, 200, ""},
		{`{"path": "../elsewhere/pop.json"}`, 403, `path "../elsewhere/pop.json" is outside the allowed folders`},
		{`{"path": "` + out + `"}`, 403, `is outside the allowed folders`},
		{`{"path": "link.json"}`, 403, `path "link.json" is outside the allowed folders`},
		{`{"path": "leak.json"}`, 403, `leak.json: weights "leak.safetensors" are outside the allowed folders`},
		{`{"path": "exp/none.json"}`, 404, `population "exp/none.json" not found`},
		{`{"path": "exp/pop.safetensors"}`, 400, `path "exp/pop.safetensors": want a population .json file`},
		{`{"path": "exp/pop.json", "limit": -2}`, 400, `limit "-2": want an integer ≥ 0`},
		{`{"path": "exp/pop.json", "limit": 1.5}`, 400, `limit "1.5": want an integer ≥ 0`},
		{`{"limit": 3}`, 400, `request body: missing "path"`},
		{`[1]`, 400, `request body: json: cannot unmarshal`},
	}
	for _, tt := range tests {
		resp, err := http.Post(ts.URL+"/v1/evaluate", "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if tt.status == 200 {
			got := readStream(t, resp.Body)
			if resp.StatusCode != 200 || len(got.lines) != 2 || got.lines[0]["images"] != 10.0 {
				t.Errorf("%s: %d %v", tt.body, resp.StatusCode, got)
			}
		} else if msg := errorOf(t, resp); resp.StatusCode != tt.status || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s: %d %q, want %d %q", tt.body, resp.StatusCode, msg, tt.status, tt.msg)
		}
		resp.Body.Close()
	}
}
