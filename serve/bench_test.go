package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neateval/neateval/neat"
)

// BenchmarkServeVsProcesses measures what the service saves an evolution
// loop: 20 generations of 64 genomes × 2,000 MNIST images scored through
// one `neateval serve` against 20 `neateval run` processes on the same
// files, alternating generation by generation so that a machine shared
// with other work slows both alike. It reports the processes' wall time
// over the service's, with the service's own start-up (backend and data
// set, once) counted and not. Not run by default (go test -bench):
//
//	go test ./serve -run '^$' -bench ServeVsProcesses -benchtime 1x
func BenchmarkServeVsProcesses(b *testing.B) {
	const gens, size, images = 20, 64, 2000
	dir := b.TempDir()
	bin := buildNeateval(b, dir)
	pops := make([]string, gens)
	for g := range pops {
		pop := neat.Generate(int64(100+g), size, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
		pops[g] = filepath.Join(dir, fmt.Sprintf("gen%02d.json", g))
		if err := neat.Save(pop, pops[g], fmt.Sprintf("gen%02d.safetensors", g)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		start := time.Now()
		base, stop := startServe(b, bin)
		startup := time.Since(start)
		var served, procs time.Duration
		for g, p := range pops {
			t0 := time.Now()
			lines := serveLines(b, base, p, images)
			served += time.Since(t0)
			t0 = time.Now()
			want := processLines(b, bin, p, images, filepath.Join(dir, fmt.Sprintf("r%02d.jsonl", g)))
			procs += time.Since(t0)
			if len(lines) != size || len(want) != size {
				b.Fatalf("generation %d: %d lines served, %d written", g, len(lines), len(want))
			}
		}
		stop()
		b.ReportMetric(procs.Seconds()/(served+startup).Seconds(), "ratio")
		b.ReportMetric(procs.Seconds()/served.Seconds(), "ratio_warm")
		b.Logf("%d generations × %d genomes × %d images: %d processes %.1f s; serve %.1f s + start-up %.1f s; "+
			"processes / serve: %.2f× (%.2f× without the service's start-up)",
			gens, size, images, gens, procs.Seconds(), served.Seconds(), startup.Seconds(),
			procs.Seconds()/(served+startup).Seconds(), procs.Seconds()/served.Seconds())
	}
}

func buildNeateval(b *testing.B, dir string) string {
	bin := filepath.Join(dir, "neateval")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/neateval")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe starts `neateval serve` on a free loopback port and returns
// its URL once it listens (its serve_listening line), and how to stop it.
func startServe(b *testing.B, bin string) (string, func()) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--log-format", "json")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var ev struct{ Event, Addr string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "serve_listening" {
			go io.Copy(io.Discard, stderr)
			return "http://" + ev.Addr, func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	b.Fatal("neateval serve exited before it listened")
	return "", nil
}

// serveLines scores a population through the service and returns its
// result lines.
func serveLines(b *testing.B, base, path string, limit int) []string {
	js, st := files(b, path)
	req := uploadRequest(b, context.Background(), base, fmt.Sprintf("?limit=%d", limit), js, st)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%d %v: %s", resp.StatusCode, err, body)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		if strings.Contains(l, `"genome_id"`) {
			lines = append(lines, l)
		}
	}
	return lines
}

// processLines scores a population with a `neateval run` process and
// returns its results file's lines.
func processLines(b *testing.B, bin, path string, limit int, results string) []string {
	cmd := exec.Command(bin, "run", "--population", path, "--limit", fmt.Sprint(limit), "--results", results,
		"--log-format", "json", "--progress", "off")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("neateval run: %v\n%s", err, out)
	}
	data, err := os.ReadFile(results)
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}
