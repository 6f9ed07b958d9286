package neat

import (
	"fmt"
	"slices"
)

// initMinimal draws generation 0 as NEAT does: every genome has the same
// minimal topology, with the same node ids, and its own random weights.
// The topology is an average pool that brings the input down to about 7×7
// (none for inputs under 14 pixels a side) read by the dense output. Every
// convolution, skip connection and width is then grown by mutation; each
// genome of the first generations is a few hundred FLOPs per image, so
// they are scored fast.
func (e *Evolution) initMinimal() error {
	k := max(1, min(e.in.Height, e.in.Width)/7)
	var nodes []Node
	src := InputNode
	if k > 1 {
		src = e.inn.fresh()
		nodes = append(nodes, Node{ID: src, Op: OpAvgPool2D, Inputs: []int{InputNode}, Kernel: k})
	}
	out := e.inn.fresh()
	nodes = append(nodes, Node{ID: out, Op: OpDense, Inputs: []int{src}, OutFeatures: e.nc})
	return e.initTopology(nodes, out)
}

// initConv draws generation 0 from one small CNN, the same topology (the
// same node ids) for every genome: by default a conv2d of 8 3×3 ReLU
// filters, a max pool to about 7×7, and the dense output (InitConvs,
// InitKernel, InitPools). Unlike InitMinimal's linear reader its genomes
// are nonlinear from the start, so weight search has features to tune
// while mutations grow the rest.
func (e *Evolution) initConv() error {
	return e.initTopology(e.convStack(e.cfg.InitConvs, e.cfg.InitKernel, e.cfg.InitPools), -1)
}

// initFixed draws generation 0 from the fixed baseline CNN of InitFixed:
// conv 8 5×5 → max pool 2 → conv 16 5×5 → max pool 2 → dense.
func (e *Evolution) initFixed() error {
	return e.initTopology(e.convStack([]int{8, 16}, 5, []int{2, 2}), -1)
}

// convStack lists, with fresh ids, one ReLU conv2d of kernel k for each
// width, followed by a max pool of size pools[i] (0: to about 7×7; none
// when that is < 2 or the image is too small), then the dense output.
func (e *Evolution) convStack(widths []int, k int, pools []int) []Node {
	var nodes []Node
	src, h, w := InputNode, e.in.Height, e.in.Width
	for i, c := range widths {
		pool := pools[i]
		if pool == 0 {
			pool = max(1, min(h, w)/7)
		}
		id := e.inn.fresh()
		nodes = append(nodes, Node{ID: id, Op: OpConv2D, Inputs: []int{src}, OutChannels: c, Kernel: k,
			Stride: 1, Padding: PaddingDefault, Activation: ActReLU})
		src = id
		if pool > 1 && h >= pool && w >= pool {
			id = e.inn.fresh()
			nodes = append(nodes, Node{ID: id, Op: OpMaxPool2D, Inputs: []int{src}, Kernel: pool, Stride: pool})
			src, h, w = id, h/pool, w/pool
		}
	}
	return append(nodes, Node{ID: e.inn.fresh(), Op: OpDense, Inputs: []int{src}, OutFeatures: e.nc})
}

// initTopology fills generation 0 with copies of one topology (its output
// node out, or the last node when out < 0), each with random weights.
func (e *Evolution) initTopology(nodes []Node, out int) error {
	if out < 0 {
		out = nodes[len(nodes)-1].ID
	}
	for range e.cfg.PopulationSize {
		g := &Genome{ID: e.nextGenome, Output: out, Params: map[int]*Params{}}
		e.nextGenome++
		for _, n := range nodes {
			n.Inputs = slices.Clone(n.Inputs)
			g.Nodes = append(g.Nodes, n)
		}
		if err := e.admit(g); err != nil {
			return err
		}
		e.pop = append(e.pop, g)
	}
	return nil
}

// initGenerated draws generation 0 with Generate (the default generator
// configuration narrowed to the run's kernels, activations, channels and
// FLOPs), drops the nodes the output does not use, and gives every node a
// fresh innovation id, in the genome's node order: generated genomes share
// no history.
func (e *Evolution) initGenerated() error {
	gc := DefaultGenConfig()
	gc.Kernels = slices.Clone(e.cfg.Kernels)
	gc.Activations = slices.Clone(e.cfg.Activations)
	gc.MinChannels, gc.MaxChannels = e.cfg.MinChannels, e.cfg.MaxChannels
	gc.MaxFLOPs = min(gc.MaxFLOPs, e.cfg.MaxFLOPs)
	if err := gc.Validate(); err != nil {
		return fmt.Errorf("neat: evolve: generator: %w", err)
	}
	for _, g := range Generate(e.cfg.Seed, e.cfg.PopulationSize, e.in, e.nc, gc).Genomes {
		prune(g)
		ids := map[int]int{InputNode: InputNode}
		for i := range g.Nodes {
			ids[g.Nodes[i].ID] = e.inn.fresh()
		}
		params := make(map[int]*Params, len(g.Params))
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if p := g.Params[n.ID]; p != nil {
				params[ids[n.ID]] = p
			}
			n.ID = ids[n.ID]
			for j, s := range n.Inputs {
				n.Inputs[j] = ids[s]
			}
		}
		g.Output, g.Params = ids[g.Output], params
		g.ID = e.nextGenome
		e.nextGenome++
		if err := e.admit(g); err != nil {
			return err
		}
		e.pop = append(e.pop, g)
	}
	return nil
}

// admit gives g's weighted nodes parameters where they have none and checks
// it against the run's limits.
func (e *Evolution) admit(g *Genome) error {
	if err := fitParams(e.r, g, e.in, e.nc, nil); err != nil {
		return fmt.Errorf("neat: evolve: first generation: %w", err)
	}
	gr, err := Compile(g, e.in, e.nc)
	if err != nil {
		return fmt.Errorf("neat: evolve: first generation: %w", err)
	}
	if gr.FLOPs > e.cfg.MaxFLOPs {
		return fmt.Errorf("neat: evolve: first generation: genome %d needs %d FLOPs per image, above the limit of %d", g.ID, gr.FLOPs, e.cfg.MaxFLOPs)
	}
	return nil
}
