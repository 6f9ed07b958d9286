package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

func TestPopulationFileDigest(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "p.json")
	os.WriteFile(js, []byte(`{"weights": "p.safetensors"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "p.safetensors"), []byte("weights-1"), 0o644)
	a, err := populationFileDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "p.safetensors"), []byte("weights-2"), 0o644)
	b, _ := populationFileDigest(js)
	if a == b {
		t.Error("changing the weights did not change the digest")
	}
	os.WriteFile(js, []byte(`{"weights":  "p.safetensors"}`), 0o644)
	c, _ := populationFileDigest(js)
	if c == b {
		t.Error("changing the JSON did not change the digest")
	}
	for name, content := range map[string]string{"nojson.json": "[", "noweights.json": "{}", "missing.json": `{"weights":"gone.safetensors"}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := populationFileDigest(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPopulationDigestSeesEveryPart(t *testing.T) {
	base := func() *neat.Population {
		return neat.Generate(3, 4, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	}
	d0 := populationDigest(base())
	if d0 != populationDigest(base()) {
		t.Fatal("digest is not deterministic")
	}
	changes := map[string]func(p *neat.Population){
		"genome id":   func(p *neat.Population) { p.Genomes[1].ID = 99 },
		"classes":     func(p *neat.Population) { p.NumClasses = 9 },
		"node kernel": func(p *neat.Population) { p.Genomes[0].Nodes[0].Kernel++ },
		"order":       func(p *neat.Population) { p.Genomes[0], p.Genomes[1] = p.Genomes[1], p.Genomes[0] },
		"one weight": func(p *neat.Population) {
			for _, prm := range p.Genomes[2].Params {
				if prm != nil && prm.Weight != nil {
					prm.Weight.Data[0] += 1e-6
					return
				}
			}
		},
	}
	for name, change := range changes {
		p := base()
		change(p)
		if populationDigest(p) == d0 {
			t.Errorf("%s: digest unchanged", name)
		}
	}
}
