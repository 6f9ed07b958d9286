package neat

import (
	"math"
	"math/rand/v2"
	"slices"
)

// layout is what a weighted node's parameters are laid out against: its
// op, output rows, kernel, and how its inputs merge. Two layouts that are
// equal need the same tensors, element for element.
type layout struct {
	op     Op
	out    int   // out_channels or out_features
	kernel int   // conv2d
	concat bool  // several inputs, concatenated
	srcs   []int // the input node ids, in order
	chans  []int // each input's channels (features, for a 2-D input)
	in     Shape // the merged input
}

func layoutOf(s *Step) layout {
	l := layout{op: s.Node.Op, kernel: s.Node.Kernel, in: s.In,
		concat: s.Node.Merge == MergeConcat && len(s.Node.Inputs) > 1,
		srcs:   slices.Clone(s.Node.Inputs)}
	l.out = s.Node.OutChannels
	if s.Node.Op == OpDense {
		l.out = s.Node.OutFeatures
	}
	for _, sh := range s.InShapes {
		l.chans = append(l.chans, sh.C)
	}
	return l
}

func (l *layout) equal(o *layout) bool {
	return l.op == o.op && l.out == o.out && l.kernel == o.kernel && l.concat == o.concat &&
		l.in == o.in && slices.Equal(l.srcs, o.srcs) && slices.Equal(l.chans, o.chans)
}

// weightShape is the weight tensor's shape under l.
func (l *layout) weightShape() []int {
	if l.op == OpConv2D {
		return []int{l.out, l.in.C, l.kernel, l.kernel}
	}
	return []int{l.out, l.in.Size()}
}

// layouts records the layout of every weighted node of a genome, from its
// shapes.
func layouts(gr *Graph) map[int]layout {
	m := map[int]layout{}
	for i := range gr.Steps {
		if s := &gr.Steps[i]; s.WeightShape() != nil {
			m[s.Node.ID] = layoutOf(s)
		}
	}
	return m
}

// channelMap says, for each merged input channel under n, which merged
// channel under o carries the same value, or -1. A sum merge aligns its
// inputs' channels at 0, so channel c stays c; a concatenation is mapped
// segment by segment, by input node. Where the merge changed, the one
// input both have in common keeps its channels.
func channelMap(o, n *layout) []int {
	m := make([]int, n.in.C)
	for i := range m {
		m[i] = -1
	}
	offsets := func(l *layout) []int {
		off := make([]int, len(l.chans))
		for j := 1; j < len(off); j++ {
			off[j] = off[j-1] + l.chans[j-1]
		}
		return off
	}
	switch {
	case !o.concat && !n.concat:
		for c := range min(n.in.C, o.in.C) {
			m[c] = c
		}
	case o.concat && n.concat:
		oo, no := offsets(o), offsets(n)
		for j, s := range n.srcs {
			if k := slices.Index(o.srcs, s); k >= 0 {
				for c := range min(n.chans[j], o.chans[k]) {
					m[no[j]+c] = oo[k] + c
				}
			}
		}
	case n.concat: // was summed (or one input)
		no := offsets(n)
		for j, s := range n.srcs {
			if slices.Contains(o.srcs, s) {
				for c := range min(n.chans[j], o.in.C) {
					m[no[j]+c] = c
				}
				break
			}
		}
	default: // was concatenated, now summed
		oo := offsets(o)
		for k, s := range o.srcs {
			if slices.Contains(n.srcs, s) {
				for c := range min(n.in.C, o.chans[k]) {
					m[c] = oo[k] + c
				}
				break
			}
		}
	}
	return m
}

