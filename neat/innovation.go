package neat

// innovations hands out node ids, NEAT's historical markings, for one
// experiment. A node that splits the edge src → dst gets the same id in
// every genome that makes that split in the same generation, as NEAT gives
// the same innovation number to the same structural mutation; so two
// genomes that grew the same node independently match at crossover and
// count as alike in the compatibility distance.
//
// Only next outlives a generation; the table of this generation's splits
// is cleared by newGeneration, so a checkpoint between generations needs
// next alone.
type innovations struct {
	next   int
	splits map[[2]int]int
}

// newGeneration forgets the splits of the last generation.
func (t *innovations) newGeneration() { clear(t.splits) }

// fresh returns an id no node has had.
func (t *innovations) fresh() int {
	id := t.next
	t.next++
	return id
}

// split returns the id of the node that splits edge src → dst in this
// generation.
func (t *innovations) split(src, dst int) int {
	if t.splits == nil {
		t.splits = map[[2]int]int{}
	}
	k := [2]int{src, dst}
	if id, ok := t.splits[k]; ok {
		return id
	}
	id := t.fresh()
	t.splits[k] = id
	return id
}
