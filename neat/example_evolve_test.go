package neat_test

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/neateval/neateval/neat"
)

// An Evolution takes its fitness as a function; a real run passes the
// evaluator's scores (see the evaluator's examples). This one asks, for the
// sake of the example, for two convolutions and as few parameters as can be.
func ExampleEvolution() {
	fitness := func(ctx context.Context, pop *neat.Population) ([]float64, error) {
		fs := make([]float64, len(pop.Genomes))
		for i, g := range pop.Genomes {
			gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
			if err != nil {
				fs[i] = math.NaN() // could not be scored
				continue
			}
			convs := 0
			for _, s := range gr.Steps {
				if s.Node.Op == neat.OpConv2D {
					convs++
				}
			}
			fs[i] = -math.Abs(float64(convs-2)) - float64(gr.Params)/1e5
		}
		return fs, nil
	}

	cfg := neat.DefaultEvolveConfig()
	cfg.PopulationSize, cfg.PAddConv = 20, 0.5
	evo, err := neat.NewEvolution(neat.Input{Channels: 1, Height: 28, Width: 28}, 10, cfg)
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "evolve")
	defer os.RemoveAll(dir)
	for evo.Generation() < 12 {
		st, err := evo.Step(context.Background(), fitness)
		if err != nil {
			panic(err)
		}
		// A checkpoint each generation: a killed run resumes from the last.
		if err := evo.SaveCheckpoint(dir, ""); err != nil {
			panic(err)
		}
		if st.Generation%5 == 0 {
			fmt.Printf("generation %d: best %.5f, %d nodes\n", st.Generation, st.Best, st.BestNodes)
		}
	}
	resumed, _, err := neat.LoadCheckpoint(dir)
	if err != nil {
		panic(err)
	}
	g, f, gen := resumed.Best()
	fmt.Printf("resumed at generation %d; best genome %d (generation %d): fitness %.5f\n", resumed.Generation(), g.ID, gen, f)
	// Output:
	// generation 0: best -1.04010, 3 nodes
	// generation 5: best -0.04046, 4 nodes
	// generation 10: best -0.03549, 4 nodes
	// resumed at generation 12; best genome 189 (generation 9): fitness -0.03549
}
