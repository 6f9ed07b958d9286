package sched

import (
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// The population kernels (kernels/pop.cu): pop_forward runs a whole genome
// for a tile of images in one block's shared memory, for many genomes in
// one launch, from a table of their steps; pop_reduce turns each genome's
// per-image records into its slice's stats. The constants below are
// pop.cu's.
const (
	// PopSmem is the floats of shared memory (46 KiB) that set a block's
	// tile: PopSmem / frame images, at least one. A genome whose one
	// image's frame is larger takes one image a block, up to what the
	// device lets a block have (BuildPop's smem): blocks stay small where
	// they can, so that several share a multiprocessor.
	PopSmem = 11776
	// PopSmemH200 is the floats of dynamic shared memory a block may opt
	// into on an H200 (sm_90: 227 KiB), the performance model's device.
	PopSmemH200 = 227 << 10 / 4
	// PopFields is the 8-byte fields of one step of the table.
	PopFields = 16
	// PopHdr is the 8-byte fields of one request's header.
	PopHdr = 16
	// PopMaxTile caps the images of one block: beyond it, the blocks of a
	// small slice would be too few to spread over the multiprocessors.
	PopMaxTile = 64
	// PopMaxBatch is the most requests (genome slices) one launch scores:
	// their stats, PopMaxBatch × StatsBytes, come back in one copy.
	PopMaxBatch = 64
	// PopMaxWork is the most work (the genome's FLOPs per image × the
	// slice's images) of a forward the backend sends down the population
	// path by default. The performance model's break-even: pop_forward's
	// scalar products issue at about an eighth of the FP32 rate
	// (perfmodel.PopIssueShare), so beyond some 256 MFLOP a forward's
	// per-layer launches, tens of µs for a small genome, cost less than
	// the slower arithmetic. A prediction, for the first card run to set.
	PopMaxWork = 256e6
)

// The ops of a step (pop.cu's POP_…).
const (
	popConv int64 = iota
	popDense
	popMaxPool
	popAvgPool
	popGAP
	popMergePad
	popMergeAdd
	popMergeCat
)

// The fields of a request's header (pop.cu's H_…).
const (
	HdrSteps = iota
	HdrNSteps
	HdrWeights
	HdrImages
	HdrLabels
	HdrN
	HdrTile
	HdrFrame
	HdrInSize
	HdrInOff
	HdrLogits
	HdrClasses
	HdrLoss
	HdrKind
	HdrFirst
	HdrStats
)

// PopProgram is a genome as pop_forward runs it: its steps' table and the
// frame of one image in shared memory (every value live at once at some
// step, placed by the same planner as the arena, in floats).
type PopProgram struct {
	// Steps holds len(Steps)/PopFields steps of PopFields fields.
	Steps []int64
	// Frame is the floats of one image's frame; Tile the images a block
	// holds (PopSmem / Frame, at most PopMaxTile).
	Frame, Tile int64
	// InSize is the floats of one image, InOff and Logits the offsets of
	// the image and of the logits in the frame.
	InSize, InOff, Logits int64
	Classes               int64
	Kernel                Kernel // pop_forward_f or pop_forward_h
}

// BuildPop makes g's table for the population kernels, with values stored
// as dt between steps. It returns nil when one image's frame does not fit
// in smem floats, a block's dynamic shared memory: such a genome keeps the
// per-layer path.
func BuildPop(g *neat.Graph, dt vram.DType, smem int64) *PopProgram {
	if checkRange(g) != nil {
		return nil
	}
	last := len(g.Steps) - 1
	var rs []region
	add := func(size, from, to int64) int {
		rs = append(rs, region{size: max(size, 1), from: from, to: to})
		return len(rs) - 1
	}
	// The image is live until its last reader.
	inLast := int64(0)
	for i := range g.Steps {
		for _, k := range g.Steps[i].Inputs {
			if k < 0 {
				inLast = int64(i)
			}
		}
	}
	input := add(int64(g.Input.Size()), 0, inLast)
	dies := make([]int64, len(g.Steps))
	for i := range g.Steps {
		dies[i] = int64(i)
		for _, r := range g.Steps[i].Release {
			dies[r] = int64(i)
		}
	}
	dies[last] = int64(len(g.Steps))
	merged, out := make([]int, len(g.Steps)), make([]int, len(g.Steps))
	for i := range g.Steps {
		s := &g.Steps[i]
		merged[i] = -1
		if len(s.Inputs) > 1 {
			merged[i] = add(int64(s.In.Size()), int64(i), int64(i))
		}
		out[i] = add(int64(s.Out.Size()), int64(i), dies[i])
	}
	frame := plan(rs)
	if frame > smem {
		return nil
	}
	p := &PopProgram{Frame: frame, Tile: max(1, min(min(PopSmem, smem)/frame, PopMaxTile)), InSize: int64(g.Input.Size()),
		InOff: rs[input].off, Logits: rs[out[last]].off, Classes: int64(g.NumClasses), Kernel: kernel("pop_forward_f")}
	if dt == vram.BFloat16 {
		p.Kernel = kernel("pop_forward_h")
	}
	// Weight offsets are in elements of the storage type.
	wOff, bOff, _ := WeightLayout(g)
	off := func(k int) int64 {
		if k < 0 {
			return rs[input].off
		}
		return rs[out[k]].off
	}
	for i := range g.Steps {
		s := &g.Steps[i]
		x := off(s.Inputs[0])
		if merged[i] >= 0 {
			p.merges(s, off, rs[merged[i]].off)
			x = rs[merged[i]].off
		}
		round := int64(0)
		if dt == vram.BFloat16 && i != last {
			round = 1
		}
		f := [PopFields]int64{1: x, 2: rs[out[i]].off, 15: round}
		in, o := s.In, s.Out
		switch s.Node.Op {
		case neat.OpConv2D:
			f[0] = popConv
			f[3], f[4], f[5] = int64(in.C), int64(in.H), int64(in.W)
			f[6], f[7], f[8] = int64(s.Node.Kernel), int64(s.Node.Stride), int64(s.Node.Padding)
			f[9], f[10], f[11] = int64(o.H), int64(o.W), int64(o.C)
			f[12], f[13], f[14] = wOff[i], bOff[i], actCode[s.Node.Activation]
		case neat.OpDense:
			f[0] = popDense
			f[3], f[4], f[5], f[6], f[7] = int64(in.Size()), 1, 1, 1, 1
			f[9], f[10], f[11] = 1, 1, int64(o.Size())
			f[12], f[13], f[14] = wOff[i], bOff[i], actCode[s.Node.Activation]
		case neat.OpMaxPool2D, neat.OpAvgPool2D:
			f[0] = popMaxPool
			if s.Node.Op == neat.OpAvgPool2D {
				f[0] = popAvgPool
			}
			f[3], f[4], f[5] = int64(in.C), int64(in.H), int64(in.W)
			f[6], f[7] = int64(s.Node.Kernel), int64(s.Node.Stride)
			f[9], f[10], f[11] = int64(o.H), int64(o.W), int64(in.C)
		case neat.OpGlobalAvgPool:
			f[0] = popGAP
			f[3], f[4], f[5] = int64(in.C), int64(in.H), int64(in.W)
			f[9], f[10], f[11] = 1, 1, int64(in.C)
		}
		p.Steps = append(p.Steps, f[:]...)
	}
	return p
}

// merges appends the steps that merge s's inputs into the float32 value at
// dst, in the per-layer path's order: concat copies each input to its
// channels; a sum pads the first to the merged channels and adds the rest.
func (p *PopProgram) merges(s *neat.Step, off func(int) int64, dst int64) {
	h, w := int64(s.In.H), int64(s.In.W)
	first := int64(0)
	for j, sh := range s.InShapes {
		c := int64(sh.C)
		f := [PopFields]int64{1: off(s.Inputs[j]), 2: dst, 3: c, 4: h, 5: w, 9: h, 10: w, 11: c}
		switch {
		case s.Node.Merge == neat.MergeConcat:
			f[0], f[6] = popMergeCat, first
			first += c
		case j == 0:
			f[0], f[11] = popMergePad, int64(s.In.C)
		default:
			f[0] = popMergeAdd
		}
		p.Steps = append(p.Steps, f[:]...)
	}
}

// PopForwardKernels are the kernels pop_forward_f and pop_forward_h.
func PopForwardKernels() []Kernel { return []Kernel{kernel("pop_forward_f"), kernel("pop_forward_h")} }

// Shared is the bytes of dynamic shared memory a block of p's tiles needs.
func (p *PopProgram) Shared() int64 { return p.Tile * p.Frame * 4 }

// PopReduce is the kernel pop_reduce.
func PopReduce() Kernel { return kernel("pop_reduce") }

// NSteps is the table's steps (merges included).
func (p *PopProgram) NSteps() int { return len(p.Steps) / PopFields }

// Blocks is the blocks of pop_forward a slice of n images takes.
func (p *PopProgram) Blocks(n int) int64 { return ceilDiv(int64(n), p.Tile) }

// PopLayout places the requests of one launch in one device allocation:
// the headers (PopHdr fields each), the stats (StatsBytes each), then per
// request its steps and its records (a float64 loss term and a byte per
// image). Offsets are in bytes from the allocation's start.
type PopLayout struct {
	Headers, Stats int64
	Steps, Loss    []int64
	Kind           []int64
	// Upload is the bytes from the start that the host fills (headers,
	// stats' room, steps); Bytes is the whole allocation's need.
	Upload, Bytes int64
}

// LayPop lays out a launch of the programs ps for slices of ns images.
func LayPop(ps []*PopProgram, ns []int) PopLayout {
	r := int64(len(ps))
	l := PopLayout{Headers: 0, Stats: alignUp(r * PopHdr * 8)}
	at := alignUp(l.Stats + r*StatsBytes)
	for _, p := range ps {
		l.Steps = append(l.Steps, at)
		at = alignUp(at + int64(len(p.Steps))*8)
	}
	l.Upload = at
	for i := range ps {
		n := int64(ns[i])
		l.Loss = append(l.Loss, at)
		at = alignUp(at + 8*n)
		l.Kind = append(l.Kind, at)
		at = alignUp(at + n)
	}
	l.Bytes = at
	return l
}

// PopFits says whether a launch of p alone for n images needs no more
// device memory than arena bytes (the per-layer forward's arena): the
// population path then keeps within the memory model, and a batch of
// requests within the sum of their arenas.
func (p *PopProgram) PopFits(n int, arena int64) bool {
	return LayPop([]*PopProgram{p}, []int{n}).Bytes <= arena
}
