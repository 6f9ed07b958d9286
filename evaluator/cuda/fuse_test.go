//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

// handNode is a node of a hand-made genome.
func handNode(id int, op neat.Op, inputs ...int) neat.Node {
	return neat.Node{ID: id, Op: op, Inputs: inputs, Padding: neat.PaddingDefault}
}

// handConv is a tanh convolution (a sum of its inputs when several).
func handConv(id, c, k, s, p int, from ...int) neat.Node {
	n := handNode(id, neat.OpConv2D, from...)
	n.OutChannels, n.Kernel, n.Stride, n.Padding, n.Activation = c, k, s, p, neat.ActTanh
	if len(from) > 1 {
		n.Merge = neat.MergeSum
	}
	return n
}

func handPool(id int, op neat.Op, k, s, from int) neat.Node {
	n := handNode(id, op, from)
	n.Kernel, n.Stride = k, s
	return n
}

// handPopulation makes a genome of each list of nodes (numbered 1, 2, …,
// the last one's value the trunk's end), each ending in global average
// pooling and a dense layer, with random parameters.
func handPopulation(t *testing.T, in neat.Input, classes int, trunks [][]neat.Node) *neat.Population {
	rng := rand.New(rand.NewPCG(3, 4))
	tensor := func(scale float64, shape ...int) *neat.Tensor {
		tn := &neat.Tensor{Shape: shape}
		tn.Data = make([]float32, tn.Len())
		for i := range tn.Data {
			tn.Data[i] = float32((rng.Float64()*2 - 1) * scale)
		}
		return tn
	}
	pop := &neat.Population{Input: in, NumClasses: classes}
	for _, nodes := range trunks {
		g := &neat.Genome{ID: int64(len(pop.Genomes)), Params: map[int]*neat.Params{}}
		last := len(nodes) + 2
		gap, d := handNode(last-1, neat.OpGlobalAvgPool, nodes[len(nodes)-1].ID), handNode(last, neat.OpDense, last-1)
		d.OutFeatures = classes
		g.Nodes, g.Output = append(append([]neat.Node{}, nodes...), gap, d), last
		gr, err := neat.InferShapes(g, in, classes)
		if err != nil {
			t.Fatalf("genome %d: %v", g.ID, err)
		}
		for _, s := range gr.Steps {
			switch s.Node.Op {
			case neat.OpConv2D:
				k := s.Node.Kernel
				g.Params[s.Node.ID] = &neat.Params{Weight: tensor(1/math.Sqrt(float64(s.In.C*k*k)), s.Out.C, s.In.C, k, k), Bias: tensor(0.5, s.Out.C)}
			case neat.OpDense:
				g.Params[s.Node.ID] = &neat.Params{Weight: tensor(1/math.Sqrt(float64(s.In.Size())), s.Out.C, s.In.Size()), Bias: tensor(0.5, s.Out.C)}
			}
		}
		pop.Genomes = append(pop.Genomes, g)
	}
	return pop
}

// poolGenomes are genomes whose convolutions end in a pool that the
// schedules fuse: both pools, windows 1 to 4 with strides at and beyond
// them on an odd-sized image (floor mode drops rows and columns), 3 to 40
// channels (the 16-, 32- and 64-row tiles, several row tiles), padding,
// a strided convolution, and a merged (float32) input.
func poolGenomes(t *testing.T, in neat.Input, classes int) *neat.Population {
	var trunks [][]neat.Node
	for _, op := range []neat.Op{neat.OpMaxPool2D, neat.OpAvgPool2D} {
		for _, c := range []int{3, 20, 40} {
			for _, ks := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {2, 3}, {4, 4}} {
				trunks = append(trunks, []neat.Node{handConv(1, c, 3, 1, neat.PaddingDefault, 0), handPool(2, op, ks[0], ks[1], 1)})
			}
		}
		// Stride and padding of the convolution; a merged input.
		trunks = append(trunks, []neat.Node{handConv(1, 5, 2, 2, 1, 0), handPool(2, op, 2, 2, 1)},
			[]neat.Node{handConv(1, 4, 3, 1, neat.PaddingDefault, 0), handConv(2, 6, 1, 1, 0, 1, 0), handPool(3, op, 2, 2, 2)})
	}
	return handPopulation(t, in, classes, trunks)
}