// remap lays parameters p, laid out under o, out under n: every weight whose
// output row, input channel (and kernel tap, centred) exists under both is
// kept; the other weights of kept rows are 0, so that new inputs start
// without effect; new rows are drawn afresh, as a new node's are. New
// biases are 0. When nothing maps (a dense node whose input changed height
// or width), the parameters are drawn afresh.
func remap(r *rand.Rand, p *Params, o, n *layout, act Activation) *Params {
	if p == nil || p.Weight == nil || p.Bias == nil || o.op != n.op ||
		!slices.Equal(p.Weight.Shape, o.weightShape()) || len(p.Bias.Data) != o.out {
		return freshParams(r, act, n.weightShape())
	}
	cm := channelMap(o, n)
	if n.op == OpDense && (o.in.H != n.in.H || o.in.W != n.in.W || o.in.Flat != n.in.Flat) {
		cm = nil
	}
	if !slices.ContainsFunc(cm, func(c int) bool { return c >= 0 }) {
		return freshParams(r, act, n.weightShape())
	}
	ws := n.weightShape()
	w := &Tensor{Shape: ws, Data: make([]float32, shapeLen(ws))}
	b := &Tensor{Shape: []int{n.out}, Data: make([]float32, n.out)}
	oldIn := p.Weight.Len() / o.out // per row
	newIn := w.Len() / n.out
	// taps: per input channel, the elements of one row that belong to it;
	// tap maps a new tap to an old one or -1.
	var taps int
	var tap []int
	if n.op == OpConv2D {
		taps = n.kernel * n.kernel
		tap = make([]int, taps)
		d := (o.kernel - n.kernel) / 2 // centre on centre
		for y := range n.kernel {
			for x := range n.kernel {
				oy, ox := y+d, x+d
				tap[y*n.kernel+x] = -1
				if oy >= 0 && oy < o.kernel && ox >= 0 && ox < o.kernel {
					tap[y*n.kernel+x] = oy*o.kernel + ox
				}
			}
		}
	} else {
		taps = n.in.H * n.in.W // the same under o: checked above
		tap = make([]int, taps)
		for i := range tap {
			tap[i] = i
		}
	}
	oldTaps := oldIn / max(o.in.C, 1)
	keep := min(o.out, n.out)
	for row := range keep {
		src := p.Weight.Data[row*oldIn : (row+1)*oldIn]
		dst := w.Data[row*newIn : (row+1)*newIn]
		for c, oc := range cm {
			if oc < 0 {
				continue
			}
			for t, ot := range tap {
				if ot >= 0 {
					dst[c*taps+t] = src[oc*oldTaps+ot]
				}
			}
		}
		b.Data[row] = p.Bias.Data[row]
	}
	if n.out > keep {
		fresh := freshParams(r, act, ws)
		copy(w.Data[keep*newIn:], fresh.Weight.Data[keep*newIn:])
	}
	return &Params{Weight: w, Bias: b}
}

func shapeLen(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// heScale is sqrt(2 / fan-in) of a weight tensor of shape s.
func heScale(s []int) float64 {
	fanIn := max(shapeLen(s)/max(s[0], 1), 1)
	return math.Sqrt(2 / float64(fanIn))
}

// freshParams draws a new node's weights as Generate does: He-scaled after
// ReLU-like activations, Glorot otherwise; biases 0.
func freshParams(r *rand.Rand, act Activation, ws []int) *Params {
	std := heScale(ws)
	switch act {
	case "", ActReLU, ActLeakyReLU, ActGELU:
	default:
		fanOut := ws[0]
		if len(ws) == 4 {
			fanOut *= ws[2] * ws[3]
		}
		std = math.Sqrt(2 / float64(shapeLen(ws)/ws[0]+fanOut))
	}
	w := &Tensor{Shape: slices.Clone(ws), Data: make([]float32, shapeLen(ws))}
	for i := range w.Data {
		w.Data[i] = float32(r.NormFloat64() * std)
	}
	return &Params{Weight: w, Bias: &Tensor{Shape: []int{ws[0]}, Data: make([]float32, ws[0])}}
}

// fitParams gives every weighted node of g parameters of the shapes its
// graph now calls for. before holds, per node id, the layout the node's
// current parameters were made for; a node whose layout is unchanged keeps
// them, the others are remapped (see remap), and a node without parameters
// or without a recorded layout whose tensors do not fit gets fresh ones.
func fitParams(r *rand.Rand, g *Genome, in Input, numClasses int, before map[int]layout) error {
	gr, err := InferShapes(g, in, numClasses)
	if err != nil {
		return err
	}
	for i := range gr.Steps {
		s := &gr.Steps[i]
		ws := s.WeightShape()
		if ws == nil {
			continue
		}
		id := s.Node.ID
		nl := layoutOf(s)
		p := g.Params[id]
		ol, known := before[id]
		switch {
		case known && ol.equal(&nl) && p != nil:
		case !known && p != nil && p.Weight != nil && p.Bias != nil &&
			slices.Equal(p.Weight.Shape, ws) && slices.Equal(p.Bias.Shape, ws[:1]):
		case known:
			g.Params[id] = remap(r, p, &ol, &nl, s.Node.Activation)
		default:
			g.Params[id] = freshParams(r, s.Node.Activation, ws)
		}
	}
	return nil
}
