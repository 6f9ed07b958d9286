package sched

import (
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// layout is WeightLayout's result, and the products' precision.
type layout struct {
	wOff, bOff []int64
	prec       Precision
}

// builder lists the launches of a forward, step by step.
type builder struct {
	g     *neat.Graph
	dt    vram.DType
	n     int
	lay   *layout
	vals  []int64 // arena offset of each step's output (−1: none, a fused convolution's)
	fused []int   // FusedPools
	out   []Launch
}

// The activation codes of the kernels (kernels.Act's numbering).
var actCode = map[neat.Activation]int64{
	neat.ActIdentity:  0,
	neat.ActReLU:      1,
	neat.ActLeakyReLU: 2,
	neat.ActTanh:      3,
	neat.ActSigmoid:   4,
	neat.ActGELU:      5,
}

// GEMMColumns is the number of output columns (pixels of all images, or
// images for a dense node) one block of the matrix-product kernels
// computes.
const GEMMColumns = 128

// maxGrid1 caps the blocks of the grid-stride kernels; maxGridY is CUDA's
// limit on a grid's height.
const (
	maxGrid1 = 1 << 20
	maxGridY = 65535
	maxGridX = 1<<31 - 1
)

func lit(v int64) Arg          { return Arg{Base: Lit, V: v} }
func at(b Base, off int64) Arg { return Arg{Base: b, V: off} }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// grid1 is the grid of a grid-stride kernel over total elements.
func grid1(total int64) [2]uint32 {
	return [2]uint32{uint32(min(max(ceilDiv(total, Threads), 1), maxGrid1)), 1}
}

func (b *builder) add(k string, grid [2]uint32, args ...Arg) {
	l := Launch{Kernel: kernel(k), Grid: grid, NArgs: len(args)}
	copy(l.Args[:], args)
	b.out = append(b.out, l)
}

// src is step i's input j: where it is and its storage type.
func (b *builder) src(i, j int) (Arg, byte) {
	s := &b.g.Steps[i]
	if k := s.Inputs[j]; k >= 0 {
		return at(Arena, b.vals[k]), elemChar(b.dt)
	}
	return at(Input, 0), elemChar(b.dt)
}

// step lists the launches of step i: the merge of its inputs into merged
// (float32, when it has several), then its op.
func (b *builder) step(i int, merged int64, last bool) {
	s := &b.g.Steps[i]
	n := int64(b.n)
	in, it := b.src(i, 0)
	if len(s.Inputs) > 1 {
		hw := int64(s.In.H) * int64(s.In.W)
		dstC := int64(s.In.C)
		off := int64(0)
		for j, sh := range s.InShapes {
			x, t := b.src(i, j)
			srcC := int64(sh.C)
			total := n * srcC * hw
			switch {
			case s.Node.Merge == neat.MergeConcat:
				b.add("merge_cat_"+string(t), grid1(total), at(Arena, merged), x, lit(n), lit(dstC), lit(srcC), lit(hw), lit(off))
				off += srcC
			case j == 0:
				b.add("merge_pad_"+string(t), grid1(n*dstC*hw), at(Arena, merged), x, lit(n), lit(dstC), lit(srcC), lit(hw), lit(0))
			default:
				b.add("merge_add_"+string(t), grid1(total), at(Arena, merged), x, lit(n), lit(dstC), lit(srcC), lit(hw), lit(0))
			}
		}
		in, it = at(Arena, merged), elemF
	}
	ot := elemChar(b.dt)
	if last {
		ot = elemF
	}
	y := at(Arena, b.vals[i])
	if j := b.fused[i]; j >= 0 {
		y = at(Arena, b.vals[j])
	}
	io := string([]byte{it, ot})
	switch s.Node.Op {
	case neat.OpConv2D, neat.OpDense:
		b.gemm(i, in, it, y, ot)
	case neat.OpMaxPool2D, neat.OpAvgPool2D:
		name := "pool_max_"
		if s.Node.Op == neat.OpAvgPool2D {
			name = "pool_avg_"
		}
		planes := n * int64(s.In.C)
		b.add(name+io, grid1(planes*int64(s.Out.H)*int64(s.Out.W)), in, y, lit(planes),
			lit(int64(s.In.H)), lit(int64(s.In.W)), lit(int64(s.Node.Kernel)), lit(int64(s.Node.Stride)),
			lit(int64(s.Out.H)), lit(int64(s.Out.W)))
	case neat.OpGlobalAvgPool:
		planes := n * int64(s.In.C)
		b.add("gap_"+io, grid1(ceilDiv(planes, Threads/32)*Threads), in, y, lit(planes), lit(int64(s.In.H)*int64(s.In.W)))
	}
}

// gemm lists a conv2d or dense step: one launch of the implicit-GEMM
// kernel, Y[img, m, pixel] = act(bias[m] + Σ_k W[m, k] · X[k, (img, pixel)]),
// with k running over (channel, kernel row, kernel column). A dense node is
// a 1×1 convolution of a 1×1 image with C = its input size. A convolution
// with a fused pool (…_convpool_…) writes the pool's output to y: its
// columns are the pool's windows, GEMMColumns / (window²) a block.
func (b *builder) gemm(i int, x Arg, it byte, y Arg, ot byte) {
	s := &b.g.Steps[i]
	n := int64(b.n)
	var kind string
	var c, h, w, k, stride, pad, oh, ow int64
	if s.Node.Op == neat.OpConv2D {
		kind = "conv"
		c, h, w = int64(s.In.C), int64(s.In.H), int64(s.In.W)
		k, stride, pad = int64(s.Node.Kernel), int64(s.Node.Stride), int64(s.Node.Padding)
		oh, ow = int64(s.Out.H), int64(s.Out.W)
	} else {
		kind = "dense"
		c, h, w, k, stride, pad, oh, ow = int64(s.In.Size()), 1, 1, 1, 1, 0, 1, 1
	}
	m := int64(s.Out.C)
	cols := n * oh * ow
	tiles := ceilDiv(cols, GEMMColumns)
	var pool [5]Arg // window, stride, output height and width, kind (1 max, 2 average)
	for k := range pool {
		pool[k] = lit(0)
	}
	if j := b.fused[i]; j >= 0 {
		p := &b.g.Steps[j]
		kind = "convpool"
		pk := int64(p.Node.Kernel)
		pool = [5]Arg{lit(pk), lit(int64(p.Node.Stride)), lit(int64(p.Out.H)), lit(int64(p.Out.W)), lit(1)}
		if p.Node.Op == neat.OpAvgPool2D {
			pool[4] = lit(2)
		}
		cols = n * int64(p.Out.H) * int64(p.Out.W)
		tiles = ceilDiv(cols, GEMMColumns/(pk*pk))
	}
	cfg, bm := gemmConfig(int(m))
	wt := elemChar(b.dt)
	prefix := "gemm_"
	if b.lay.prec == TF32 {
		prefix = "gemmtc_"
	}
	name := prefix + cfg + "_" + kind + "_" + string([]byte{wt, it, ot})
	// The kernel walks the tiles beyond the grid itself.
	grid := [2]uint32{uint32(min(tiles, maxGridX)), uint32(min(ceilDiv(m, int64(bm)), maxGridY))}
	eb := int64(b.dt.Size())
	b.add(name, grid, x, at(Weights, b.lay.wOff[i]*eb), at(Weights, b.lay.bOff[i]*eb), y,
		lit(cols), lit(m), lit(c*k*k), lit(c), lit(h), lit(w), lit(k), lit(stride), lit(pad), lit(oh), lit(ow),
		lit(actCode[s.Node.Activation]), pool[0], pool[1], pool[2], pool[3], pool[4])
}

// reduce lists the reduction of the logits at off against the labels into
// the stats.
func (b *builder) reduce(logits int64, p *Program) {
	b.add("reduce_logits", [2]uint32{1, 1}, at(Arena, logits), at(Labels, 0), lit(int64(b.n)),
		lit(int64(b.g.NumClasses)), at(Arena, p.StatsOff))
}
