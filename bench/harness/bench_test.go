package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
)

// TestBenchSynthetic runs the whole bench (the three presets) on a tiny
// synthetic set without the external engines: a table row per population
// and engine, and a JSON report whose figures are the populations'.
func TestBenchSynthetic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	r, err := Run(context.Background(), Options{Preset: "all", Dataset: "synthetic", Images: 40, Size: 3, Seed: 1,
		Torch: "off", Ceiling: "off", ORT: "off", Threads: 2, Repeat: 2, Parallel: 1}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	r.WriteTable(&stdout)
	if err := r.WriteJSON(out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"40 images of synthetic", "small", "wide", "evolve", "neateval (cpu)", "PyTorch not run (--torch off)", "ceiling not measured (--ceiling off)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Populations) != 3 || rep.Threads != 2 || rep.Repeat != 2 || rep.Images != 40 {
		t.Fatalf("report %+v", rep)
	}
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	for i, preset := range []string{"small", "wide", "evolve"} {
		p := rep.Populations[i]
		pc := config.PopulationConfig{GenerateSize: 3, GenerateSeed: 1, GeneratePreset: preset}
		var pop *neat.Population
		if preset == "evolve" {
			pop, err = EvolvePopulation()
			pop.Genomes = pop.Genomes[:3]
		} else {
			pop, err = pc.Generate(in, 10)
		}
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
	res, err := Run(context.Background(), Options{Preset: "small", Dataset: "synthetic", Images: 64, Size: 2, Seed: 1,
		Torch: "auto", Ceiling: "off", ORT: "off", Repeat: 1, Parallel: 1, Python: "/usr/bin/python3"}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	res.WriteTable(&stdout)
	rep := filepath.Join(t.TempDir(), "r.json")
	if err := res.WriteJSON(rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "fitness small: ok: 2 of 2 genomes agree with PyTorch") ||
		!strings.Contains(stdout.String(), "pytorch ") {
		t.Errorf("table:\n%s", stdout.String())
	}
	var r Report
	b, _ := os.ReadFile(rep)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	p := r.Populations[0]
	if p.PyTorch == nil || p.PyTorch.ImagesGenomes != 2*64 || p.Neateval.VsPyTorch <= 0 || p.PyTorch.VsPyTorch != 1 {
		t.Errorf("PyTorch results %+v, neateval %+v", p.PyTorch, p.Neateval)
	}
}
