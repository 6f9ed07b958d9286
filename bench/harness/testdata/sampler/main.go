// Command sampler merges the populations of several checkpoint generations
// of one evolve run into one population: every other genome of each (the
// 1st, 3rd, ...), each genome once (an elite carried to the next
// generation keeps its id), in generation order.
package main

import (
	"fmt"
	"os"

	"github.com/neateval/neateval/neat"
)

func main() {
	out := os.Args[1]
	var all *neat.Population
	seen := map[int64]bool{}
	for _, p := range os.Args[2:] {
		pop, err := neat.Load(p)
		if err != nil {
			panic(err)
		}
		if all == nil {
			all = &neat.Population{Input: pop.Input, NumClasses: pop.NumClasses}
		}
		n := 0
		for i, g := range pop.Genomes {
			if i%2 == 0 && !seen[g.ID] {
				seen[g.ID] = true
				all.Genomes = append(all.Genomes, g)
				n++
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %d genomes, %d new\n", p, len(pop.Genomes), n)
	}
	if err := neat.Save(all, out, "evolve.safetensors"); err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "%d genomes\n", len(all.Genomes))
}
