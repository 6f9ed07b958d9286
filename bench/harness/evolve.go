package harness

import (
	_ "embed"

	"github.com/neateval/neateval/neat"
)

// The evolve preset is what `neateval evolve` breeds: tiny genomes, often
// near-linear (a few convolutions or none, a dense head), far below the
// generated presets. testdata/evolve.json and .safetensors are a sample
// of one run with the shipped config.toml (MNIST, 1×28×28, 10 classes): the
// populations of several generations of the run, written in the
// population format; testdata/README.md says how they were made.
var (
	//go:embed testdata/evolve.json
	evolveJSON []byte
	//go:embed testdata/evolve.safetensors
	evolveWeights []byte
)

// EvolvePopulation is the shipped evolve population, parsed afresh.
func EvolvePopulation() (*neat.Population, error) {
	pop, _, err := neat.Parse(evolveJSON, evolveWeights, "testdata/evolve.json", "testdata/evolve.safetensors")
	return pop, err
}
