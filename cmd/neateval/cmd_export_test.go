package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

func TestExport(t *testing.T) {
	dir := t.TempDir()
	popPath := filepath.Join(dir, "pop.json")
	pop := neat.Generate(1, 3, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	pop.Genomes[1].Output = 999 // invalid: listed with its error, the others written
	if err := neat.Save(pop, popPath, "pop.safetensors"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out bytes.Buffer
	err := cmdExport(ctx, []string{"--population", popPath, "--all", "--out", filepath.Join(dir, "all")}, &out, &out)
	var ge *run.GenomeErrors
	if !errors.As(err, &ge) || ge.Failed != 1 || exitCode(err) != exitGenomeErrs {
		t.Fatalf("--all: %v, want 1 genome error", err)
	}
	for _, f := range []string{"genome-0.onnx", "genome-2.onnx", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(dir, "all", f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(out.String(), "genome 1: output node 999 does not exist") {
		t.Errorf("output %q does not name the invalid genome", out.String())
	}
	one := filepath.Join(dir, "one", "g2.onnx")
	if err := cmdExport(ctx, []string{"--population", popPath, "--genome", "2", "--out", one}, &out, &out); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(filepath.Join(dir, "all", "genome-2.onnx"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("--genome 2 wrote %d bytes, --all %d, want the same model", len(a), len(b))
	}
	if err := cmdExport(ctx, []string{"--population", popPath, "--genome", "1", "--out", one}, &out, &out); err == nil ||
		!strings.Contains(err.Error(), "genome 1") || exitCode(err) != exitFailed {
		t.Errorf("invalid genome: %v", err)
	}
}

func TestExportUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--population", "p.json", "--out", "x.onnx"},
		{"--population", "p.json", "--all", "--genome", "1", "--out", "d"},
		{"--population", "p.json", "--genome", "1", "--out", "x.bin"},
		{"--evolve-dir", "d", "--all", "--out", "d"},
		{"--genome", "x", "--out", "x.onnx"},
		{"--population", "p.json", "--genome", "7", "--out", "x.onnx", "extra"},
	} {
		var out bytes.Buffer
		if err := cmdExport(context.Background(), args, &out, &out); exitCode(err) != exitUsage {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
	dir := t.TempDir()
	pop := neat.Generate(1, 1, neat.Input{Channels: 1, Height: 8, Width: 8}, 3, neat.DefaultGenConfig())
	if err := neat.Save(pop, filepath.Join(dir, "p.json"), "p.safetensors"); err != nil {
		t.Fatal(err)
	}
	err := runExport(context.Background(), exportOptions{Population: filepath.Join(dir, "p.json"), Genome: 5, genomeSet: true, Out: "x.onnx"}, &bytes.Buffer{})
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "no such genome") {
		t.Errorf("missing genome: %v", err)
	}
}
