package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
)

func TestGenWritesALoadablePopulation(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "pop.json")
	var stdout bytes.Buffer
	err := runMain(context.Background(), []string{"gen", "--out", out, "--size", "12", "--seed", "7", "--preset", "wide", "--input", "3x32x32", "--classes", "10"}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := "wrote 12 genomes (wide preset, seed 7, input 3x32x32, 10 classes) to " + out + " and " + filepath.Join(dir, "sub", "pop.safetensors") + "\n"
	if stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	pop, err := neat.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(pop.Genomes) != 12 || pop.Input != (neat.Input{Channels: 3, Height: 32, Width: 32}) || pop.NumClasses != 10 {
		t.Fatalf("loaded %d genomes, input %+v, %d classes", len(pop.Genomes), pop.Input, pop.NumClasses)
	}
	for _, g := range pop.Genomes {
		if _, err := neat.Compile(g, pop.Input, pop.NumClasses); err != nil {
			t.Errorf("genome %d: %v", g.ID, err)
		}
	}
	// What run would generate in memory from the same keys is what gen wrote.
	pc := config.PopulationConfig{GenerateSize: 12, GenerateSeed: 7, GeneratePreset: "wide"}
	gen, err := pc.Generate(pop.Input, 10)
	if err != nil {
		t.Fatal(err)
	}
	if neat.ContentDigest(gen) != neat.ContentDigest(pop) {
		t.Error("the population written and loaded differs from the one generated in memory")
	}
}

func TestGenIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	digest := func(name string, seed string) string {
		out := filepath.Join(dir, name, "pop.json")
		if err := runMain(context.Background(), []string{"gen", "--out", out, "--size", "5", "--seed", seed}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		_, d, err := neat.LoadDigest(out)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, c := digest("a", "1"), digest("b", "1"), digest("c", "2")
	if a != b {
		t.Error("the same seed gave different files")
	}
	if a == c {
		t.Error("different seeds gave the same files")
	}
	if !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("digest %q", a)
	}
}

func TestGenUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.json")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "gen: --out is required (the population JSON to write, e.g. pop/pop.json)"},
		{[]string{"--out", "p.txt"}, `gen: --out "p.txt": must end in .json`},
		{[]string{"--out", out, "--input", "28x28"}, `gen: --input "28x28": want CxHxW, e.g. 1x28x28`},
		{[]string{"--out", out, "--input", "1x0x28"}, `gen: --input "1x0x28": want CxHxW with each a whole number from 1 to 4096, e.g. 1x28x28`},
		{[]string{"--out", out, "--classes", "0"}, "gen: --classes 0: must be ≥ 1"},
		{[]string{"--out", out, "--size", "0"}, "gen: --size 0: must be ≥ 1"},
		{[]string{"--out", out, "--preset", "huge"}, `gen: --preset: unknown preset "huge" (want "small" or "wide")`},
		{[]string{"--out", out, "extra"}, `gen: unexpected argument "extra" (see neateval help gen)`},
	}
	for _, tt := range tests {
		err := runMain(context.Background(), append([]string{"gen"}, tt.args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || err.Error() != tt.want || exitCode(err) != exitUsage {
			t.Errorf("%v: %v (exit %d), want %q", tt.args, err, exitCode(err), tt.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused gen wrote a file")
	}
}
