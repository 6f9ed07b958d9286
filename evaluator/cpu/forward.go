package cpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Forward runs images [lo, hi) through the model, step by step in the
// graph's liveness schedule. The forward's memory on the device is one
// block of the arena, allocated before the first step, of exactly the size
// Footprint predicts; the tiles compute in a reused workspace laid out the
// same way for one tile per part (scratch.go).
func (c *Backend) Forward(ctx context.Context, mm evaluator.Model, dd evaluator.Data, lo, hi int) (evaluator.SliceStats, error) {
	m, ok := mm.(*model)
	if !ok {
		return evaluator.SliceStats{}, fmt.Errorf("cpu: Forward given a %T model of another backend", mm)
	}
	d, ok := dd.(*data)
	if !ok {
		return evaluator.SliceStats{}, fmt.Errorf("cpu: Forward given a %T data set of another backend", dd)
	}
	if lo < 0 || hi > d.ds.N || lo >= hi {
		return evaluator.SliceStats{}, fmt.Errorf("cpu: slice [%d, %d) of %d images", lo, hi, d.ds.N)
	}
	g, n := m.g, hi-lo
	plans := c.plansFor(m, n, d.block == nil)
	block, err := c.dev.Alloc(plans.blockSize)
	if err != nil {
		return evaluator.SliceStats{}, err
	}
	defer c.dev.Free(block)
	p := &plans.ws
	mem := c.scratch.get(p.size)
	defer c.scratch.put(mem)
	if p.split {
		return c.forwardSplit(ctx, m, d, mem, p, lo, hi)
	}
	tiles := make([]evaluator.SliceStats, (n+p.tile-1)/p.tile)
	packs := c.packWeights(m, mem, p, min(n, p.tile))
	var next atomic.Int64
	if len(p.parts) == 1 {
		f := &cpuForward{c: c, m: m, g: g, mem: mem, tile: p.tile, plan: p, packs: packs, part: &p.parts[0]}
		if err := f.run(ctx, d, lo, hi, tiles, &next); err != nil {
			return evaluator.SliceStats{}, err
		}
	} else {
		// The first part runs on this goroutine: one goroutine less to
		// wake per forward, which a small genome's forward notices.
		errs := make([]error, len(p.parts))
		run := func(i int) {
			f := &cpuForward{c: c, m: m, g: g, mem: mem, tile: p.tile, plan: p, packs: packs, part: &p.parts[i]}
			errs[i] = f.run(ctx, d, lo, hi, tiles, &next)
		}
		var wg sync.WaitGroup
		for i := 1; i < len(p.parts); i++ {
			wg.Go(func() { run(i) })
		}
		run(0)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return evaluator.SliceStats{}, err
		}
	}
	var st evaluator.SliceStats
	for _, t := range tiles {
		st.Add(t)
	}
	return st, nil
}

// forwardSplit computes a slice of one tile, [lo, hi), split by images
// among the plan's parts (splitOne), one goroutine each, and reduces the
// gathered logits as the tile's.
func (c *Backend) forwardSplit(ctx context.Context, m *model, d *data, mem []byte, p *forwardPlan, lo, hi int) (evaluator.SliceStats, error) {
	b := 0
	for _, pp := range p.parts {
		b = max(b, pp.n)
	}
	packs := c.packWeights(m, mem, p, b)
	classes := m.g.NumClasses
	logits := make([]float32, (hi-lo)*classes)
	part := func(i int) {
		pp := &p.parts[i]
		f := &cpuForward{c: c, m: m, g: m.g, mem: mem, tile: p.tile, plan: p, packs: packs, part: pp, n: pp.n}
		first := lo + pp.first
		copy(logits[pp.first*classes:], f.computeTile(d, first, first+pp.n))
	}
	if err := ctx.Err(); err != nil {
		return evaluator.SliceStats{}, err
	}
	var wg sync.WaitGroup
	for i := 1; i < len(p.parts); i++ {
		wg.Go(func() { part(i) })
	}
	part(0)
	wg.Wait()
	var st evaluator.SliceStats
	st.Add(evaluator.Reduce(logits, d.ds.Labels[lo:hi], classes))
	return st, nil
}

