package serve

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/neateval/neateval/neat"
)

// FuzzParseRequest: whatever the content type, query and body, parsing a
// POST /v1/evaluate never panics, and either refuses with a 4xx status and
// a message or returns a population with its digest.
func FuzzParseRequest(f *testing.F) {
	dir := f.TempDir()
	pop := neat.Generate(1, 2, neat.Input{Channels: 1, Height: 8, Width: 8}, 3, neat.DefaultGenConfig())
	if err := neat.Save(pop, filepath.Join(dir, "p.json"), "p.safetensors"); err != nil {
		f.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "p.json"))
	st, _ := os.ReadFile(filepath.Join(dir, "p.safetensors"))
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.SetBoundary("b0undary")
	w, _ := mw.CreateFormFile("population", "p.json")
	w.Write(js)
	w, _ = mw.CreateFormFile("weights", "p.safetensors")
	w.Write(st)
	fw, _ := mw.CreateFormField("limit")
	fw.Write([]byte("5"))
	mw.Close()
	f.Add(mw.FormDataContentType(), "fitness=neg_loss", buf.Bytes())
	f.Add("multipart/form-data; boundary=b0undary", "limit=3&limit=4", buf.Bytes()[:len(buf.Bytes())/2])
	f.Add("application/json", "", []byte(`{"path": "p.json", "limit": 3}`))
	f.Add("application/json", "limit=2", []byte(`{"path": "../p.json", "fitness": "accuracy"}`))
	f.Add("text/plain", "", []byte("hello"))
	const maxBody = 1 << 20
	f.Fuzz(func(t *testing.T, ctype, query string, body []byte) {
		r := httptest.NewRequest("POST", "/v1/evaluate", bytes.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", ctype)
		r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
		req, herr := parseRequest(r, []string{dir}, maxBody)
		switch {
		case herr != nil:
			if herr.status < 400 || herr.status > 499 || herr.msg == "" {
				t.Fatalf("refusal %d %q", herr.status, herr.msg)
			}
		case req.pop == nil || req.digest == "":
			t.Fatal("accepted without a population")
		default:
			if err := checkOptions(req.limit, req.fitness); err != nil {
				t.Fatalf("accepted bad options: %v", err)
			}
		}
	})
}
