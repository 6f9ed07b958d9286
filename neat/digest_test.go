package neat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

func TestLoadDigest(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "p.json")
	pop := neat.Generate(3, 4, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	if err := neat.Save(pop, js, "p.safetensors"); err != nil {
		t.Fatal(err)
	}
	_, a, err := neat.LoadDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, again, _ := neat.LoadDigest(js); again != a {
		t.Fatal("digest is not deterministic")
	}
	// Any byte of either file changes it, even one no genome reads.
	wpath := filepath.Join(dir, "p.safetensors")
	w, _ := os.ReadFile(wpath)
	os.WriteFile(wpath, append(w, 0), 0o644)
	if _, b, err := neat.LoadDigest(js); err != nil || b == a {
		t.Errorf("a byte appended to the weights: digest %s (%v), was %s", b, err, a)
	}
	os.WriteFile(wpath, w, 0o644)
	data, _ := os.ReadFile(js)
	os.WriteFile(js, append(data, ' '), 0o644)
	if _, c, err := neat.LoadDigest(js); err != nil || c == a {
		t.Errorf("a space appended to the JSON: digest %s (%v), was %s", c, err, a)
	}
	for name, content := range map[string]string{"nojson.json": "[", "noweights.json": "{}", "missing.json": `{"format":"neateval.population","version":1,"weights":"gone.safetensors"}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, _, err := neat.LoadDigest(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPopulationDigestSeesEveryPart(t *testing.T) {
	base := func() *neat.Population {
		return neat.Generate(3, 4, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	}
	d0 := neat.ContentDigest(base())
	if d0 != neat.ContentDigest(base()) {
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
		if neat.ContentDigest(p) == d0 {
			t.Errorf("%s: digest unchanged", name)
		}
	}
}