// packWeights packs the weights of every step that has a packed region in
// the plan, for tiles of b images on the parts' kernel threads, and returns
// the packings (per step).
func (c *Backend) packWeights(m *model, mem []byte, p *forwardPlan, b int) []kernels.Packing {
	packs := make([]kernels.Packing, len(m.g.Steps))
	all := float32s(mem)
	threads := p.parts[0].threads
	for i := range m.g.Steps {
		s := &m.g.Steps[i]
		if p.packed[i] < 0 {
			continue
		}
		dst := all[p.packed[i]/4 : p.packed[i]/4+int64(packedLen(s))]
		raw := m.w[i]
		if s.Node.Op == neat.OpConv2D {
			packs[i] = kernels.PackConv(dst, raw, m.bias[i], convShape(s), b, threads)
		} else {
			packs[i] = kernels.PackDense(dst, raw, s.In.Size(), s.Out.C, b, threads)
		}
	}
	return packs
}

// cpuForward is the state of one part of a forward.
type cpuForward struct {
	c     *Backend
	m     *model
	g     *neat.Graph
	n     int    // images in the tile being computed
	tile  int    // images per tile
	mem   []byte // the forward's workspace
	plan  *forwardPlan
	packs []kernels.Packing // per step, for its packed weights
	part  *partPlan
}

// f32 is a float32 view of the forward's workspace at byte offset off.
func (f *cpuForward) f32(off int64, n int) []float32 {
	return float32s(f.mem)[off/4 : off/4+int64(n)]
}

// u16 is a bfloat16 view of the forward's workspace at byte offset off.
func (f *cpuForward) u16(off int64, n int) []uint16 {
	return uint16s(f.mem)[off/2 : off/2+int64(n)]
}

// run computes tiles of the slice [lo, hi) until none is left: it takes
// the next tile t from the counter shared by the parts and stores its
// statistics in tiles[t], so that a core slowed down by other work takes
// fewer tiles instead of holding up the slice. The part's region holds
// every buffer of a forward of its share of the images, as a GPU's would,
// but the steps run depth-first over one tile at a time, each tile using
// the first part of every buffer. The tile's activations stay in the
// caches between steps, and the rest of the region is never touched (the
// arena commits pages on first touch).
func (f *cpuForward) run(ctx context.Context, d *data, lo, hi int, tiles []evaluator.SliceStats, next *atomic.Int64) error {
	for {
		t := int(next.Add(1)) - 1
		if t >= len(tiles) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		first := lo + t*f.tile
		f.n = min(f.tile, hi-first)
		tiles[t] = f.runTile(d, first, first+f.n)
	}
}

// runTile computes one tile, images [lo, hi) of the data set, f.n of them,
// and reduces its logits.
func (f *cpuForward) runTile(d *data, lo, hi int) evaluator.SliceStats {
	return evaluator.Reduce(f.computeTile(d, lo, hi), d.ds.Labels[lo:hi], f.g.NumClasses)
}

// computeTile computes images [lo, hi) of the data set, f.n of them,
// through every step, and returns their logits (a view of the workspace).
func (f *cpuForward) computeTile(d *data, lo, hi int) []float32 {
	c, g, n := f.c, f.g, f.n
	bf16 := c.dtype == vram.BFloat16
	sz := d.imgSize

	// The input: a view of the cached set, or copied into the workspace.
	var in32 []float32
	var in16 []uint16
	switch {
	case d.block != nil && bf16:
		in16 = c.dev.Uint16s(d.block)[lo*sz : hi*sz]
	case d.block != nil:
		in32 = c.dev.Float32s(d.block)[lo*sz : hi*sz]
	case bf16:
		in16 = f.u16(f.part.input, n*sz)
		kernels.F32ToBF16(in16, d.ds.Images[lo*sz:hi*sz])
	default:
		in32 = f.f32(f.part.input, n*sz)
		copy(in32, d.ds.Images[lo*sz:hi*sz])
	}

	last := len(g.Steps) - 1
	for i := 0; i < len(g.Steps); i++ {
		s := &g.Steps[i]
		var ws []float32
		if f.part.ws[i] >= 0 {
			// A tile's workspace, laid out for a whole tile: a last tile of
			// fewer images needs no more (workspaces grow with the batch).
			ws = f.f32(f.part.ws[i], f.part.wsLen[i])
		}
		if bf16 {
			src := func(j int) []uint16 {
				if s.Inputs[j] < 0 {
					return in16
				}
				return f.u16(f.part.out[s.Inputs[j]], n*s.InShapes[j].Size())
			}
			f.stepBF16(i, src, ws, i == last)
		} else {
			src := func(j int) []float32 {
				if s.Inputs[j] < 0 {
					return in32
				}
				return f.f32(f.part.out[s.Inputs[j]], n*s.InShapes[j].Size())
			}
			if f.poolsNext(i) {
				f.convThenPool(i, src(0), ws)
				i++
				continue
			}
			f.stepF32(i, src, f.f32(f.part.out[i], n*s.Out.Size()), ws)
		}
	}
	return f.f32(f.part.out[last], n*g.NumClasses)
}

