package neat_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	in := neat.Input{Channels: 3, Height: 16, Width: 16}
	pop := neat.Generate(11, 24, in, 10, neat.DefaultGenConfig())
	// A few things the generator does not write.
	g := baseGenome()
	g.ID = 1000
	node(g, 2).Stride = 1
	g.Nodes = append(g.Nodes,
		neat.Node{ID: 30, Op: "future_op", Inputs: []int{1}},
		neat.Node{ID: 31, Op: neat.OpDense, Inputs: []int{3, 3}, Merge: neat.MergeConcat, OutFeatures: 2, Activation: "swish"})
	g.Params[2] = params(1) // unused, for a node that has no weights
	pop8 := &neat.Population{Input: in8, NumClasses: 3, Genomes: []*neat.Genome{g}}

	for _, p := range []*neat.Population{pop, pop8} {
		dir1, dir2 := t.TempDir(), t.TempDir()
		path := filepath.Join(dir1, "pop.json")
		if err := neat.Save(p, path, "pop.safetensors"); err != nil {
			t.Fatal(err)
		}
		back, err := neat.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if back.Input != p.Input || back.NumClasses != p.NumClasses || len(back.Genomes) != len(p.Genomes) {
			t.Fatalf("read back %+v, %d classes, %d genomes", back.Input, back.NumClasses, len(back.Genomes))
		}
		for i, want := range p.Genomes {
			got := back.Genomes[i]
			if got.ID != want.ID || got.Output != want.Output || !reflect.DeepEqual(got.Nodes, want.Nodes) || got.Invalid != nil {
				t.Errorf("genome #%d read back as\n%+v\nwant\n%+v", i, got, want)
				continue
			}
			for _, n := range want.Nodes {
				wp, gp := want.Params[n.ID], got.Params[n.ID]
				if (wp == nil) != (gp == nil) {
					t.Errorf("genome %d, node %d: params %v read back as %v", want.ID, n.ID, wp, gp)
					continue
				}
				if wp != nil && (!sameTensor(wp.Weight, gp.Weight) || !sameTensor(wp.Bias, gp.Bias)) {
					t.Errorf("genome %d, node %d: params differ after the round trip", want.ID, n.ID)
				}
			}
			wg, err1 := neat.Compile(want, p.Input, p.NumClasses)
			gg, err2 := neat.Compile(got, back.Input, back.NumClasses)
			if err1 != nil || err2 != nil || wg.FLOPs != gg.FLOPs || wg.Params != gg.Params {
				t.Errorf("genome %d compiles to different figures after the round trip (%v, %v)", want.ID, err1, err2)
			}
		}
		// What was read writes the same bytes again.
		path2 := filepath.Join(dir2, "pop.json")
		if err := neat.Save(back, path2, "pop.safetensors"); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"pop.json", "pop.safetensors"} {
			a, _ := os.ReadFile(filepath.Join(dir1, name))
			b, _ := os.ReadFile(filepath.Join(dir2, name))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s differs between two saves of the same population", name)
			}
		}
	}
}

func sameTensor(a, b *neat.Tensor) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Data, b.Data)
}

func TestSaveJSON(t *testing.T) {
	g := baseGenome()
	n := node(g, 1)
	n.Inputs, n.Merge, n.Padding, n.Activation = []int{0, 0}, neat.MergeConcat, 0, neat.ActTanh
	g.Params[1] = params(4, 2, 3, 3)
	path := filepath.Join(t.TempDir(), "p.json")
	if err := neat.Save(&neat.Population{Input: in8, NumClasses: 3, Genomes: []*neat.Genome{g}}, path, "p.safetensors"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{
  "format": "neateval.population/v1",
  "input": {"channels": 1, "height": 8, "width": 8},
  "num_classes": 3,
  "weights": "p.safetensors",
  "genomes": [
    {"id": 7, "output": 4, "nodes": [
      {"id": 4, "op": "dense", "inputs": [3], "out_features": 3},
      {"id": 1, "op": "conv2d", "inputs": [0, 0], "merge": "concat", "out_channels": 4, "kernel": 3, "padding": 0, "activation": "tanh"},
      {"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2},
      {"id": 3, "op": "global_avg_pool", "inputs": [2]}
    ]}
  ]
}
`
	if string(got) != want {
		t.Errorf("JSON\n%s\nwant\n%s", got, want)
	}
}

func TestSaveRefuses(t *testing.T) {
	pop := func(edit func(p *neat.Population)) *neat.Population {
		p := &neat.Population{Input: in8, NumClasses: 3, Genomes: []*neat.Genome{baseGenome()}}
		edit(p)
		return p
	}
	cases := []struct {
		name    string
		pop     *neat.Population
		weights string
		want    string
	}{
		{"no genomes", pop(func(p *neat.Population) { p.Genomes = nil }), "w", "no genomes"},
		{"duplicate ids", pop(func(p *neat.Population) { p.Genomes = append(p.Genomes, baseGenome()) }), "w", "genome #1: duplicate genome id 7"},
		{"negative id", pop(func(p *neat.Population) { p.Genomes[0].ID = -1 }), "w", "genome #0: id -1 is negative"},
		{"invalid genome", pop(func(p *neat.Population) {
			p.Genomes[0].Invalid = &neat.GenomeError{Genome: 7, Msg: "output is missing"}
		}), "w",
			"cannot save an invalid genome: genome 7: output is missing"},
		{"node problem", pop(func(p *neat.Population) { node(p.Genomes[0], 2).Problem = "maxpool2d kernel is missing" }), "w",
			"cannot save an invalid genome: genome 7, node 2: maxpool2d kernel is missing"},
		{"no classes", pop(func(p *neat.Population) { p.NumClasses = 0 }), "w", "num_classes 0, want 1 to 2147483648"},
		{"bad input", pop(func(p *neat.Population) { p.Input.Height = 0 }), "w", "input 1×0×8, want each at least 1"},
		{"no weights name", pop(func(p *neat.Population) {}), "", "no weights file name"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "p.json")
		err := neat.Save(c.pop, path, c.weights)
		if want := path + ": " + c.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: Save error %v, want %q", c.name, err, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: Save left %d files", c.name, len(entries))
		}
	}

	// A tensor without float values stops Save before the JSON is written.
	dir := t.TempDir()
	p := pop(func(p *neat.Population) {
		p.Genomes[0].Params[1].Weight = &neat.Tensor{Shape: []int{4, 1, 3, 3}, DType: "I32"}
	})
	err := neat.Save(p, filepath.Join(dir, "p.json"), "p.safetensors")
	if want := `p.safetensors: tensor "g7.n1.weight" has dtype I32 and no float values`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Save error %v, want it to end with %q", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed Save left %d files", len(entries))
	}
}
