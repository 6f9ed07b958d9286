package cpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// BenchmarkEvolveForward is the forward of two evolve genomes (the
// harness's population: conv 8 → 4×4 max pool → dense) on 200 images on one thread, as `neateval evolve` scores them, with the
// convolution and the pool run a few images at a time (fuse=true) or step
// by step.
//
//	go test -run '^$' -bench EvolveForward ./evaluator/cpu/
func BenchmarkEvolveForward(b *testing.B) {
	pop, err := neat.Load("../../bench/harness/testdata/evolve.json")
	if err != nil {
		b.Skip(err)
	}
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	ds := datasets.Synthetic(200, 1, 28, 28, 10, 1)
	for gi, gen := range pop.Genomes[:2] {
		g, err := neat.Compile(gen, in, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, fuse := range []bool{false, true} {
			b.Run(fmt.Sprintf("genome%d/fuse=%v", gi, fuse), func(b *testing.B) {
				prev := fuseConvPool
				fuseConvPool = fuse
				defer func() { fuseConvPool = prev }()
				c, err := New(evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 1 << 30, Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				data, err := c.PrepareData(ds, true)
				if err != nil {
					b.Fatal(err)
				}
				defer data.Release()
				m, err := c.Load(g)
				if err != nil {
					b.Fatal(err)
				}
				defer m.Unload()
				for b.Loop() {
					if _, err := c.Forward(context.Background(), m, data, 0, ds.N); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
