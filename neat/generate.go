package neat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Generate draws a population of size random valid genomes, with ids 0 to
// size-1, for inputs of shape in and numClasses classes. The same seed,
// size, input, class count and cfg give the same population, and genome i
// does not depend on size.
//
// The genomes look like what NEAT grows from small CNNs: a main path of
// convolutions (kernels from cfg.Kernels, default or explicit padding,
// strides of 1 or 2, any activation) with max or average pooling between
// them; skip connections that sum (over unequal channel counts too) or
// concatenate an earlier value of the same height and width; a head that
// global-average-pools or flattens into a dense output, sometimes through a
// hidden dense layer, sometimes summing in the pooled features of an earlier
// stage; now and then a node the output does not depend on. Node ids are
// distinct positive numbers in no particular relation to the graph, and
// nodes are listed in id order, as innovation numbers would have them.
//
// Weights are drawn from a normal distribution scaled by fan-in (He) after
// ReLU-like activations and by fan-in and fan-out (Glorot) otherwise, and
// biases near 0, so that an untrained genome's logits are finite and its
// accuracy is near chance.
//
// Every genome Compiles. Generate panics if cfg is not valid (see
// GenConfig.Validate), size is negative, or in or numClasses is not
// positive.
func Generate(seed int64, size int, in Input, numClasses int, cfg GenConfig) *Population {
	if err := cfg.Validate(); err != nil {
		panic("neat: Generate: " + err.Error())
	}
	if size < 0 || numClasses < 1 || in.Channels < 1 || in.Height < 1 || in.Width < 1 {
		panic(fmt.Sprintf("neat: Generate: size %d, input %+v, %d classes", size, in, numClasses))
	}
	pop := &Population{Input: in, NumClasses: numClasses, Genomes: make([]*Genome, size)}
	for i := range size {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		g := drawGenome(r, &cfg, in, numClasses, int64(i))
		if _, err := Compile(g, in, numClasses); err != nil {
			panic("neat: Generate drew an invalid genome: " + err.Error())
		}
		pop.Genomes[i] = g
	}
	return pop
}

// genVal is a value a generated node can read: a node's output, or the input.
type genVal struct {
	id int // provisional id; 0 is the input
	sh Shape
}

// genBuilder draws one genome with provisional node ids 1, 2, ...
type genBuilder struct {
	r          *rand.Rand
	cfg        *GenConfig
	numClasses int
	nodes      []Node
	params     map[int]*Params
	vals       []genVal // every value, in the order drawn
	flops      int64    // spent so far
}

func newGenBuilder(r *rand.Rand, cfg *GenConfig, in Input, numClasses int) *genBuilder {
	return &genBuilder{
		r: r, cfg: cfg, numClasses: numClasses,
		params: map[int]*Params{},
		vals:   []genVal{{0, Shape{C: in.Channels, H: in.Height, W: in.Width}}},
	}
}

// drawGenome draws genome id with r. A draw whose FLOPs exceed the budget
// (a concatenation can widen the head beyond what was reserved for it) is
// drawn again; after a few tries the genome is the smallest there is, a
// global_avg_pool into the output.
func drawGenome(r *rand.Rand, cfg *GenConfig, in Input, numClasses int, id int64) *Genome {
	for range 16 {
		b := newGenBuilder(r, cfg, in, numClasses)
		if g := b.genome(id, false); b.flops <= cfg.MaxFLOPs {
			return g
		}
	}
	return newGenBuilder(r, cfg, in, numClasses).genome(id, true)
}

