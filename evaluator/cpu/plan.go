package cpu

import (
	"slices"
	"sync"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// A forward runs depth-first in tiles: a few images go through every step
// before the next few start, so that a step's input and output are still in
// the core's caches. The tile is sized per genome (tileImages): as many
// images as keep its largest step's inputs and output within tileBytes.
//
// A forward of n images on T threads is cut into parts, one per thread,
// each with its own region of the forward's block: one goroutine per part
// takes tile after tile depth-first through every step, with its kernels on
// one thread. The threads then share nothing but the weights: no fan-out
// and join per layer, and the steps that do not split well across threads
// (pools, merges, the reduction, the input copy) run in parallel too. A
// slice of fewer tiles than threads runs as one part whose kernel calls
// share their images among the threads.
//
// The kernels compute each image the same whatever the other images of a
// tile or a call, and the images' losses are summed exactly
// (evaluator.Sum), so results depend neither on the thread count nor on
// the tile or the slicing, not even in the last bit of the loss.

// forwardPlan is the layout of one forward's block: in float32, the
// weights packed for the kernels, shared by the parts; then the parts,
// side by side; and the tile they run in.
type forwardPlan struct {
	size   int64
	tile   int
	packed []int64 // per step: byte offset of its packed weights, −1 for none
	parts  []partPlan
	split  bool // a slice of one tile, its images split among the parts
}

// Packed weights. A convolution or dense layer called with raw weights packs
// them into its workspace on every call, that is for every tile: for a
// late layer on a small map (large weights, few pixels), packing costs as
// much as the product. In float32, a forward packs each layer's weights
// once, before the first tile, into a region of its block that the parts
// share; the calls then read them packed (Conv2DPacked, DensePacked), with
// results bit for bit those of the raw calls. In bfloat16 the weights are
// converted for every tile as before: packing them in float32 for the whole
// forward would hold twice their bfloat16 size.

// packedLen is the float32s of step s's packed weights, or 0 for a step
// without weights.
func packedLen(s *neat.Step) int {
	switch s.Node.Op {
	case neat.OpConv2D:
		return kernels.PackedConvLen(convShape(s))
	case neat.OpDense:
		return kernels.PackedDenseLen(s.In.Size(), s.Out.C)
	}
	return 0
}

// tileBytes bounds the activations one tile's largest step reads and
// writes: the 2 MiB L2 of a core and part of the shared L3. Per genome,
// BenchmarkEvaluate and a sweep of tile sizes put the best tile where the
// step's data is 1 to 4 MiB (GFLOP/s fall by a third at 256 images on
// 28×28 maps of 64 channels and more); smaller tiles starve the packed
// convolutions of tiny maps.
const tileBytes = 4 << 20

// minTile and maxTile bound the tile, in images.
const minTile, maxTile = 8, 256

// tileImages is the tile of g's forwards: the images whose largest step
// (its inputs, merged input and output, in float32) fit tileBytes, a
// multiple of minTile from minTile to maxTile.
func tileImages(g *neat.Graph) int {
	if forcedTile > 0 {
		return forcedTile
	}
	per := 1
	for i := range g.Steps {
		s := &g.Steps[i]
		n := s.Out.Size()
		for _, sh := range s.InShapes {
			n += sh.Size()
		}
		if len(s.InShapes) > 1 {
			n += s.In.Size()
		}
		per = max(per, n)
	}
	t := tileBytes / 4 / per / minTile * minTile
	return min(max(t, minTile), maxTile)
}

// partPlan is one part of a forward: its share of the slice, n images (its
// buffers' size), its kernels' thread count, and the byte offsets in the
// block of its streamed input (−1 when the data set is cached on the
// device), of each step's output and of each step's workspace (−1 for
// none), and each step's workspace length in float32s, for a tile.
type partPlan struct {
	n       int
	first   int // split: the part's first image in the slice
	threads int
	input   int64
	out     []int64
	ws      []int64
	wsLen   []int
}

// forwardPlans are what a model's forwards of n images need planned: the
// size of the device's block and the workspace's layout. A model keeps
// them for the slice sizes it runs (a forward plans nothing after the
// first of its size): planning, with the kernels' workspace sizes of every
// step for every path, cost more than the arithmetic of a small genome's
// tile.
type forwardPlans struct {
	n         int
	streamed  bool
	blockSize int64
	ws        forwardPlan
}

// plansFor returns the model's plans for forwards of n images, made once.
func (c *Backend) plansFor(m *model, n int, streamed bool) *forwardPlans {
	m.plansMu.Lock()
	defer m.plansMu.Unlock()
	for _, p := range m.plans {
		if p.n == n && p.streamed == streamed {
			return p
		}
	}
	ws := c.workspace(m.g, n, streamed)
	block := ws.size
	if n > ws.tile {
		// A slice of one tile touches all of its block: the two layouts are
		// the same.
		block = c.plan(m.g, n, streamed).size
	}
	p := &forwardPlans{n: n, streamed: streamed, blockSize: block, ws: ws}
	if len(m.plans) == maxPlans {
		m.plans = m.plans[1:] // the oldest size goes
	}
	m.plans = append(m.plans, p)
	return p
}

// maxPlans is how many slice sizes a model keeps plans for: a forward's
// size changes only when the batch controller changes it and at the last
// slice of the data set.
const maxPlans = 4

// forcedTile, when positive, replaces every genome's tile: benchmarks
// compare tile sizes with it (export_test.go).
var forcedTile = 0

// tileParallel splits a forward into one part per thread when the slice has
// enough tiles. It is a variable so that a benchmark can compare the split
// with threads inside each kernel call (export_test.go).
var tileParallel = true

// parts splits a slice of n images in tiles of tile among the backend's
// threads: each part's share is whole tiles, and at least one full tile,
// the most it computes at a time. A slice of one tile is split by images
// instead (splitOne).
func (c *Backend) parts(n, tile int) []partPlan {
	tiles := (n + tile - 1) / tile
	t := c.threads
	if tileParallel && t > 1 && tiles == 1 && n > 1 {
		return splitOne(n, t)
	}
	if !tileParallel || t == 1 || tiles < t {
		return []partPlan{{n: n, threads: t}}
	}
	ps := make([]partPlan, t)
	for w := range ps {
		lo, hi := tiles*w/t*tile, min(tiles*(w+1)/t*tile, n)
		ps[w] = partPlan{n: max(hi-lo, min(tile, n)), threads: 1}
	}
	return ps
}

// splitOne splits a slice of one tile, n images, into min(t, n) parts of
// consecutive images, each computed through every step by one thread.
// Small validation sets are one tile per genome (50 images of a small
// genome), and with the threads inside each kernel call instead, every
// layer of the forward paid a fan-out and a join, 12% of scoring 10,000
// small genomes on 50 images. The parts' logits are gathered and reduced
// as the tile's, in image order: the kernels compute each image alone
// (whatever the other images of a call), so the results are a one-thread
// forward's, bit for bit (TestPartsSameResults).
func splitOne(n, t int) []partPlan {
	k := min(t, n)
	ps := make([]partPlan, k)
	for w := range ps {
		lo, hi := n*w/k, n*(w+1)/k
		ps[w] = partPlan{n: hi - lo, first: lo, threads: 1}
	}
	return ps
}

// plan lays out the block of a forward of n images: the packed weights (in
// float32), then its parts one after the other, each laid out by
// partLayout. Its size is the forward's memory on the device.
func (c *Backend) plan(g *neat.Graph, n int, streamed bool) forwardPlan {
	return c.layout(g, n, streamed, false)
}

// workspace lays out what a forward of n images really touches: the plan's
// packed weights and parts, each part's buffers for one tile (see
// scratch.go).
func (c *Backend) workspace(g *neat.Graph, n int, streamed bool) forwardPlan {
	return c.layout(g, n, streamed, true)
}

// layout is plan, or with compact workspace. Parts of the same size and
// threads have the same layout (a slice of one tile split among the
// threads), and parts whose tiles have the same images and threads the
// same workspaces (the kernels' workspace sizes, the dearest part of
// planning): each is worked out once.
func (c *Backend) layout(g *neat.Graph, n int, streamed, compact bool) forwardPlan {
	p := forwardPlan{tile: tileImages(g), packed: make([]int64, len(g.Steps))}
	for i := range g.Steps {
		p.packed[i] = -1
		if k := packedLen(&g.Steps[i]); k > 0 && c.dtype == vram.Float32 {
			p.packed[i] = p.size
			p.size += (int64(k)*4 + planAlign - 1) / planAlign * planAlign
		}
	}
	p.parts = c.parts(n, p.tile)
	p.split = len(p.parts) > 1 && n <= p.tile
	var ws []int64 // the steps' workspace bytes for the last part's tile
	var last partPlan
	var lastSize int64
	for i := range p.parts {
		pp := &p.parts[i]
		b := min(pp.n, p.tile)
		var size int64
		switch {
		case i > 0 && pp.n == last.n && pp.threads == last.threads:
			size = lastSize
			pp.input, pp.wsLen = last.input, last.wsLen
			pp.out, pp.ws = slices.Clone(last.out), slices.Clone(last.ws)
		default:
			if i == 0 || b != min(last.n, p.tile) || pp.threads != last.threads {
				ws = c.stepWorkspaces(g, b, pp.threads)
			}
			size = c.partLayout(g, pp, ws, p.tile, streamed, compact)
			last, lastSize = *pp, size
			last.out, last.ws = slices.Clone(pp.out), slices.Clone(pp.ws)
		}
		for s := range pp.out {
			pp.out[s] += p.size
			if pp.ws[s] >= 0 {
				pp.ws[s] += p.size
			}
		}
		if pp.input >= 0 {
			pp.input += p.size
		}
		p.size += (size + planAlign - 1) / planAlign * planAlign
	}
	p.size = max(p.size, 1)
	return p
}

// stepWorkspaces is each step's workspace in bytes for tiles of b images
// on the given threads.
func (c *Backend) stepWorkspaces(g *neat.Graph, b, threads int) []int64 {
	ws := make([]int64, len(g.Steps))
	for i := range ws {
		ws[i] = c.stepWorkspaceT(g, i, b, threads) * 4
	}
	return ws
}

// partLayout lays out the buffers of one part (partBufs), from offset 0,
// and returns its size.
func (c *Backend) partLayout(g *neat.Graph, p *partPlan, ws []int64, tile int, streamed, compact bool) int64 {
	steps := len(g.Steps)
	bufs := c.partBufs(g, p.n, ws, tile, streamed, compact, make([]interval, 0, 2*steps+1))
	size := memPlan(bufs, nil)
	p.input = -1
	if streamed {
		p.input, bufs = bufs[0].off, bufs[1:]
	}
	offs := make([]int64, 2*steps)
	p.out, p.ws, p.wsLen = offs[:steps:steps], offs[steps:], make([]int, steps)
	for i := range g.Steps {
		p.out[i] = bufs[i].off
		p.ws[i] = -1
		if w := bufs[steps+i]; w.size > 0 {
			p.ws[i] = w.off
			p.wsLen[i] = int(w.size / 4)
		}
	}
	return size
}

// partBufs appends to bufs the buffers of a part of n images: the streamed
// input for the whole part, each step's output from its step to its last
// reader (the logits to the end), then each step's workspace (ws, for one
// tile) during its step. A compact layout sizes the input and the outputs
// for one tile, all a tile touches.
func (c *Backend) partBufs(g *neat.Graph, n int, ws []int64, tile int, streamed, compact bool, bufs []interval) []interval {
	if compact {
		n = min(n, tile)
	}
	last := len(g.Steps) - 1
	elem := int64(c.dtype.Size())
	if streamed {
		bufs = append(bufs, interval{first: 0, last: last, size: int64(n*g.Input.Size()) * elem})
	}
	outAt := len(bufs)
	for i := range g.Steps {
		e := elem
		if i == last {
			e = 4 // logits stay float32 for the reduction
		}
		bufs = append(bufs, interval{first: i, last: last, size: int64(n*g.Steps[i].Out.Size()) * e})
	}
	for i := range g.Steps {
		for _, r := range g.Steps[i].Release {
			bufs[outAt+r].last = i // step r's output dies at step i
		}
	}
	for i := range g.Steps {
		bufs = append(bufs, interval{first: i, last: i, size: ws[i]})
	}
	return bufs
}

// blockSize is plan(g, n, streamed).size, worked out without keeping the
// layout, in scratch reused from call to call: the memory model sizes every
// genome three times (Footprint), and its allocations were a tenth of that.
func (c *Backend) blockSize(g *neat.Graph, n int, streamed bool) int64 {
	sc := sizeScratchPool.Get().(*sizeScratch)
	defer sizeScratchPool.Put(sc)
	tile := tileImages(g)
	var size int64
	if c.dtype == vram.Float32 {
		for i := range g.Steps {
			if k := packedLen(&g.Steps[i]); k > 0 {
				size += (int64(k)*4 + planAlign - 1) / planAlign * planAlign
			}
		}
	}
	var last partPlan
	var lastSize int64
	for i, pp := range c.parts(n, tile) {
		b := min(pp.n, tile)
		if i == 0 || pp.n != last.n || pp.threads != last.threads {
			if i == 0 || b != min(last.n, tile) || pp.threads != last.threads {
				sc.ws = sc.ws[:0]
				for j := range g.Steps {
					sc.ws = append(sc.ws, c.stepWorkspaceT(g, j, b, pp.threads)*4)
				}
			}
			sc.bufs = c.partBufs(g, pp.n, sc.ws, tile, streamed, false, sc.bufs[:0])
			sc.idx = slices.Grow(sc.idx[:0], 3*len(sc.bufs))[:3*len(sc.bufs)]
			lastSize = memPlan(sc.bufs, sc.idx)
		}
		last = pp
		size += (lastSize + planAlign - 1) / planAlign * planAlign
	}
	return max(size, 1)
}

// sizeScratch is blockSize's reused memory.
type sizeScratch struct {
	ws   []int64
	bufs []interval
	idx  []int
}

var sizeScratchPool = sync.Pool{New: func() any { return new(sizeScratch) }}
