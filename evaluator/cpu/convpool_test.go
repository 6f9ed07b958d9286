package cpu

import (
	"context"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// TestConvThenPoolSameResults: a convolution and the pool after it run a
// few images at a time give the step-by-step order's statistics exactly
// (the loss to the last bit), on genomes that have such a pair.
func TestConvThenPoolSameResults(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	ds := datasets.Synthetic(150, 1, 28, 28, 10, 5)
	pairs := 0
	for seed := range int64(4) {
		pop := neat.Generate(seed, 6, in, 10, neat.DefaultGenConfig())
		for _, gen := range pop.Genomes {
			g, err := neat.Compile(gen, in, 10)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(g.Steps); i++ {
				sp := &g.Steps[i+1]
				if g.Steps[i].Node.Op == neat.OpConv2D && (sp.Node.Op == neat.OpMaxPool2D || sp.Node.Op == neat.OpAvgPool2D) &&
					len(sp.Inputs) == 1 && sp.Inputs[0] == i {
					pairs++
				}
			}
			var st [2]evaluator.SliceStats
			for k, fuse := range []bool{false, true} {
				prev := fuseConvPool
				fuseConvPool = fuse
				st[k] = forwardOnce(t, g, ds)
				fuseConvPool = prev
			}
			if !st[0].Equal(st[1]) {
				t.Errorf("seed %d genome %d: %+v, step by step %+v", seed, g.GenomeID, st[1], st[0])
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no genome with a convolution then a pool")
	}
	t.Logf("%d convolution-pool pairs", pairs)
}

// forwardOnce runs g's forward over all of ds on a fresh float32 backend
// of one thread, the data set cached, and returns its statistics.
func forwardOnce(t *testing.T, g *neat.Graph, ds *datasets.Dataset) evaluator.SliceStats {
	t.Helper()
	c, err := New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 256 << 20, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data, err := c.PrepareData(ds, true)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Release()
	m, err := c.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unload()
	st, err := c.Forward(context.Background(), m, data, 0, ds.N)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
