package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/neat"
)

func TestBenchFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--preset", "huge"}, `bench: --preset "huge": want small, wide or both`},
		{[]string{"--images", "0"}, "bench: --images 0: must be ≥ 1"},
		{[]string{"--dataset", "cifar10"}, `bench: --dataset "cifar10": want mnist or synthetic`},
		{[]string{"--parallel", "0"}, "bench: --parallel 0: must be ≥ 1"},
		{[]string{"--repeat", "0"}, "bench: --repeat 0: must be ≥ 1"},
		{[]string{"--torch", "yes"}, `bench: --torch "yes": want auto or off`},
		{[]string{"--ceiling", "on"}, `bench: --ceiling "on": want auto or off`},
		{[]string{"--size", "-1"}, "bench: --size -1: must be ≥ 0"},
		{[]string{"extra"}, `bench: unexpected argument "extra" (see neateval help bench)`},
		{[]string{"--help"}, "help"},
		{[]string{"--dataset", "synthetic", "--images", "20", "--bench-dir", "/nonexistent", "--torch", "auto", "--ceiling", "off", "--preset", "small", "--size", "1"}, ""},
	} {
		var stdout bytes.Buffer
		err := runMain(context.Background(), append([]string{"bench"}, tt.args...), &stdout, &bytes.Buffer{})
		if tt.msg == "help" {
			if exitCode(err) != exitOK || !strings.Contains(stdout.String(), "Usage: neateval bench") || !strings.Contains(stdout.String(), "-torch M") {
				t.Errorf("--help: exit %d, usage:\n%s", exitCode(err), stdout.String())
			}
			continue
		}
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.args, err)
			}
			if !strings.Contains(stdout.String(), "PyTorch not run: --bench-dir /nonexistent: no bench/ folder") {
				t.Errorf("%v: output lacks why PyTorch did not run:\n%s", tt.args, stdout.String())
			}
			continue
		}
		if exitCode(err) != exitUsage || err.Error() != tt.msg {
			t.Errorf("%v: error %v (exit %d), want %q (exit 2)", tt.args, err, exitCode(err), tt.msg)
		}
	}
}

