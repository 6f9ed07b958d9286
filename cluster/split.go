package cluster

import "github.com/neateval/neateval/neat"

// Split groups the genomes at indexes into items of similar cost, in
// population order: a genome costs its FLOPs per image plus its weight
// bytes, from its graph in graphs (by population index, as
// evaluator.Compile gives them; nil, an invalid genome, costs 1). There are about len(indexes) /
// itemGenomes items; none holds more than 4·itemGenomes genomes or, unless
// it has one genome, more than itemBytes of weights (≤ 0: no bound).
func Split(graphs []*neat.Graph, indexes []int, itemGenomes int, itemBytes int64) [][]int {
	if len(indexes) == 0 {
		return nil
	}
	itemGenomes = max(itemGenomes, 1)
	costs, bytes := make([]int64, len(indexes)), make([]int64, len(indexes))
	var total int64
	for k, i := range indexes {
		costs[k] = 1
		if g := graphs[i]; g != nil {
			bytes[k] = g.WeightBytes(4)
			costs[k] = max(g.FLOPs+bytes[k], 1)
		}
		total += costs[k]
	}
	n := int64((len(indexes) + itemGenomes - 1) / itemGenomes)
	target := max(total/n, 1)
	var out [][]int
	var cur []int
	var prefix, weight int64
	bucket := int64(0)
	for k, i := range indexes {
		// A genome belongs to the item its cost's midpoint falls in: the
		// items' boundaries are fixed at multiples of total/n, so an item
		// that overshoots does not push the rest (and the last item is not
		// left with the remainder).
		b := min((prefix+costs[k]/2)/target, n-1)
		full := len(cur) > 0 && (b != bucket || len(cur) >= 4*itemGenomes ||
			(itemBytes > 0 && weight+bytes[k] > itemBytes))
		if full {
			out = append(out, cur)
			cur, weight = nil, 0
		}
		bucket = b
		cur = append(cur, i)
		prefix += costs[k]
		weight += bytes[k]
	}
	return append(out, cur)
}
