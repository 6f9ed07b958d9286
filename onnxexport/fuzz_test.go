package onnxexport_test

import (
	"errors"
	"testing"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/onnxexport"
)

const fuzzHeader = `{"format": "neateval.population/v1", "input": {"channels": 2, "height": 6, "width": 5},
	"num_classes": 3, "weights": "w.safetensors", "genomes": [`

// FuzzEncode exports every genome of a population file, with weights of
// the shapes the genome needs: Encode never panics, refuses exactly the
// genomes Compile refuses (with Compile's error), and writes a model whose
// graph has a node for every reachable step.
func FuzzEncode(f *testing.F) {
	f.Add([]byte(fuzzHeader + `{"id": 1, "output": 5, "nodes": [
		{"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 4, "kernel": 3, "activation": "gelu"},
		{"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2},
		{"id": 3, "op": "conv2d", "inputs": [2], "out_channels": 3, "kernel": 1, "stride": 2, "padding": 0},
		{"id": 4, "op": "avgpool2d", "inputs": [2, 3], "merge": "concat", "kernel": 1},
		{"id": 6, "op": "global_avg_pool", "inputs": [4]},
		{"id": 7, "op": "dense", "inputs": [4], "out_features": 5, "activation": "leaky_relu"},
		{"id": 5, "op": "dense", "inputs": [6, 7], "out_features": 3}]}]}`))
	f.Add([]byte(fuzzHeader + `{"id": 2, "output": 1, "nodes": [{"id": 1, "op": "dense", "inputs": [0, 0], "out_features": 3}]},
		{"id": 3, "output": 2, "nodes": [{"id": 2, "op": "dense", "inputs": [0], "out_features": 4}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pop, _, err := neat.ParsePopulationJSON(data, "fuzz.json")
		if err != nil {
			return
		}
		for _, g := range pop.Genomes {
			gr, err := neat.InferShapes(g, pop.Input, pop.NumClasses)
			if err != nil || gr.Params > 1<<16 || pop.Input.Channels*pop.Input.Height*pop.Input.Width > 1<<12 {
				continue
			}
			g.Params = map[int]*neat.Params{}
			for _, s := range gr.Steps {
				if ws := s.WeightShape(); ws != nil {
					w := &neat.Tensor{Shape: ws}
					w.Data = make([]float32, w.Len())
					b := &neat.Tensor{Shape: ws[:1], Data: make([]float32, ws[0])}
					g.Params[s.Node.ID] = &neat.Params{Weight: w, Bias: b}
				}
			}
			_, cerr := neat.Compile(g, pop.Input, pop.NumClasses)
			model, err := onnxexport.Encode(g, pop.Input, pop.NumClasses, onnxexport.Options{})
			var ge *neat.GenomeError
			switch {
			case cerr != nil:
				if !errors.As(err, &ge) || err.Error() != cerr.Error() {
					t.Fatalf("genome %d: Compile: %v; Encode: %v", g.ID, cerr, err)
				}
			case err != nil:
				t.Fatalf("genome %d compiles, Encode: %v", g.ID, err)
			default:
				if ops := opTypes(t, model); len(ops) < len(gr.Steps) {
					t.Fatalf("genome %d: %d ops for %d steps", g.ID, len(ops), len(gr.Steps))
				}
			}
		}
	})
}
