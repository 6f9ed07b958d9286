package evaluator

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neateval/neateval/neat"
)

// Compiled is a population compiled for scoring: for each genome, in
// population order, its graph, or the error that keeps it from being
// scored (Graphs[i] nil). A program that needs the graphs before scoring
// (to log the population's size, say) compiles once with Compile and hands
// the result to EvaluateCompiled: compiling checks every weight, and the
// weights of 10,000 small genomes are 550 MB.
type Compiled struct {
	Graphs []*neat.Graph
	Errs   []error
}

// Compile compiles every genome of pop (neat.Compile), on all cores.
func Compile(pop *neat.Population) *Compiled {
	c := &Compiled{Graphs: make([]*neat.Graph, len(pop.Genomes)), Errs: make([]error, len(pop.Genomes))}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(pop.Genomes)/16, 1)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pop.Genomes) {
					return
				}
				c.Graphs[i], c.Errs[i] = neat.Compile(pop.Genomes[i], pop.Input, pop.NumClasses)
				if c.Errs[i] != nil {
					c.Graphs[i] = nil
				}
			}
		})
	}
	wg.Wait()
	return c
}

// Subset is the compiled genomes at the given population indexes, in that
// order: the compiled form of a population of those genomes.
func (c *Compiled) Subset(indexes []int) *Compiled {
	s := &Compiled{Graphs: make([]*neat.Graph, len(indexes)), Errs: make([]error, len(indexes))}
	for k, i := range indexes {
		s.Graphs[k], s.Errs[k] = c.Graphs[i], c.Errs[i]
	}
	return s
}

// Invalid is the number of genomes that cannot be scored.
func (c *Compiled) Invalid() int {
	n := 0
	for _, err := range c.Errs {
		if err != nil {
			n++
		}
	}
	return n
}

// check says whether c is pop's compiled form, as far as its length and
// genome ids tell.
func (c *Compiled) check(pop *neat.Population) error {
	if len(c.Graphs) != len(pop.Genomes) || len(c.Errs) != len(pop.Genomes) {
		return fmt.Errorf("the compiled population has %d genomes, the population %d", len(c.Graphs), len(pop.Genomes))
	}
	for i, g := range c.Graphs {
		if g != nil && g.GenomeID != pop.Genomes[i].ID {
			return fmt.Errorf("compiled genome #%d is genome %d, the population's is %d", i, g.GenomeID, pop.Genomes[i].ID)
		}
	}
	return nil
}
