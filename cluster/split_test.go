package cluster_test

import (
	"testing"

	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
)

// Split covers every index once, in order, in about len/itemGenomes items
// of similar cost: each within one genome's cost of the mean, so that the
// last items do not keep a worker busy while the others wait.
func TestSplit(t *testing.T) {
	pop := neat.Generate(3, 200, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	cost := func(i int) int64 {
		g, err := neat.Compile(pop.Genomes[i], pop.Input, pop.NumClasses)
		if err != nil {
			return 1
		}
		return g.FLOPs + g.WeightBytes(4)
	}
	graphs := evaluator.Compile(pop).Graphs
	var indexes []int
	var total, biggest int64
	for i := range pop.Genomes {
		if i%5 != 0 { // a resumed run's pending genomes: not all of them
			indexes = append(indexes, i)
			total += cost(i)
			biggest = max(biggest, cost(i))
		}
	}
	for _, per := range []int{1, 4, 16, 64} {
		items := cluster.Split(graphs, indexes, per, 0)
		want := (len(indexes) + per - 1) / per
		if len(items) < want*3/4 || len(items) > want {
			t.Errorf("%d genomes per item: %d items, want about %d", per, len(items), want)
		}
		var got []int
		mean := total / int64(len(items))
		for _, it := range items {
			var c int64
			for _, i := range it {
				c += cost(i)
			}
			if c > mean+biggest || (len(items) > 1 && c < mean-biggest) {
				t.Errorf("%d genomes per item: an item costs %d, the mean is %d (one genome ≤ %d)", per, c, mean, biggest)
			}
			got = append(got, it...)
		}
		if len(got) != len(indexes) {
			t.Fatalf("%d genomes per item: %d indexes in the items, want %d", per, len(got), len(indexes))
		}
		for k := range got {
			if got[k] != indexes[k] {
				t.Fatalf("%d genomes per item: index %d is %d, want %d (population order)", per, k, got[k], indexes[k])
			}
		}
	}
	for _, it := range cluster.Split(graphs, indexes, 64, 40_000) {
		var w int64
		for _, i := range it {
			if g, err := neat.Compile(pop.Genomes[i], pop.Input, pop.NumClasses); err == nil {
				w += g.WeightBytes(4)
			}
		}
		if len(it) > 1 && w > 40_000 {
			t.Errorf("an item of %d genomes holds %d weight bytes, over the 40,000 bound", len(it), w)
		}
	}
}