func (b *genBuilder) genome(id int64, minimal bool) *Genome {
	cfg := b.cfg
	cur := b.vals[0]
	nConv := cfg.MinConv + b.r.IntN(cfg.MaxConv-cfg.MinConv+1)
	if minimal {
		nConv = 0
	}
	// Room left for the head: a dense from a global_avg_pool of the widest
	// convolution, through the widest hidden layer.
	headReserve := 2 * int64(cfg.MaxChannels) * int64(cfg.MaxHidden+b.numClasses)
	for i := range nConv {
		area := cur.sh.H * cur.sh.W
		if i == 0 && area > 32*32 && b.chance(0.75) ||
			i > 0 && (b.chance(cfg.PDownsample) || area > 14*14 && b.chance(0.75)) {
			cur = b.pool(cur)
		}
		left := max(b.budget()-headReserve, 0)
		next, ok := b.conv(cur, left*2/int64(nConv-i+1))
		if !ok {
			break
		}
		cur = next
	}
	out := b.head(cur, minimal)
	if !minimal && b.chance(cfg.PDangling) {
		b.dangling()
	}
	return b.finish(id, out)
}

func (b *genBuilder) chance(p float64) bool { return b.r.Float64() < p }

func (b *genBuilder) budget() int64 { return b.cfg.MaxFLOPs - b.flops }

// add appends a node with the next provisional id and returns its value.
func (b *genBuilder) add(n Node, out Shape) genVal {
	n.ID = len(b.nodes) + 1
	b.nodes = append(b.nodes, n)
	v := genVal{n.ID, out}
	b.vals = append(b.vals, v)
	return v
}