// convPoolBytes bounds the output of the convolution that convThenPool
// computes at a time: it stays in the core's L2 for the pool.
const convPoolBytes = 256 << 10

// fuseConvPool lets convThenPool run (tests compare it with the step by
// step order).
var fuseConvPool = true

// poolsNext reports whether step i is a convolution (one input, packed
// weights) whose output only step i+1, a max or average pool, reads, and
// whose input the pool's output does not overlap, or overlaps only behind
// the chunks being read: then convThenPool may run the two a few images at
// a time. Where the pool's output overlaps the
// convolution's workspace (the memory plan gives the pool the space the
// workspace leaves), the convolution's chunks take their workspace from
// their own output buffer, past the chunk (convPoolWS); without room there,
// no.
func (f *cpuForward) poolsNext(i int) bool {
	g := f.g
	if !fuseConvPool || i+1 >= len(g.Steps) {
		return false
	}
	s, sp := &g.Steps[i], &g.Steps[i+1]
	if s.Node.Op != neat.OpConv2D || len(s.Inputs) != 1 || f.plan.packed[i] < 0 ||
		(sp.Node.Op != neat.OpMaxPool2D && sp.Node.Op != neat.OpAvgPool2D) ||
		len(sp.Inputs) != 1 || sp.Inputs[0] != i || f.part.ws[i+1] >= 0 {
		return false
	}
	for j := i + 2; j < len(g.Steps); j++ {
		if slices.Contains(g.Steps[j].Inputs, i) {
			return false
		}
	}
	in := f.part.input
	if s.Inputs[0] >= 0 {
		in = f.part.out[s.Inputs[0]]
	}
	// The pool may write over the input where each chunk's pooled values
	// end before the first image still to be convolved: its output starts
	// no later than the input and is no larger per image.
	if f.poolOverlaps(i, in, 4*int64(f.n*s.In.Size())) && (f.part.out[i+1] > in || sp.Out.Size() > s.In.Size()) {
		return false
	}
	return !f.poolOverlapsWS(i) || f.convPoolWS(i) != nil
}

// poolOverlaps says whether the bytes [off, off+size) of the block (none
// when off < 0) overlap the output of pool step i+1.
func (f *cpuForward) poolOverlaps(i int, off, size int64) bool {
	lo := f.part.out[i+1]
	hi := lo + 4*int64(f.n*f.g.Steps[i+1].Out.Size())
	return off >= 0 && off < hi && lo < off+size
}

// poolOverlapsWS says whether pool step i+1's output overlaps step i's
// workspace.
func (f *cpuForward) poolOverlapsWS(i int) bool {
	return f.poolOverlaps(i, f.part.ws[i], 4*int64(f.part.wsLen[i]))
}

// convPoolWS is the workspace convThenPool's convolution chunks use where
// the pool's output overlaps step i's own: the convolution's output buffer
// past the first chunk, which convThenPool leaves unused; nil if it is too
// short.
func (f *cpuForward) convPoolWS(i int) []float32 {
	s := &f.g.Steps[i]
	n, outSz := f.n, s.Out.Size()
	chunk := convPoolChunk(outSz)
	if n <= chunk {
		return nil
	}
	need := kernels.ConvPackedWorkspace(convShape(s), chunk, f.part.threads)
	tail := f.f32(f.part.out[i], n*outSz)[chunk*outSz:]
	if len(tail) < need {
		return nil
	}
	return tail[:need]
}

// convPoolChunk is the images convThenPool convolves at a time.
func convPoolChunk(outSz int) int { return max(1, convPoolBytes/4/outSz) }

// convThenPool computes convolution step i (input in, workspace ws) and
// the pool step i+1 a few images at a time, each few's convolution output
// written to the start of step i's buffer and pooled while still in the
// cache (the pool of the evolve genomes, 4×4 stride 4 after a 28×28
// convolution of 8 or 16 channels, read a tile's whole convolution output
// back from L3). Every image's values are computed as in the step-by-step
// order, bit for bit: neither kernel mixes images.
func (f *cpuForward) convThenPool(i int, in, ws []float32) {
	s, sp := &f.g.Steps[i], &f.g.Steps[i+1]
	n, inSz, outSz, poolSz := f.n, s.In.Size(), s.Out.Size(), sp.Out.Size()
	chunk := convPoolChunk(outSz)
	if f.poolOverlapsWS(i) {
		ws = f.convPoolWS(i) // the pool's output takes ws: see poolsNext
	}
	out := f.f32(f.part.out[i], n*outSz)
	pooled := f.f32(f.part.out[i+1], n*poolSz)
	packed := f.f32(f.plan.packed[i], packedLen(s))
	bias, act := f.m.bias[i], f.m.own[i]
	for a := 0; a < n; a += chunk {
		m := min(chunk, n-a)
		co, po := out[:m*outSz], pooled[a*poolSz:(a+m)*poolSz]
		kernels.Conv2DPacked(co, in[a*inSz:(a+m)*inSz], packed, f.packs[i], bias, convShape(s), m, act, ws, f.part.threads)
		compute(sp, co, po, nil, nil, nil, m, f.part.threads)
		kernels.Apply(f.m.post[i+1], po)
	}
}