// TestFusedPools scores genomes whose pools are fused into their
// convolutions (sched.FusedPools) with the fusion on and off: the stats
// are the same bit for bit in float32, bfloat16 and TF32 (the fused store
// rounds each pixel to the storage type and reduces the window in the
// pool kernel's order), and float32 agrees with the CPU backend to the
// conformance tolerance.
func TestFusedPools(t *testing.T) {
	in := neat.Input{Channels: 2, Height: 11, Width: 13}
	pop := poolGenomes(t, in, 4)
	fused := 0
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, in, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range sched.FusedPools(gr) {
			if j >= 0 {
				fused++
			}
		}
	}
	if fused != len(pop.Genomes) {
		t.Fatalf("%d fused pools in %d genomes: want one each", fused, len(pop.Genomes))
	}
	ds := datasets.Synthetic(images(60), in.Channels, in.Height, in.Width, 4, 31)
	o := evaluator.Options{EvalBatchSize: 32, Parallel: 2, CacheData: true}
	for _, tc := range []struct {
		dt   vram.DType
		prec string
	}{{vram.Float32, ""}, {vram.BFloat16, ""}, {vram.Float32, "tf32"}} {
		t.Run(fmt.Sprintf("%v-%s", tc.dt, tc.prec), func(t *testing.T) {
			bo := evaluator.BackendOptions{DType: tc.dt, ComputePrecision: tc.prec, Parallel: 2}
			on, off := newT(t, bo).(*Backend), newT(t, bo).(*Backend)
			on.popWork, off.popWork = 0, 0 // the per-layer path
			off.unfused = true
			got := evaltest.Evaluate(t, on, ds, pop, staging.DefaultConfig(), o)
			want := evaltest.Evaluate(t, off, ds, pop, staging.DefaultConfig(), o)
			for i := range want {
				w, g := want[i], got[i]
				if w.Err != nil || g.Err != nil || g.Images != w.Images ||
					math.Float64bits(g.Accuracy) != math.Float64bits(w.Accuracy) || math.Float64bits(g.Loss) != math.Float64bits(w.Loss) {
					t.Errorf("genome %d: fused accuracy %v loss %v (%v), unfused %v %v (%v)", w.GenomeID, g.Accuracy, g.Loss, g.Err, w.Accuracy, w.Loss, w.Err)
				}
			}
			if tc.dt == vram.Float32 && tc.prec == "" {
				evaltest.Same(t, evaltest.Evaluate(t, newCPU(t, tc.dt), ds, pop, staging.DefaultConfig(), o), got)
			}
		})
	}
}

// largeFrames are two genomes whose one 28×28 image needs more than a
// default block's 48 KiB of shared memory on the population path (about
// 80 KiB), their images, and the most shared memory a block of theirs
// needs.
func largeFrames(t *testing.T) (*neat.Population, *datasets.Dataset, int64) {
	var need int64
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := handPopulation(t, in, 10, [][]neat.Node{
		{handConv(1, 16, 3, 1, neat.PaddingDefault, 0), handPool(2, neat.OpMaxPool2D, 2, 2, 1), handConv(3, 8, 3, 1, neat.PaddingDefault, 2)},
		{handConv(1, 24, 3, 1, neat.PaddingDefault, 0), handConv(2, 8, 3, 2, 1, 1)},
	})
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		if p := sched.BuildPop(gr, vram.Float32, sched.PopSmemH200); p == nil || p.Frame*4 <= 48<<10 {
			t.Fatalf("genome %d: population program %+v, want a frame beyond 48 KiB", g.ID, p)
		} else {
			need = max(need, p.Shared())
		}
	}
	return pop, datasets.Synthetic(images(120), 1, 28, 28, 10, 41), need
}

// sameStats fails unless got is want bit for bit, genome by genome.
func sameStats(t *testing.T, want, got []evaluator.Result) {
	t.Helper()
	for i := range want {
		w, g := want[i], got[i]
		if w.Err != nil || g.Err != nil || g.Images != w.Images ||
			math.Float64bits(g.Accuracy) != math.Float64bits(w.Accuracy) || math.Float64bits(g.Loss) != math.Float64bits(w.Loss) {
			t.Errorf("genome %d: accuracy %v loss %v (%v), want %v %v (%v)", w.GenomeID, g.Accuracy, g.Loss, g.Err, w.Accuracy, w.Loss, w.Err)
		}
	}
}

// TestPopLargeFrames: genomes whose one image needs more than 48 KiB of
// shared memory take the population path (dynamic shared memory raised to
// the device's opt-in, Info.PopShared), and their stats are the per-layer
// path's bit for bit.
func TestPopLargeFrames(t *testing.T) {
	pop, ds, need := largeFrames(t)
	o := evaluator.Options{EvalBatchSize: 10, Parallel: 4, CacheData: true}
	on, off := newT(t, evaluator.BackendOptions{Parallel: 4}).(*Backend), newT(t, evaluator.BackendOptions{Parallel: 4}).(*Backend)
	on.popWork, off.popWork = math.MaxInt64, 0
	if int64(on.Info().PopShared) < need {
		t.Skipf("the device lets a block have %d bytes of shared memory, these genomes need %d", on.Info().PopShared, need)
	}
	got := evaltest.Evaluate(t, on, ds, pop, staging.DefaultConfig(), o)
	want := evaltest.Evaluate(t, off, ds, pop, staging.DefaultConfig(), o)
	if on.popForwards.Load() < int64(len(pop.Genomes)) {
		t.Errorf("%d forwards on the population path", on.popForwards.Load())
	}
	sameStats(t, want, got)
}
