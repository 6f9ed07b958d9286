package evaluator

import (
	"context"
	"fmt"

	"github.com/neateval/neateval/evaluator/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Forward runs images [lo, hi) through the model, step by step in the
// graph's liveness schedule: each step's output (and workspace) is allocated
// from the arena before it runs, and values are freed after their last
// reader, exactly as Footprint predicts.
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
	f := &cpuForward{c: c, m: m, g: m.g, n: hi - lo, threads: c.threads}
	defer f.freeAll()
	stats, err := f.run(ctx, d, lo, hi)
	if err != nil {
		return SliceStats{}, err
	}
	return stats, nil
}

// cpuForward is the state of one forward: the blocks it holds, so that every
// exit path frees them.
type cpuForward struct {
	c       *CPU
	m       *cpuModel
	g       *neat.Graph
	n       int // images in the slice
	threads int
	held    []*vram.Block
}

func (f *cpuForward) alloc(bytes int64) (*vram.Block, error) {
	b, err := f.c.dev.Alloc(max(bytes, 1))
	if err != nil {
		return nil, err
	}
	f.held = append(f.held, b)
	return b, nil
}

func (f *cpuForward) free(b *vram.Block) {
	for i, h := range f.held {
		if h == b {
			f.held[i] = f.held[len(f.held)-1]
			f.held = f.held[:len(f.held)-1]
			f.c.dev.Free(b)
			return
		}
	}
}

func (f *cpuForward) freeAll() {
	for _, b := range f.held {
		f.c.dev.Free(b)
	}
	f.held = nil
}

func (f *cpuForward) run(ctx context.Context, d *cpuData, lo, hi int) (SliceStats, error) {
	c, g, n := f.c, f.g, f.n
	bf16 := c.dtype == vram.BFloat16
	elem := int64(c.dtype.Size())

	// The input slice: a view of the cached set, or a block of its own.
	var input *vram.Block
	inOff := 0
	if d.block != nil {
		input, inOff = d.block, lo*d.imgSize
	} else {
		b, err := f.alloc(int64(n*d.imgSize) * elem)
		if err != nil {
			return SliceStats{}, err
		}
		c.storeValues(b, 0, d.ds.Images[lo*d.imgSize:hi*d.imgSize])
		input = b
	}

	vals := make([]*vram.Block, len(g.Steps))
	last := len(g.Steps) - 1
	for i := range g.Steps {
		if err := ctx.Err(); err != nil {
			return SliceStats{}, err
		}
		s := &g.Steps[i]
		wsBytes := c.stepWorkspace(g, i, n) * 4
		var ws *vram.Block
		if wsBytes > 0 {
			b, err := f.alloc(wsBytes)
			if err != nil {
				return SliceStats{}, err
			}
			ws = b
		}
		outElem := elem
		if i == last {
			outElem = 4 // logits stay float32 for the reduction
		}
		out, err := f.alloc(int64(n*s.Out.Size()) * outElem)
		if err != nil {
			return SliceStats{}, err
		}
		vals[i] = out
		src := func(j int) (*vram.Block, int) {
			if s.Inputs[j] < 0 {
				return input, inOff
			}
			return vals[s.Inputs[j]], 0
		}
		if bf16 {
			f.stepBF16(i, src, out, ws, i == last)
		} else {
			f.stepF32(i, src, out, ws)
		}
		if ws != nil {
			f.free(ws)
		}
		for _, r := range s.Release {
			f.free(vals[r])
			vals[r] = nil
		}
	}
	logits := c.dev.Float32s(vals[last])[:n*g.NumClasses]
	return reduce(logits, d.ds.Labels[lo:hi], g.NumClasses), nil
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

func (f *cpuForward) stepF32(i int, src func(j int) (*vram.Block, int), out, ws *vram.Block) {
	dev, s, n := f.c.dev, &f.g.Steps[i], f.n
	view := func(j int) []float32 {
		b, off := src(j)
		return dev.Float32s(b)[off : off+n*s.InShapes[j].Size()]
	}
	var scratch []float32
	if ws != nil {
		scratch = dev.Float32s(ws)
	}
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
	compute(s, in, dev.Float32s(out)[:n*s.Out.Size()], w, bias, scratch, n, f.threads)
}

// stepBF16 computes step i tile by tile: inputs converted from bfloat16,
// computed in float32, the output rounded back to bfloat16 (or kept in
// float32 for the logits).
func (f *cpuForward) stepBF16(i int, src func(j int) (*vram.Block, int), out, ws *vram.Block, logits bool) {
	dev, s, n := f.c.dev, &f.g.Steps[i], f.n
	t := min(bf16Tile, n)
	scratch := dev.Float32s(ws)
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
	for lo := 0; lo < n; lo += t {
		k := min(t, n-lo)
		load := func(j int, dst []float32) []float32 {
			b, off := src(j)
			sz := s.InShapes[j].Size()
			dst = dst[:k*sz]
			kernels.BF16ToF32(dst, dev.Uint16s(b)[off+lo*sz:off+(lo+k)*sz])
			return dst
		}
		in := inT[:k*s.In.Size()]
		if len(s.Inputs) > 1 {
			merge(s, in, k, func(j int) []float32 { return load(j, tmp) })
		} else {
			load(0, in)
		}
		if logits {
			compute(s, in, dev.Float32s(out)[lo*s.Out.Size():(lo+k)*s.Out.Size()], w, bias, kws, k, f.threads)
			continue
		}
		o := outT[:k*s.Out.Size()]
		compute(s, in, o, w, bias, kws, k, f.threads)
		kernels.F32ToBF16(dev.Uint16s(out)[lo*s.Out.Size():(lo+k)*s.Out.Size()], o)
	}
}
