package sched

import (
	"fmt"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// Base says what an argument is relative to.
type Base uint8

// The bases of kernel arguments. A pointer argument is its base's device
// address plus V bytes; a literal is V itself.
const (
	Lit     Base = iota // an integer
	Arena               // the forward's one allocation
	Weights             // the model's weight block
	Input               // the first image of the slice (cached data or the arena)
	Labels              // the first label of the slice
)

// Arg is one 8-byte kernel argument.
type Arg struct {
	Base Base
	V    int64
}

// MaxArgs is the most arguments a kernel takes.
const MaxArgs = 16

// Launch is one kernel launch of a forward: 256 threads a block.
type Launch struct {
	Kernel Kernel
	Grid   [2]uint32 // x, y
	Args   [MaxArgs]Arg
	NArgs  int
}

// Threads is the block size of every kernel.
const Threads = 256

// Align is the alignment of every region of the arena.
const Align = 256

// StatsBytes is the size of the reduction's result at Program.StatsOff:
// float64 loss sum, int64 correct, int64 non-finite, int64 rows.
const StatsBytes = 32

// Program is one forward of n images, as the device runs it: the arena
// (one allocation holding every activation, merged input and the
// reductions' result, and the slice's images and labels when the data set
// is not cached), and the launches in stream order.
type Program struct {
	N          int
	Cached     bool
	ArenaBytes int64
	// InputOff and LabelsOff are where the slice's images (in the storage
	// type) and labels (one byte each) go in the arena when the data set is
	// not cached; −1 otherwise.
	InputOff, LabelsOff int64
	StatsOff            int64
	Launches            []Launch
}

// InputBytes is the size of the slice's images in the arena (0 when
// cached).
func (p *Program) InputBytes(g *neat.Graph, dt vram.DType) int64 {
	if p.Cached {
		return 0
	}
	return int64(p.N) * int64(g.Input.Size()) * int64(dt.Size())
}

// WeightLayout places the graph's parameters in one block, as the CPU
// backend does: per step, the element offsets of its weight and bias (−1
// for a step without), and the total number of elements.
func WeightLayout(g *neat.Graph) (wOff, bOff []int64, total int64) {
	wOff, bOff = make([]int64, len(g.Steps)), make([]int64, len(g.Steps))
	for i := range g.Steps {
		s := &g.Steps[i]
		wOff[i], bOff[i] = -1, -1
		if w := s.WeightShape(); w != nil {
			n := int64(1)
			for _, d := range w {
				n *= int64(d)
			}
			wOff[i] = total
			total += n
			bOff[i] = total
			total += int64(w[0])
		}
	}
	return wOff, bOff, total
}

// Footprint is the device memory of one genome: its weight block and its
// forward's arena for b images, each rounded as vram's allocator rounds.
// It is exact: Load and Forward allocate these two blocks and nothing else.
func Footprint(g *neat.Graph, dt vram.DType, b int, cached bool) (model, act int64) {
	if g.Params > 0 {
		model = vram.RoundSize(g.Params * int64(dt.Size()))
	}
	p, err := build(g, dt, max(b, 1), cached, nil)
	if err != nil {
		// Build refuses only shapes beyond the kernels' index range, far
		// beyond any device's memory: say so by a size no device has.
		return model, 1 << 62
	}
	return model, vram.RoundSize(p.ArenaBytes)
}

// Build schedules a forward of n images of g stored as dt. wOff and bOff
// are WeightLayout's.
func Build(g *neat.Graph, dt vram.DType, n int, cached bool) (*Program, error) {
	if n < 1 {
		return nil, fmt.Errorf("sched: genome %d: forward of %d images", g.GenomeID, n)
	}
	wOff, bOff, _ := WeightLayout(g)
	return build(g, dt, n, cached, &layout{wOff, bOff})
}

// build lays out the arena following the graph's liveness schedule and,
// when lay is not nil, lists the launches. The layout: the stats, then
// (uncached) the slice's images and labels, live throughout; then per step
// its merged input (float32, when it has several inputs) and its output,
// the merged input freed after the step and each value after its last
// reader, as the CPU backend allocates them. Each region is placed at the
// lowest free offset (first fit), so the arena is the peak of the live
// regions plus what fragmentation costs.
func build(g *neat.Graph, dt vram.DType, n int, cached bool, lay *layout) (*Program, error) {
	if err := checkRange(g); err != nil {
		return nil, err
	}
	p := &Program{N: n, Cached: cached, InputOff: -1, LabelsOff: -1}
	var a arena
	p.StatsOff = a.alloc(StatsBytes)
	elem := int64(dt.Size())
	nn := int64(n)
	if !cached {
		p.InputOff = a.alloc(nn * int64(g.Input.Size()) * elem)
		p.LabelsOff = a.alloc(nn)
	}
	last := len(g.Steps) - 1
	vals := make([]int64, len(g.Steps))
	sizes := make([]int64, len(g.Steps))
	var bld *builder
	if lay != nil {
		bld = &builder{g: g, dt: dt, n: n, lay: lay, vals: vals}
	}
	for i := range g.Steps {
		s := &g.Steps[i]
		merged := int64(-1)
		var mergedBytes int64
		if len(s.Inputs) > 1 {
			mergedBytes = nn * int64(s.In.Size()) * 4
			merged = a.alloc(mergedBytes)
		}
		outElem := elem
		if i == last {
			outElem = 4 // the logits are float32
		}
		sizes[i] = nn * int64(s.Out.Size()) * outElem
		vals[i] = a.alloc(sizes[i])
		if bld != nil {
			bld.step(i, merged, i == last)
		}
		if merged >= 0 {
			a.free(merged, mergedBytes)
		}
		for _, r := range s.Release {
			a.free(vals[r], sizes[r])
		}
	}
	if bld != nil {
		bld.reduce(vals[last], p)
		p.Launches = bld.out
	}
	p.ArenaBytes = a.peak
	return p, nil
}

// kernelMax bounds the dimensions the kernels index with 32-bit integers.
const kernelMax = 1 << 30

// checkRange refuses a graph whose dimensions the kernels' 32-bit index
// arithmetic cannot hold. Such a genome's weights alone would be larger
// than any device; the check keeps the arithmetic provably exact.
func checkRange(g *neat.Graph) error {
	for i := range g.Steps {
		s := &g.Steps[i]
		k, p := s.Node.Kernel, s.Node.Padding
		for _, v := range []int{s.In.C, s.In.H + 2*p + k, s.In.W + 2*p + k, s.Out.C, s.Out.H * s.Out.W, s.Node.Stride} {
			if v >= kernelMax {
				return fmt.Errorf("genome %d, node %d: %s of %v → %v is beyond the CUDA kernels' index range (2^30)",
					g.GenomeID, s.Node.ID, s.Node.Op, s.In, s.Out)
			}
		}
		if s.Node.Op == neat.OpConv2D && int64(s.In.C)*int64(k)*int64(k) >= kernelMax ||
			s.Node.Op == neat.OpDense && s.In.Size() >= kernelMax {
			return fmt.Errorf("genome %d, node %d: %s reduction of more than 2^30 terms is beyond the CUDA kernels' index range",
				g.GenomeID, s.Node.ID, s.Node.Op)
		}
	}
	return nil
}

// arena is a first-fit offset allocator over the live regions of one
// forward.
type arena struct {
	live []region // sorted by offset
	peak int64
}

type region struct{ off, size int64 }

func alignUp(n int64) int64 { return (n + Align - 1) / Align * Align }

func (a *arena) alloc(size int64) int64 {
	size = alignUp(max(size, 1))
	off := int64(0)
	at := len(a.live)
	for i, r := range a.live {
		if r.off-off >= size {
			at = i
			break
		}
		off = r.off + r.size
	}
	a.live = append(a.live, region{})
	copy(a.live[at+1:], a.live[at:])
	a.live[at] = region{off, size}
	a.peak = max(a.peak, off+size)
	return off
}

func (a *arena) free(off, size int64) {
	for i, r := range a.live {
		if r.off == off {
			if r.size != alignUp(max(size, 1)) {
				panic(fmt.Sprintf("sched: free of %d bytes at %d, allocated %d", size, off, r.size))
			}
			a.live = append(a.live[:i], a.live[i+1:]...)
			return
		}
	}
	panic(fmt.Sprintf("sched: free of a region not live at %d", off))
}
