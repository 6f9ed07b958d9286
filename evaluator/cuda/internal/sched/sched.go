package sched

import (
	"cmp"
	"fmt"
	"slices"

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
const MaxArgs = 24

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
	return FootprintWith(g, dt, b, cached, Options{})
}

// FootprintWith is Footprint of the forwards BuildWith schedules with o.
func FootprintWith(g *neat.Graph, dt vram.DType, b int, cached bool, o Options) (model, act int64) {
	if g.Params > 0 {
		model = vram.RoundSize(g.Params * int64(dt.Size()))
	}
	p, err := build(g, dt, max(b, 1), cached, o.Unfused, nil)
	if err != nil {
		// Build refuses only shapes beyond the kernels' index range, far
		// beyond any device's memory: say so by a size no device has.
		return model, 1 << 62
	}
	return model, vram.RoundSize(p.ArenaBytes)
}

// Precision is how the products (conv2d, dense) compute.
type Precision uint8

const (
	// FP32 is float32 FMA: the CPU backend's arithmetic, beyond the order
	// of the sums.
	FP32 Precision = iota
	// TF32 is the tensor cores' TF32 MMA: each weight and input rounded to
	// 10 mantissa bits, products and sums in float32 (PyTorch's default
	// for convolutions on Ampere and later).
	TF32
)

// Options are how a forward is scheduled: the products' precision, and
// whether pools are fused into the convolutions before them (Unfused: no,
// every pool its own launch from a full-resolution activation). The
// arena depends on Unfused, not on Precision.
type Options struct {
	Precision Precision
	Unfused   bool
}

// Build schedules a forward of n images of g stored as dt, in float32
// arithmetic, pools fused. wOff and bOff are WeightLayout's.
func Build(g *neat.Graph, dt vram.DType, n int, cached bool) (*Program, error) {
	return BuildWith(g, dt, n, cached, Options{})
}

// BuildPrecision is Build with the products computed in precision p. The
// arena is the same.
func BuildPrecision(g *neat.Graph, dt vram.DType, n int, cached bool, p Precision) (*Program, error) {
	return BuildWith(g, dt, n, cached, Options{Precision: p})
}

// BuildWith is Build with the options o.
func BuildWith(g *neat.Graph, dt vram.DType, n int, cached bool, o Options) (*Program, error) {
	if n < 1 {
		return nil, fmt.Errorf("sched: genome %d: forward of %d images", g.GenomeID, n)
	}
	wOff, bOff, _ := WeightLayout(g)
	return build(g, dt, n, cached, o.Unfused, &layout{wOff, bOff, o.Precision})
}

// build lays out the arena and, when lay is not nil, lists the launches.
// The arena holds the stats and (uncached) the slice's images and labels,
// live throughout, and per step its merged input (float32, when it has
// several inputs; live during the step) and its output (live from the step
// to the step that releases it, the logits to the end): the graph's
// liveness schedule, as the CPU backend allocates it. Offsets are planned
// knowing every lifetime (plan), so the arena stays near the peak of the
// live bytes. A convolution with a fused pool (FusedPools) has no output
// of its own: the pool's output is live from the convolution on.
func build(g *neat.Graph, dt vram.DType, n int, cached, unfused bool, lay *layout) (*Program, error) {
	if err := checkRange(g); err != nil {
		return nil, err
	}
	p := &Program{N: n, Cached: cached, InputOff: -1, LabelsOff: -1}
	elem := int64(dt.Size())
	nn := int64(n)
	steps := int64(len(g.Steps))
	var rs []region
	add := func(size, from, to int64) int {
		rs = append(rs, region{size: alignUp(max(size, 1)), from: from, to: to})
		return len(rs) - 1
	}
	stats := add(StatsBytes, 0, steps)
	input, labels := -1, -1
	if !cached {
		input = add(nn*int64(g.Input.Size())*elem, 0, steps)
		labels = add(nn, 0, steps)
	}
	last := len(g.Steps) - 1
	dies := make([]int64, len(g.Steps))
	for i := range g.Steps {
		dies[i] = int64(i)
	}
	for i := range g.Steps {
		for _, r := range g.Steps[i].Release {
			dies[r] = int64(i)
		}
	}
	dies[last] = steps
	fused := make([]int, len(g.Steps))
	if !unfused {
		fused = FusedPools(g)
	} else {
		for i := range fused {
			fused[i] = -1
		}
	}
	from := make([]int64, len(g.Steps))
	for i := range g.Steps {
		from[i] = int64(i)
	}
	for i, j := range fused {
		if j >= 0 {
			from[j] = int64(i)
		}
	}
	merged := make([]int, len(g.Steps))
	out := make([]int, len(g.Steps))
	for i := range g.Steps {
		s := &g.Steps[i]
		merged[i], out[i] = -1, -1
		if len(s.Inputs) > 1 {
			merged[i] = add(nn*int64(s.In.Size())*4, int64(i), int64(i))
		}
		if fused[i] >= 0 {
			continue
		}
		outElem := elem
		if i == last {
			outElem = 4 // the logits are float32
		}
		out[i] = add(nn*int64(s.Out.Size())*outElem, from[i], dies[i])
	}
	p.ArenaBytes = plan(rs)
	p.StatsOff = rs[stats].off
	if !cached {
		p.InputOff, p.LabelsOff = rs[input].off, rs[labels].off
	}
	if lay == nil {
		return p, nil
	}
	vals := make([]int64, len(g.Steps))
	for i := range g.Steps {
		vals[i] = -1
		if out[i] >= 0 {
			vals[i] = rs[out[i]].off
		}
	}
	bld := &builder{g: g, dt: dt, n: n, lay: lay, vals: vals, fused: fused}
	for i := range g.Steps {
		if from[i] != int64(i) {
			continue // a pool computed by its convolution
		}
		m := int64(-1)
		if merged[i] >= 0 {
			m = rs[merged[i]].off
		}
		bld.step(i, m, i == last)
	}
	bld.reduce(vals[last], p)
	p.Launches = bld.out
	return p, nil
}