// TestBenchSynthetic runs the whole bench on a tiny synthetic set without
// the external engines: a table row per population and engine, and a JSON
// report whose figures are the populations'.
func TestBenchSynthetic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	err := runMain(context.Background(), []string{"bench", "--dataset", "synthetic", "--images", "40", "--size", "3",
		"--torch", "off", "--ceiling", "off", "--ort", "off", "--threads", "2", "--repeat", "2", "--json", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, want := range []string{"40 images of synthetic", "small", "wide", "neateval (cpu)", "PyTorch not run (--torch off)", "ceiling not measured (--ceiling off)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Populations) != 2 || rep.Threads != 2 || rep.Repeat != 2 || rep.Images != 40 {
		t.Fatalf("report %+v", rep)
	}
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	for i, preset := range []string{"small", "wide"} {
		p := rep.Populations[i]
		pop, err := generatePopulation(PopulationConfig{GenerateSize: 3, GenerateSeed: 1, GeneratePreset: preset}, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		var flops int64
		for _, g := range pop.Genomes {
			gr, err := neat.Compile(g, in, 10)
			if err != nil {
				t.Fatal(err)
			}
			flops += gr.FLOPs
		}
		ne := p.Neateval
		if p.Preset != preset || p.Genomes != 3 || p.FLOPsPerImage != flops || ne.ImagesGenomes != 3*40 || ne.Seconds <= 0 {
			t.Errorf("%s: %+v, want 3 genomes, %d FLOPs per image, 120 images·genomes", preset, p, flops)
		}
		if got, want := ne.GFLOPS, float64(flops)*40/ne.Seconds/1e9; !closeRel(got, want, 1e-9) {
			t.Errorf("%s: %.3f GFLOP/s, want %.3f", preset, got, want)
		}
		if p.PyTorch != nil || p.Check != nil {
			t.Errorf("%s: PyTorch results with --torch off", preset)
		}
	}
}

func closeRel(a, b, rel float64) bool { return a-b <= rel*b && b-a <= rel*b }

func TestCrossCheck(t *testing.T) {
	g := func(id int64, ok bool, acc, loss float64) engineGenome {
		return engineGenome{ID: id, OK: ok, Accuracy: acc, Loss: loss, Images: 1000}
	}
	base := []engineGenome{g(1, true, 0.5, 2.0), g(2, false, 0, 0), g(3, true, 0.9, 0.3)}
	for _, tt := range []struct {
		name  string
		pt    []engineGenome
		ok    bool
		agree int
	}{
		{"same", []engineGenome{g(1, true, 0.5, 2.0), g(2, false, 0, 0), g(3, true, 0.9, 0.3)}, true, 3},
		{"tie flips 2 images, loss to 1e-6", []engineGenome{g(1, true, 0.502, 2.000002), g(2, false, 0, 0), g(3, true, 0.9, 0.3)}, true, 3},
		{"3 images apart", []engineGenome{g(1, true, 0.503, 2.0), g(2, false, 0, 0), g(3, true, 0.9, 0.3)}, false, 2},
		{"loss 1e-3 apart", []engineGenome{g(1, true, 0.5, 2.002), g(2, false, 0, 0), g(3, true, 0.9, 0.3)}, false, 2},
		{"scored by one only", []engineGenome{g(1, true, 0.5, 2.0), g(2, true, 0.1, 2.3), g(3, true, 0.9, 0.3)}, false, 2},
		{"other genome", []engineGenome{g(1, true, 0.5, 2.0), g(2, false, 0, 0), g(4, true, 0.9, 0.3)}, false, 2},
		{"fewer lines", []engineGenome{g(1, true, 0.5, 2.0)}, false, 0},
	} {
		c := crossCheck(base, tt.pt)
		if c.OK != tt.ok || c.Agree != tt.agree {
			t.Errorf("%s: ok %v, %d agree (%v); want %v, %d", tt.name, c.OK, c.Agree, c.Problems, tt.ok, tt.agree)
		}
	}
}

// TestWriteIDX writes a set as IDX files and reads it back through the
// datasets package: the same images and labels.
func TestWriteIDX(t *testing.T) {
	for _, ch := range []int{1, 3} {
		ds := datasets.Synthetic(17, ch, 9, 7, 10, 5)
		dir := t.TempDir()
		if err := writeIDX(dir, ds); err != nil {
			t.Fatal(err)
		}
		if ch == 3 {
			// The datasets package reads IDX images of one channel only;
			// check the 4-D header torch_ref.py reads instead.
			b, err := os.ReadFile(filepath.Join(dir, "t10k-images-idx3-ubyte"))
			if err != nil {
				t.Fatal(err)
			}
			if b[3] != 4 || len(b) != 4+16+17*3*9*7 {
				t.Errorf("3 channels: %d dims, %d bytes", b[3], len(b))
			}
			continue
		}
		back, err := datasets.Open(datasets.Spec{Kind: "idx", Path: dir, Images: "t10k-images-idx3-ubyte", Labels: "t10k-labels-idx1-ubyte"})
		if err != nil {
			t.Fatal(err)
		}
		if back.N != ds.N || !bytes.Equal(back.Labels, ds.Labels) {
			t.Fatalf("read back %d images, labels %v; want %d, %v", back.N, back.Labels, ds.N, ds.Labels)
		}
		for i, v := range ds.Images {
			if back.Images[i] != v {
				t.Fatalf("pixel %d: %v, want %v", i, back.Images[i], v)
			}
		}
	}
}

// TestBenchCeilingWithoutCompiler runs the real bench/ceiling.sh on a PATH
// without cc: the bench notes why and goes on without a ceiling.
func TestBenchCeilingWithoutCompiler(t *testing.T) {
	benchDir, err := findBenchDir("")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	for _, tool := range []string{"bash", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	var stderr bytes.Buffer
	e := &benchExternal{dir: t.TempDir(), benchDir: benchDir, threads: 1, ceiling: true, ceilingN: 64, ceilingR: 1, stderr: &stderr}
	if c := e.measureCeiling(context.Background()); c != nil {
		t.Fatalf("a ceiling without a compiler: %+v", c)
	}
	if want := "ceiling not measured: ceiling.sh: no C compiler (cc) on the PATH"; e.ceilingNote != want || e.ceiling {
		t.Errorf("note %q (ceiling %v), want %q", e.ceilingNote, e.ceiling, want)
	}
}

// TestBenchExternalEngines runs PyTorch and the ceiling for real on a tiny
// synthetic set, where they are installed: the cross-check agrees and the
// table has every column.
func TestBenchExternalEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python and compiles the ceiling")
	}
	if _, err := findBenchDir(""); err != nil {
		t.Skip(err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy, torch").Run(); err != nil {
		t.Skip("PyTorch not installed")
	}
	var stdout, stderr bytes.Buffer
	rep := filepath.Join(t.TempDir(), "r.json")
	err := runMain(context.Background(), []string{"bench", "--dataset", "synthetic", "--images", "64", "--size", "2",
		"--preset", "small", "--ceiling", "off", "--ort", "off", "--json", rep}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "fitness small: ok: 2 of 2 genomes agree with PyTorch") ||
		!strings.Contains(stdout.String(), "pytorch ") {
		t.Errorf("table:\n%s", stdout.String())
	}
	var r benchReport
	b, _ := os.ReadFile(rep)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	p := r.Populations[0]
	if p.PyTorch == nil || p.PyTorch.ImagesGenomes != 2*64 || p.Neateval.VsPyTorch <= 0 || p.PyTorch.VsPyTorch != 1 {
		t.Errorf("PyTorch results %+v, neateval %+v", p.PyTorch, p.Neateval)
	}
}
