package cluster

import "github.com/neateval/neateval/neat"

// Split groups the genomes at indexes of pop into items of similar cost, in
// population order: a genome costs its FLOPs per image plus its weight
// bytes (an invalid genome costs 1). There are about len(indexes) /
// itemGenomes items; none holds more than 4·itemGenomes genomes or, unless
// it has one genome, more than itemBytes of weights (≤ 0: no bound).
func Split(pop *neat.Population, indexes []int, itemGenomes int, itemBytes int64) [][]int {
	if len(indexes) == 0 {
		return nil
	}
	itemGenomes = max(itemGenomes, 1)
	costs, bytes := make([]int64, len(indexes)), make([]int64, len(indexes))
	var total int64
	for k, i := range indexes {
		costs[k] = 1
		if g, err := neat.Compile(pop.Genomes[i], pop.Input, pop.NumClasses); err == nil {
			bytes[k] = g.WeightBytes(4)
			costs[k] = max(g.FLOPs+bytes[k], 1)
		}
		total += costs[k]
	}
	n := int64((len(indexes) + itemGenomes - 1) / itemGenomes)
	target := max(total/n, 1)
	var out [][]int
	var cur []int
	var cost, weight int64
	for k, i := range indexes {
		full := len(cur) > 0 && (cost >= target || len(cur) >= 4*itemGenomes ||
			(itemBytes > 0 && weight+bytes[k] > itemBytes))
		if full {
			out = append(out, cur)
			cur, cost, weight = nil, 0, 0
		}
		cur = append(cur, i)
		cost += costs[k]
		weight += bytes[k]
	}
	return append(out, cur)
}