// stepWorkspace is the float32 scratch step i needs in a forward of b
// images on one part: for a tile of them, with kernels on the backend's
// threads; see stepWorkspaceT.
func (c *Backend) stepWorkspace(g *neat.Graph, i, b int) int64 {
	return c.stepWorkspaceT(g, i, min(b, tileImages(g)), c.threads)
}

// stepWorkspaceT is the float32 scratch step i needs for a slice of b
// images, beyond its output, with kernels on the given threads: in float32,
// the merged input (for a node with several inputs) and the kernel's
// workspace; in bfloat16, a tile of converted inputs and outputs, the
// step's weights in float32, and the kernel's workspace for a tile.
func (c *Backend) stepWorkspaceT(g *neat.Graph, i, b, threads int) int64 {
	s := &g.Steps[i]
	if c.dtype != vram.BFloat16 {
		var merged int64
		if len(s.Inputs) > 1 {
			merged = int64(b) * int64(s.In.Size())
		}
		return merged + int64(kernelWorkspace(s, b, threads, true))
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
	return int64(t)*int64(s.In.Size()+maxIn+s.Out.Size()) + int64(w) + int64(kernelWorkspace(s, t, threads, false))
}

func convShape(s *neat.Step) kernels.ConvShape {
	return kernels.ConvShape{
		C: s.In.C, H: s.In.H, W: s.In.W,
		OC: s.Out.C, K: s.Node.Kernel, Stride: s.Node.Stride, Pad: s.Node.Padding,
		OH: s.Out.H, OW: s.Out.W,
	}
}

// kernelWorkspace is the kernel's scratch for step s on up to b images,
// with its weights packed beforehand (packed) or by the call.
func kernelWorkspace(s *neat.Step, b, threads int, packed bool) int {
	switch {
	case s.Node.Op == neat.OpConv2D && packed:
		return kernels.ConvPackedWorkspace(convShape(s), b, threads)
	case s.Node.Op == neat.OpConv2D:
		return kernels.ConvWorkspace(convShape(s), b, threads)
	case s.Node.Op == neat.OpDense && packed:
		return kernels.DensePackedWorkspace(s.In.Size(), s.Out.C, b, threads)
	case s.Node.Op == neat.OpDense:
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
// first for a sum (a concatenation writes every channel). input(j)
// returns input j's values for the same n images.
func merge(s *neat.Step, dst []float32, n int, input func(j int) []float32) {
	if s.Node.Merge != neat.MergeConcat {
		clear(dst)
	}
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
	s, n := &f.g.Steps[i], f.n
	var in []float32
	if len(s.Inputs) > 1 {
		in, scratch = scratch[:n*s.In.Size()], scratch[n*s.In.Size():]
		merge(s, in, n, view)
	} else {
		in = view(0)
	}
	if s.Weight == nil {
		compute(s, in, out, nil, nil, scratch, n, f.part.threads)
		kernels.Apply(f.m.post[i], out)
		return
	}
	bias := f.m.bias[i]
	packed := f.f32(f.plan.packed[i], packedLen(s))
	act := f.m.own[i]
	if s.Node.Op == neat.OpConv2D {
		kernels.Conv2DPacked(out, in, packed, f.packs[i], bias, convShape(s), n, act, scratch, f.part.threads)
	} else {
		kernels.DensePacked(out, in, packed, f.packs[i], bias, n, s.In.Size(), s.Out.C, act, scratch, f.part.threads)
	}
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
			compute(s, in, f.f32(f.part.out[i], n*osz)[lo*osz:(lo+k)*osz], w, bias, kws, k, f.part.threads)
			continue
		}
		o := outT[:k*osz]
		compute(s, in, o, w, bias, kws, k, f.part.threads)
		kernels.F32ToBF16(f.u16(f.part.out[i], n*osz)[lo*osz:(lo+k)*osz], o)
	}
}
