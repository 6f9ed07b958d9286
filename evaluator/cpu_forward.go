package evaluator

import (
	"context"
	"fmt"

	"github.com/neateval/neateval/evaluator/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Forward runs images [lo, hi) through the model, step by step in the
// graph's liveness schedule. All of the forward's activations and workspace
// live in one block of the arena, allocated before the first step and laid
// out by memPlan; its size is exactly what Footprint predicts.
func (c *CPU) Forward(ctx context.Context, mm Model, dd Data, lo, hi int) (SliceStats, error) {
	m, ok := mm.(*cpuModel)
	if !ok {
		return SliceStats{}, fmt.Errorf("evaluator: cpu backend given a %T model", mm)
	}
	d, ok := dd.(*cpuData)
	if !ok {
		return SliceStats{}, fmt.Errorf("evaluator: cpu backend given a %T data set", dd)
	}
	if lo < 0 || hi > d.ds.N || lo >= hi {
		return SliceStats{}, fmt.Errorf("evaluator: slice [%d, %d) of %d images", lo, hi, d.ds.N)
	}
	g, n := m.g, hi-lo
	p := c.plan(g, n, d.block == nil)
	block, err := c.dev.Alloc(p.size)
	if err != nil {
		return SliceStats{}, err
	}
	defer c.dev.Free(block)
	f := &cpuForward{c: c, m: m, g: g, threads: c.threads, block: block, plan: p}
	return f.run(ctx, d, lo, hi)
}

// forwardPlan is the layout of one forward's block: byte offsets of the
// streamed input (−1 when the data set is cached on the device), of each
// step's output and of each step's workspace (−1 for none).
type forwardPlan struct {
	size  int64
	input int64
	out   []int64
	ws    []int64
}

// plan lays out the buffers of a forward of n images: the streamed input
// for the whole forward, each step's output from its step to its last
// reader (the logits to the end), each step's workspace during its step.
func (c *CPU) plan(g *neat.Graph, n int, streamed bool) forwardPlan {
	last := len(g.Steps) - 1
	elem := int64(c.dtype.Size())
	var bufs []interval
	p := forwardPlan{input: -1, out: make([]int64, len(g.Steps)), ws: make([]int64, len(g.Steps))}
	if streamed {
		bufs = append(bufs, interval{first: 0, last: last, size: int64(n*g.Input.Size()) * elem})
	}
	dies := make([]int, len(g.Steps))
	for i := range dies {
		dies[i] = last
	}
	for i := range g.Steps {
		for _, r := range g.Steps[i].Release {
			dies[r] = i
		}
	}
	outAt := len(bufs)
	for i := range g.Steps {
		e := elem
		if i == last {
			e = 4 // logits stay float32 for the reduction
		}
		bufs = append(bufs, interval{first: i, last: dies[i], size: int64(n*g.Steps[i].Out.Size()) * e})
	}
	wsAt := len(bufs)
	for i := range g.Steps {
		// Workspace serves one tile at a time.
		bufs = append(bufs, interval{first: i, last: i, size: c.stepWorkspace(g, i, min(n, cpuTile)) * 4})
	}
	p.size = max(memPlan(bufs), 1)
	if streamed {
		p.input = bufs[0].off
	}
	for i := range g.Steps {
		p.out[i] = bufs[outAt+i].off
		p.ws[i] = -1
		if bufs[wsAt+i].size > 0 {
			p.ws[i] = bufs[wsAt+i].off
		}
	}
	return p
}

// cpuForward is the state of one forward.
type cpuForward struct {
	c       *CPU
	m       *cpuModel
	g       *neat.Graph
	n       int // images in the tile being computed
	threads int
	block   *vram.Block
	plan    forwardPlan
}

// f32 is a float32 view of the forward's block at byte offset off.
func (f *cpuForward) f32(off int64, n int) []float32 {
	return f.c.dev.Float32s(f.block)[off/4 : off/4+int64(n)]
}

// u16 is a bfloat16 view of the forward's block at byte offset off.
func (f *cpuForward) u16(off int64, n int) []uint16 {
	return f.c.dev.Uint16s(f.block)[off/2 : off/2+int64(n)]
}

// run computes the slice tile by tile: the block holds every buffer of a
// forward of the whole slice, as a GPU's would, but the steps run
// depth-first over cpuTile images at a time, each tile using the first
// part of every buffer. The tile's activations stay in the caches between
// steps, and the rest of the block is never touched (the arena commits
// pages on first touch).
func (f *cpuForward) run(ctx context.Context, d *cpuData, lo, hi int) (SliceStats, error) {
	var st SliceStats
	for t := lo; t < hi; t += cpuTile {
		if err := ctx.Err(); err != nil {
			return SliceStats{}, err
		}
		f.n = min(cpuTile, hi-t)
		st.Add(f.tile(d, t, t+f.n))
	}
	return st, nil
}

// cpuTile is how many images go through all the steps together.
const cpuTile = 256

// tile computes images [lo, hi) of the data set, f.n of them.
func (f *cpuForward) tile(d *cpuData, lo, hi int) SliceStats {
	c, g, n := f.c, f.g, f.n
	bf16 := c.dtype == vram.BFloat16
	sz := d.imgSize

	// The input: a view of the cached set, or copied into the block.
	var in32 []float32
	var in16 []uint16
	switch {
	case d.block != nil && bf16:
		in16 = c.dev.Uint16s(d.block)[lo*sz : hi*sz]
	case d.block != nil:
		in32 = c.dev.Float32s(d.block)[lo*sz : hi*sz]
	case bf16:
		in16 = f.u16(f.plan.input, n*sz)
		kernels.F32ToBF16(in16, d.ds.Images[lo*sz:hi*sz])
	default:
		in32 = f.f32(f.plan.input, n*sz)
		copy(in32, d.ds.Images[lo*sz:hi*sz])
	}

	last := len(g.Steps) - 1
	for i := range g.Steps {
		s := &g.Steps[i]
		var ws []float32
		if f.plan.ws[i] >= 0 {
			ws = f.f32(f.plan.ws[i], int(c.stepWorkspace(g, i, n)))
		}
		if bf16 {
			src := func(j int) []uint16 {
				if s.Inputs[j] < 0 {
					return in16
				}
				return f.u16(f.plan.out[s.Inputs[j]], n*s.InShapes[j].Size())
			}
			f.stepBF16(i, src, ws, i == last)
		} else {
			src := func(j int) []float32 {
				if s.Inputs[j] < 0 {
					return in32
				}
				return f.f32(f.plan.out[s.Inputs[j]], n*s.InShapes[j].Size())
			}
			f.stepF32(i, src, f.f32(f.plan.out[i], n*s.Out.Size()), ws)
		}
	}
	logits := f.f32(f.plan.out[last], n*g.NumClasses)
	return reduce(logits, d.ds.Labels[lo:hi], g.NumClasses)
}

// stepWorkspace is the float32 scratch step i needs for a slice of b images,
// beyond its output: in float32, the merged input (for a node with several
// inputs) and the kernel's workspace; in bfloat16, a tile of converted
// inputs and outputs, the step's weights in float32, and the kernel's
// workspace for a tile.
func (c *CPU) stepWorkspace(g *neat.Graph, i, b int) int64 {
	s := &g.Steps[i]
	if c.dtype != vram.BFloat16 {
		var merged int64
		if len(s.Inputs) > 1 {
			merged = int64(b) * int64(s.In.Size())
		}
		return merged + int64(kernelWorkspace(s, b, c.threads))
	}
	t := min(bf16Tile, b)
	maxIn := 0
	if len(s.Inputs) > 1 {
		for _, sh := range s.InShapes {
			maxIn = max(maxIn, sh.Size())
		}
	}
	var w int
	if s.Weight != nil {
		w = len(s.Weight.Data) + len(s.Bias.Data)
	}
	return int64(t)*int64(s.In.Size()+maxIn+s.Out.Size()) + int64(w) + int64(kernelWorkspace(s, t, c.threads))
}

func convShape(s *neat.Step) kernels.ConvShape {
	return kernels.ConvShape{
		C: s.In.C, H: s.In.H, W: s.In.W,
		OC: s.Out.C, K: s.Node.Kernel, Stride: s.Node.Stride, Pad: s.Node.Padding,
		OH: s.Out.H, OW: s.Out.W,
	}
}

func kernelWorkspace(s *neat.Step, b, threads int) int {
	switch s.Node.Op {
	case neat.OpConv2D:
		return kernels.ConvWorkspace(convShape(s), b, threads)
	case neat.OpDense:
		return kernels.DenseWorkspace(s.In.Size(), s.Out.C, b, threads)
	}
	return 0
}

var activations = map[neat.Activation]kernels.Act{
	neat.ActIdentity:  kernels.Identity,
	neat.ActReLU:      kernels.ReLU,
	neat.ActLeakyReLU: kernels.LeakyReLU,
	neat.ActTanh:      kernels.Tanh,
	neat.ActSigmoid:   kernels.Sigmoid,
	neat.ActGELU:      kernels.GELU,
}

// compute runs step s on n images: in is its (merged) input, out its output,
// w and bias its weights, kws the kernel's workspace.
func compute(s *neat.Step, in, out, w, bias, kws []float32, n, threads int) {
	switch s.Node.Op {
	case neat.OpConv2D:
		kernels.Conv2D(out, in, w, bias, convShape(s), n, activations[s.Node.Activation], kws, threads)
	case neat.OpDense:
		kernels.Dense(out, in, w, bias, n, s.In.Size(), s.Out.C, activations[s.Node.Activation], kws, threads)
	case neat.OpMaxPool2D:
		kernels.MaxPool2D(out, in, n, s.In.C, s.In.H, s.In.W, s.Node.Kernel, s.Node.Stride, s.Out.H, s.Out.W)
	case neat.OpAvgPool2D:
		kernels.AvgPool2D(out, in, n, s.In.C, s.In.H, s.In.W, s.Node.Kernel, s.Node.Stride, s.Out.H, s.Out.W)
	case neat.OpGlobalAvgPool:
		kernels.GlobalAvgPool(out, in, n, s.In.C, s.In.H*s.In.W)
	}
}

// merge combines the step's inputs into dst (n images of s.In), zeroed
// first. input(j) returns input j's values for the same n images.
func merge(s *neat.Step, dst []float32, n int, input func(j int) []float32) {
	clear(dst)
	hw := s.In.H * s.In.W
	off := 0
	for j, sh := range s.InShapes {
		src := input(j)
		if s.Node.Merge == neat.MergeConcat {
			kernels.CopyChannels(dst, s.In.C, off, src, sh.C, n, hw)
			off += sh.C
		} else {
			kernels.SumMerge(dst, s.In.C, src, sh.C, n, hw)
		}
	}
}

func (f *cpuForward) stepF32(i int, view func(j int) []float32, out, scratch []float32) {
	dev, s, n := f.c.dev, &f.g.Steps[i], f.n
	var in []float32
	if len(s.Inputs) > 1 {
		in, scratch = scratch[:n*s.In.Size()], scratch[n*s.In.Size():]
		merge(s, in, n, view)
	} else {
		in = view(0)
	}
	var w, bias []float32
	if s.Weight != nil {
		all := dev.Float32s(f.m.block)
		w = all[f.m.wOff[i] : f.m.wOff[i]+len(s.Weight.Data)]
		bias = all[f.m.bOff[i] : f.m.bOff[i]+len(s.Bias.Data)]
	}
	compute(s, in, out, w, bias, scratch, n, f.threads)
}

// stepBF16 computes step i tile by tile: inputs converted from bfloat16,
// computed in float32, the output rounded back to bfloat16 (or kept in
// float32 for the logits).
func (f *cpuForward) stepBF16(i int, src func(j int) []uint16, scratch []float32, logits bool) {
	dev, s, n := f.c.dev, &f.g.Steps[i], f.n
	t := min(bf16Tile, n)
	take := func(k int) []float32 { v := scratch[:k]; scratch = scratch[k:]; return v }
	inT := take(t * s.In.Size())
	var tmp []float32
	if len(s.Inputs) > 1 {
		maxIn := 0
		for _, sh := range s.InShapes {
			maxIn = max(maxIn, sh.Size())
		}
		tmp = take(t * maxIn)
	}
	outT := take(t * s.Out.Size())
	var w, bias []float32
	if s.Weight != nil {
		w = take(len(s.Weight.Data))
		bias = take(len(s.Bias.Data))
		all := dev.Uint16s(f.m.block)
		kernels.BF16ToF32(w, all[f.m.wOff[i]:f.m.wOff[i]+len(w)])
		kernels.BF16ToF32(bias, all[f.m.bOff[i]:f.m.bOff[i]+len(bias)])
	}
	kws := scratch
	osz := s.Out.Size()
	for lo := 0; lo < n; lo += t {
		k := min(t, n-lo)
		load := func(j int, dst []float32) []float32 {
			sz := s.InShapes[j].Size()
			dst = dst[:k*sz]
			kernels.BF16ToF32(dst, src(j)[lo*sz:(lo+k)*sz])
			return dst
		}
		in := inT[:k*s.In.Size()]
		if len(s.Inputs) > 1 {
			merge(s, in, k, func(j int) []float32 { return load(j, tmp) })
		} else {
			load(0, in)
		}
		if logits {
			compute(s, in, f.f32(f.plan.out[i], n*osz)[lo*osz:(lo+k)*osz], w, bias, kws, k, f.threads)
			continue
		}
		o := outT[:k*osz]
		compute(s, in, o, w, bias, kws, k, f.threads)
		kernels.F32ToBF16(f.u16(f.plan.out[i], n*osz)[lo*osz:(lo+k)*osz], o)
	}
}