// FusedPools says, per step, which pool is fused into it: the step index
// of the pool for a conv2d whose one consumer is a max or average pool,
// −1 for every other step. Fused are the pools that read only that
// convolution, are not the output, and whose windows neither overlap
// (stride ≥ window: no pixel of the convolution is computed twice) nor
// exceed a tile's GEMMColumns pixels.
func FusedPools(g *neat.Graph) []int {
	last := len(g.Steps) - 1
	uses := make([]int, len(g.Steps))
	user := make([]int, len(g.Steps))
	for j := range g.Steps {
		for _, k := range g.Steps[j].Inputs {
			if k >= 0 {
				uses[k]++
				user[k] = j
			}
		}
	}
	fused := make([]int, len(g.Steps))
	for i := range g.Steps {
		fused[i] = -1
		if g.Steps[i].Node.Op != neat.OpConv2D || i == last || uses[i] != 1 {
			continue
		}
		j := user[i]
		p := &g.Steps[j]
		if (p.Node.Op != neat.OpMaxPool2D && p.Node.Op != neat.OpAvgPool2D) || j == last || len(p.Inputs) != 1 {
			continue
		}
		if k := p.Node.Kernel; k < 1 || p.Node.Stride < k || k*k > GEMMColumns {
			continue
		}
		fused[i] = j
	}
	return fused
}

// kernelMax bounds what the kernels count with 32-bit integers: the output
// channels (features) of a product and the length of its reduction,
// C·K·K or the dense input's size. Positions in images are 64-bit.
const kernelMax = 1 << 30

// checkRange refuses a graph whose products the kernels' 32-bit counters
// cannot hold. Such a product has more than 2^30 weights (4 GiB in
// float32) per output channel or in all, more than any population file
// this backend is meant for; the error names the genome and the node.
func checkRange(g *neat.Graph) error {
	for i := range g.Steps {
		s := &g.Steps[i]
		var red int64
		switch s.Node.Op {
		case neat.OpConv2D:
			red = int64(s.In.C) * int64(s.Node.Kernel) * int64(s.Node.Kernel)
		case neat.OpDense:
			red = int64(s.In.Size())
		default:
			continue
		}
		if red >= kernelMax || int64(s.Out.C) >= kernelMax {
			return fmt.Errorf("genome %d, node %d: %s of %v → %v: a product of %d terms into %d outputs is beyond the CUDA kernels' 32-bit counters (2^30)",
				g.GenomeID, s.Node.ID, s.Node.Op, s.In, s.Out, red, s.Out.C)
		}
	}
	return nil
}

// region is a buffer of the arena: its size (aligned), the steps from and
// to which it is live (inclusive), and its planned offset.
type region struct {
	size, from, to int64
	off            int64
}

func alignUp(n int64) int64 { return (n + Align - 1) / Align * Align }

// plan gives every region an offset such that regions live at the same
// time never overlap, and returns the arena's size. Greedy by size, as
// TFLite's arena planner: the largest regions are placed first, each at the
// lowest offset where it fits between the regions already placed whose
// lifetimes meet its own. Deterministic: ties keep the regions' order.
func plan(rs []region) int64 {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rs[b].size, rs[a].size) })
	var placed []int // by offset
	var peak int64
	for _, i := range order {
		r := &rs[i]
		off := int64(0)
		for _, j := range placed {
			q := &rs[j]
			if q.to < r.from || r.to < q.from {
				continue // never live together
			}
			if q.off >= off+r.size {
				break // the gap before q holds r
			}
			off = max(off, q.off+q.size)
		}
		r.off = off
		at, _ := slices.BinarySearchFunc(placed, off, func(j int, off int64) int { return cmp.Compare(rs[j].off, off) })
		placed = slices.Insert(placed, at, i)
		peak = max(peak, off+r.size)
	}
	return peak
}
