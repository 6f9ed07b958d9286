package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/serve"
)

// A program that serves the API itself: the server on a loopback port,
// one population uploaded, its stream read line by line.
func Example() {
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 100
	cfg.Eval.Backend, cfg.VRAM.MemoryBytes = "cpu", 64<<20
	s, err := serve.New(cfg, serve.Options{Queue: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	// Two files, as `neateval gen` or the Python writer makes them.
	dir, _ := os.MkdirTemp("", "serve-example")
	defer os.RemoveAll(dir)
	pop := neat.Generate(1, 3, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	neat.Save(pop, filepath.Join(dir, "pop.json"), "pop.safetensors")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range []struct{ part, file string }{{"population", "pop.json"}, {"weights", "pop.safetensors"}} {
		w, _ := mw.CreateFormFile(f.part, f.file)
		data, _ := os.ReadFile(filepath.Join(dir, f.file))
		w.Write(data)
	}
	mw.Close()

	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/evaluate?limit=50", mw.FormDataContentType(), &body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.Header.Get("X-Neateval-Genomes"), "genomes")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `{"summary":`) {
			fmt.Println("summary:", strings.Contains(line, `"genomes":3,"failed":0,"images":150`))
		} else {
			fmt.Println("result of genome", strings.Contains(line, `"images":50`))
		}
	}
	resp.Body.Close()
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// 200 OK 3 genomes
	// result of genome true
	// result of genome true
	// result of genome true
	// summary: true
	// stopped: <nil>
}
