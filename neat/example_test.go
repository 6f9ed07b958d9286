package neat_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/neateval/neateval/neat"
)

// Load a population, then Compile each genome: a broken genome gets an
// error naming it and its node, the others their figures.
func Example() {
	dir, err := os.MkdirTemp("", "neat-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The population of the format's specification, with a second genome
	// whose kernel is a string.
	popJSON := `{
  "format": "neateval.population/v1",
  "input": {"channels": 1, "height": 28, "width": 28},
  "num_classes": 10,
  "weights": "population.safetensors",
  "genomes": [
    {"id": 17, "output": 5, "nodes": [
      {"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 8, "kernel": 3, "stride": 1, "padding": 1, "activation": "relu"},
      {"id": 2, "op": "maxpool2d", "inputs": [1], "kernel": 2},
      {"id": 3, "op": "conv2d", "inputs": [2], "out_channels": 12, "kernel": 3, "activation": "tanh"},
      {"id": 4, "op": "conv2d", "inputs": [2, 3], "merge": "sum", "out_channels": 16, "kernel": 1, "padding": 0},
      {"id": 6, "op": "global_avg_pool", "inputs": [4]},
      {"id": 5, "op": "dense", "inputs": [6], "out_features": 10}
    ]},
    {"id": 18, "output": 2, "nodes": [
      {"id": 1, "op": "conv2d", "inputs": [0], "out_channels": 8, "kernel": "3"},
      {"id": 2, "op": "dense", "inputs": [1], "out_features": 10}
    ]}
  ]
}`
	weights := map[string]*neat.Tensor{}
	for node, shape := range map[int][]int{1: {8, 1, 3, 3}, 3: {12, 8, 3, 3}, 4: {16, 12, 1, 1}, 5: {10, 16}} {
		w := &neat.Tensor{Shape: shape}
		w.Data = make([]float32, w.Len())
		weights[neat.TensorName(17, node, "weight")] = w
		weights[neat.TensorName(17, node, "bias")] = &neat.Tensor{Shape: shape[:1], Data: make([]float32, shape[0])}
	}
	path := filepath.Join(dir, "population.json")
	if err := os.WriteFile(path, []byte(popJSON), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := neat.WriteSafetensors(filepath.Join(dir, "population.safetensors"), weights); err != nil {
		log.Fatal(err)
	}

	pop, err := neat.Load(path)
	if err != nil {
		log.Fatal(err) // a whole-file error: the run stops here
	}
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("genome %d: %d steps, %d params (%d bytes in float32), %d FLOPs per image\n",
			gr.GenomeID, len(gr.Steps), gr.Params, gr.WeightBytes(4), gr.FLOPs)
		fmt.Printf("peak activations for 64 images: %d bytes\n", gr.PeakActivationBytes(64, 4, 1, nil))
	}
	// Output:
	// genome 17: 6 steps, 1334 params (5336 bytes in float32), 527168 FLOPs per image
	// peak activations for 64 images: 2007040 bytes
	// genome 18, node 1: conv2d kernel: want a JSON integer, got "3"
}

// Generate a population for tests or benchmarks and write it to disk.
func ExampleGenerate() {
	dir, err := os.MkdirTemp("", "neat-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := neat.DefaultGenConfig()
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(1, 64, in, 10, cfg)
	path := filepath.Join(dir, "population.json")
	if err := neat.Save(pop, path, "population.safetensors"); err != nil {
		log.Fatal(err)
	}

	back, err := neat.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	valid, under := 0, 0
	for _, g := range back.Genomes {
		if gr, err := neat.Compile(g, back.Input, back.NumClasses); err == nil {
			valid++
			if gr.FLOPs <= cfg.MaxFLOPs {
				under++
			}
		}
	}
	fmt.Printf("%d genomes, %d valid, %d within %d FLOPs per image\n", len(back.Genomes), valid, under, cfg.MaxFLOPs)
	// Output:
	// 64 genomes, 64 valid, 64 within 3000000 FLOPs per image
}