// skip picks an earlier 4-D value of cur's height and width, if any.
func (b *genBuilder) skip(cur genVal) (genVal, bool) {
	var cands []genVal
	for _, v := range b.vals {
		if v.id != cur.id && !v.sh.Flat && v.sh.H == cur.sh.H && v.sh.W == cur.sh.W {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return genVal{}, false
	}
	return cands[b.r.IntN(len(cands))], true
}

// inputs draws the inputs of a 4-D node reading cur: cur alone, or with a
// skip connection. It returns them, the merge and the merged shape.
func (b *genBuilder) inputs(cur genVal, pSkip float64) ([]int, Merge, Shape) {
	if !b.chance(pSkip) {
		return []int{cur.id}, "", cur.sh
	}
	s, ok := b.skip(cur)
	if !ok {
		return []int{cur.id}, "", cur.sh
	}
	ids := []int{cur.id, s.id}
	if b.chance(0.5) {
		ids[0], ids[1] = ids[1], ids[0]
	}
	merged := cur.sh
	if b.chance(b.cfg.PConcat) {
		merged.C += s.sh.C
		return ids, MergeConcat, merged
	}
	merged.C = max(cur.sh.C, s.sh.C)
	if b.chance(0.5) {
		return ids, MergeSum, merged
	}
	return ids, "", merged // sum, by default
}

// pool puts a max or average pool after cur, when cur is large enough.
func (b *genBuilder) pool(cur genVal) genVal {
	h, w := cur.sh.H, cur.sh.W
	if h < 2 || w < 2 {
		return cur
	}
	n := Node{Op: OpMaxPool2D, Kernel: 2}
	if b.chance(0.5) {
		n.Op = OpAvgPool2D
	}
	switch x := b.r.IntN(10); {
	case x < 2 && h >= 3 && w >= 3:
		n.Kernel, n.Stride = 3, 2
	case x == 2:
		n.Stride = 2 // explicit default
	case x == 3 && h >= 4 && w >= 4:
		n.Stride = 1 // overlapping, no downsampling
	}
	var in Shape
	n.Inputs, n.Merge, in = b.inputs(cur, b.cfg.PSkip/2)
	if n.Merge == MergeConcat && b.chance(0.5) {
		n.Inputs, n.Merge, in = []int{cur.id}, "", cur.sh
	}
	s := n.Stride
	if s == 0 {
		s = n.Kernel
	}
	out := Shape{C: in.C, H: (in.H-n.Kernel)/s + 1, W: (in.W-n.Kernel)/s + 1}
	return b.add(n, out)
}

// conv puts a conv2d after cur that costs at most allow FLOPs, narrowing it
// or making it 1×1 to fit; it reports false when even that does not fit.
func (b *genBuilder) conv(cur genVal, allow int64) (genVal, bool) {
	cfg := b.cfg
	n := Node{Op: OpConv2D, Padding: PaddingDefault}
	var in Shape
	n.Inputs, n.Merge, in = b.inputs(cur, cfg.PSkip)
	n.Kernel = cfg.Kernels[b.r.IntN(len(cfg.Kernels))]
	pad := n.Kernel / 2
	switch x := b.r.IntN(10); {
	case x < 2 && in.H >= n.Kernel && in.W >= n.Kernel:
		n.Padding, pad = 0, 0
	case x == 2:
		n.Padding = pad // explicit default
	}
	if in.H+2*pad < n.Kernel || in.W+2*pad < n.Kernel { // an even kernel on a tiny input
		n.Kernel, n.Padding, pad = 1, PaddingDefault, 0
	}
	stride := 1
	if in.H >= 4 && in.W >= 4 && b.chance(cfg.PDownsample) {
		n.Stride, stride = 2, 2
	} else if b.chance(0.1) {
		n.Stride = 1 // explicit default
	}
	n.OutChannels = cfg.MinChannels + b.r.IntN(cfg.MaxChannels-cfg.MinChannels+1)
	n.Activation = cfg.Activations[b.r.IntN(len(cfg.Activations))]
	if b.chance(0.1) && n.Activation == ActReLU {
		n.Activation = "" // relu, by default
	}
	oh := (in.H+2*pad-n.Kernel)/stride + 1
	ow := (in.W+2*pad-n.Kernel)/stride + 1
	cost := func() int64 {
		return 2 * int64(n.OutChannels) * int64(in.C) * int64(n.Kernel*n.Kernel) * int64(oh*ow)
	}
	for cost() > allow && n.OutChannels > cfg.MinChannels {
		n.OutChannels = max(n.OutChannels/2, cfg.MinChannels)
	}
	if cost() > allow && n.Kernel > 1 {
		// A 1×1 kernel with no padding keeps the output size when stride
		// is 1; with the default padding it would grow it.
		n.Kernel, n.Padding, pad = 1, 0, 0
		oh = (in.H-1)/stride + 1
		ow = (in.W-1)/stride + 1
	}
	if cost() > allow {
		return genVal{}, false
	}
	b.flops += cost()
	b.setParams(len(b.nodes)+1, n.Activation, n.OutChannels, in.C*n.Kernel*n.Kernel, []int{n.OutChannels, in.C, n.Kernel, n.Kernel})
	return b.add(n, Shape{C: n.OutChannels, H: oh, W: ow}), true
}

// head ends the genome in a dense output of numClasses features.
func (b *genBuilder) head(cur genVal, minimal bool) genVal {
	cfg := b.cfg
	feat := cur
	if minimal || !(b.chance(cfg.PFlatten) && cur.sh.Size() <= 4096 &&
		2*int64(cur.sh.Size())*int64(b.numClasses+cfg.MaxHidden) <= b.budget()) {
		feat = b.add(Node{Op: OpGlobalAvgPool, Inputs: []int{cur.id}}, Shape{C: cur.sh.C, H: 1, W: 1, Flat: true})
	}
	// An earlier stage's pooled features, summed into a dense node: a 2-D
	// sum over unequal feature counts.
	var extra []int
	if !minimal && feat.sh.Flat && b.chance(cfg.PSkip) {
		var cands []genVal
		for _, v := range b.vals {
			if v.id != 0 && v.id != cur.id && !v.sh.Flat {
				cands = append(cands, v)
			}
		}
		if len(cands) > 0 {
			v := cands[b.r.IntN(len(cands))]
			g := b.add(Node{Op: OpGlobalAvgPool, Inputs: []int{v.id}}, Shape{C: v.sh.C, H: 1, W: 1, Flat: true})
			extra = []int{g.id}
			if g.sh.C > feat.sh.C {
				feat.sh.C = g.sh.C // the merged width (feat itself is unchanged)
			}
		}
	}
	dense := func(in []int, inSize, out int, act Activation, merge Merge) genVal {
		b.flops += 2 * int64(inSize) * int64(out)
		b.setParams(len(b.nodes)+1, act, out, inSize, []int{out, inSize})
		return b.add(Node{Op: OpDense, Inputs: in, Merge: merge, OutFeatures: out, Activation: act},
			Shape{C: out, H: 1, W: 1, Flat: true})
	}
	merge := func() Merge {
		if b.chance(0.5) {
			return MergeSum
		}
		return ""
	}
	inSize := feat.sh.Size()
	ins := append([]int{feat.id}, extra...)
	var m Merge
	if len(ins) > 1 {
		m = merge()
	}
	if !minimal && b.chance(cfg.PHidden) {
		w := cfg.MinHidden + b.r.IntN(cfg.MaxHidden-cfg.MinHidden+1)
		act := cfg.Activations[b.r.IntN(len(cfg.Activations))]
		h := dense(ins, inSize, w, act, m)
		ins, inSize, m = []int{h.id}, w, ""
	}
	act := Activation("")
	if b.chance(0.2) {
		act = ActIdentity
	}
	return dense(ins, inSize, b.numClasses, act, m)
}

// dangling adds a node that nothing reads: a conv2d or a dense on some
// value, with weights or without (a node the output does not depend on
// needs none).
func (b *genBuilder) dangling() {
	v := b.vals[b.r.IntN(len(b.vals))]
	if v.sh.Flat {
		n := Node{Op: OpDense, Inputs: []int{v.id}, OutFeatures: 4}
		if b.chance(0.5) {
			b.setParams(len(b.nodes)+1, ActIdentity, 4, v.sh.C, []int{4, v.sh.C})
		}
		b.add(n, Shape{C: 4, H: 1, W: 1, Flat: true})
		return
	}
	n := Node{Op: OpConv2D, Inputs: []int{v.id}, OutChannels: 4, Kernel: 1, Padding: PaddingDefault}
	if b.chance(0.5) {
		b.setParams(len(b.nodes)+1, ActReLU, 4, v.sh.C, []int{4, v.sh.C, 1, 1})
	}
	b.add(n, Shape{C: 4, H: v.sh.H, W: v.sh.W})
}

// setParams draws the weight (of shape wshape) and bias of node id.
func (b *genBuilder) setParams(id int, act Activation, fanOut, fanIn int, wshape []int) {
	var std float64
	switch act {
	case "", ActReLU, ActLeakyReLU, ActGELU:
		std = math.Sqrt(2 / float64(fanIn)) // He
	default:
		k := 1
		if len(wshape) == 4 {
			k = wshape[2] * wshape[3]
		}
		std = math.Sqrt(2 / float64(fanIn+fanOut*k)) // Glorot
	}
	w := &Tensor{Shape: wshape, Data: make([]float32, fanOut*fanIn)}
	for i := range w.Data {
		w.Data[i] = float32(b.r.NormFloat64() * std)
	}
	bias := &Tensor{Shape: []int{fanOut}, Data: make([]float32, fanOut)}
	for i := range bias.Data {
		bias.Data[i] = float32(b.r.NormFloat64() * 0.01)
	}
	b.params[id] = &Params{Weight: w, Bias: bias}
}

// finish gives the nodes distinct random ids, lists them in id order, and
// returns the genome.
func (b *genBuilder) finish(id int64, out genVal) *Genome {
	n := len(b.nodes)
	perm := b.r.Perm(3 * n)
	marks := make([]int, n+1) // provisional id → final id; 0 stays 0
	for i := 1; i <= n; i++ {
		marks[i] = perm[i-1] + 1
	}
	g := &Genome{ID: id, Output: marks[out.id], Nodes: make([]Node, n), Params: make(map[int]*Params, len(b.params))}
	for i, nd := range b.nodes {
		nd.ID = marks[nd.ID]
		for j := range nd.Inputs {
			nd.Inputs[j] = marks[nd.Inputs[j]]
		}
		g.Nodes[i] = nd
	}
	for pid, p := range b.params {
		g.Params[marks[pid]] = p
	}
	slices.SortFunc(g.Nodes, func(a, b Node) int { return a.ID - b.ID })
	return g
}
