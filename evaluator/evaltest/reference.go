package evaltest

import (
	"fmt"
	"math"

	"github.com/neateval/neateval/neat"
)

// refValue is one node's value for one image, in float64.
type refValue struct {
	c, h, w int
	flat    bool
	v       []float64 // c*h*w, C,H,W order
}

// Reference computes a genome's logits for n images with plain nested loops
// in float64, straight from the genome's listed nodes: it shares no code
// with the evaluator's compiled graphs or kernels, and resolves the format's
// defaults itself. It assumes a genome that neat.Compile accepts.
func Reference(g *neat.Genome, in neat.Input, images []float32, n int) ([][]float64, error) {
	byID := map[int]*neat.Node{}
	for i := range g.Nodes {
		byID[g.Nodes[i].ID] = &g.Nodes[i]
	}
	size := in.Channels * in.Height * in.Width
	out := make([][]float64, n)
	for k := 0; k < n; k++ {
		x := refValue{c: in.Channels, h: in.Height, w: in.Width, v: make([]float64, size)}
		for i := range x.v {
			x.v[i] = float64(images[k*size+i])
		}
		memo := map[int]*refValue{neat.InputNode: &x}
		v, err := refEval(g, byID, memo, g.Output)
		if err != nil {
			return nil, err
		}
		out[k] = v.v
	}
	return out, nil
}

func refEval(g *neat.Genome, byID map[int]*neat.Node, memo map[int]*refValue, id int) (*refValue, error) {
	if v, ok := memo[id]; ok {
		return v, nil
	}
	n := byID[id]
	var ins []*refValue
	for _, src := range n.Inputs {
		v, err := refEval(g, byID, memo, src)
		if err != nil {
			return nil, err
		}
		ins = append(ins, v)
	}
	x := refMerge(n, ins)
	var y *refValue
	p := g.Params[id]
	switch n.Op {
	case neat.OpConv2D:
		stride, pad := n.Stride, n.Padding
		if stride == 0 {
			stride = 1
		}
		if pad == neat.PaddingDefault {
			pad = n.Kernel / 2
		}
		y = refConv(x, p.Weight.Data, p.Bias.Data, n.OutChannels, n.Kernel, stride, pad)
		refActivate(y.v, n.Activation, neat.ActReLU)
	case neat.OpMaxPool2D, neat.OpAvgPool2D:
		stride := n.Stride
		if stride == 0 {
			stride = n.Kernel
		}
		y = refPool(x, n.Kernel, stride, n.Op == neat.OpMaxPool2D)
	case neat.OpGlobalAvgPool:
		y = &refValue{c: x.c, h: 1, w: 1, flat: true, v: make([]float64, x.c)}
		for c := 0; c < x.c; c++ {
			var s float64
			for i := 0; i < x.h*x.w; i++ {
				s += x.v[c*x.h*x.w+i]
			}
			y.v[c] = s / float64(x.h*x.w)
		}
	case neat.OpDense:
		y = &refValue{c: n.OutFeatures, h: 1, w: 1, flat: true, v: make([]float64, n.OutFeatures)}
		in := len(x.v)
		for o := 0; o < n.OutFeatures; o++ {
			s := float64(p.Bias.Data[o])
			for i := 0; i < in; i++ {
				s += float64(p.Weight.Data[o*in+i]) * x.v[i]
			}
			y.v[o] = s
		}
		refActivate(y.v, n.Activation, neat.ActIdentity)
	default:
		return nil, fmt.Errorf("reference: unknown op %q", n.Op)
	}
	memo[id] = y
	return y, nil
}

// refMerge sums (zero-padding the channel or feature axis to the largest) or
// concatenates a node's inputs.
func refMerge(n *neat.Node, ins []*refValue) *refValue {
	if len(ins) == 1 {
		return ins[0]
	}
	first := ins[0]
	hw := first.h * first.w
	if n.Merge == neat.MergeConcat {
		out := &refValue{h: first.h, w: first.w}
		for _, v := range ins {
			out.c += v.c
			out.v = append(out.v, v.v...)
		}
		return out
	}
	c := 0
	for _, v := range ins {
		c = max(c, v.c)
	}
	out := &refValue{c: c, h: first.h, w: first.w, flat: first.flat, v: make([]float64, c*hw)}
	for _, v := range ins {
		for i, x := range v.v {
			out.v[i] += x
		}
	}
	return out
}

func refConv(x *refValue, w, b []float32, oc, k, s, p int) *refValue {
	oh := (x.h+2*p-k)/s + 1
	ow := (x.w+2*p-k)/s + 1
	y := &refValue{c: oc, h: oh, w: ow, v: make([]float64, oc*oh*ow)}
	for o := 0; o < oc; o++ {
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				sum := float64(b[o])
				for c := 0; c < x.c; c++ {
					for di := 0; di < k; di++ {
						for dj := 0; dj < k; dj++ {
							r, q := i*s+di-p, j*s+dj-p
							if r < 0 || q < 0 || r >= x.h || q >= x.w {
								continue
							}
							sum += float64(w[((o*x.c+c)*k+di)*k+dj]) * x.v[(c*x.h+r)*x.w+q]
						}
					}
				}
				y.v[(o*oh+i)*ow+j] = sum
			}
		}
	}
	return y
}

func refPool(x *refValue, k, s int, isMax bool) *refValue {
	oh := (x.h-k)/s + 1
	ow := (x.w-k)/s + 1
	y := &refValue{c: x.c, h: oh, w: ow, v: make([]float64, x.c*oh*ow)}
	for c := 0; c < x.c; c++ {
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				acc := 0.0
				if isMax {
					acc = math.Inf(-1)
				}
				for di := 0; di < k; di++ {
					for dj := 0; dj < k; dj++ {
						v := x.v[(c*x.h+i*s+di)*x.w+j*s+dj]
						if isMax {
							acc = math.Max(acc, v)
						} else {
							acc += v
						}
					}
				}
				if !isMax {
					acc /= float64(k * k)
				}
				y.v[(c*oh+i)*ow+j] = acc
			}
		}
	}
	return y
}

func refActivate(v []float64, a, def neat.Activation) {
	if a == "" {
		a = def
	}
	for i, x := range v {
		switch a {
		case neat.ActReLU:
			v[i] = math.Max(x, 0)
		case neat.ActLeakyReLU:
			if x < 0 {
				v[i] = 0.01 * x
			}
		case neat.ActTanh:
			v[i] = math.Tanh(x)
		case neat.ActSigmoid:
			v[i] = 1 / (1 + math.Exp(-x))
		case neat.ActGELU:
			v[i] = x * 0.5 * (1 + math.Erf(x/math.Sqrt2))
		}
	}
}

// RefMetrics scores float64 logits: accuracy, mean loss, and how many images
// had a near-tie between their two largest logits (relative gap below tie),
// where float32 rounding may pick either class.
func RefMetrics(logits [][]float64, labels []uint8, tie float64) (acc, loss float64, ties int) {
	correct := 0
	for r, row := range logits {
		best, arg := row[0], 0
		for k, v := range row {
			if v > best {
				best, arg = v, k
			}
		}
		second := math.Inf(-1)
		for k, v := range row {
			if k != arg && v > second {
				second = v
			}
		}
		if best-second <= tie*math.Max(1, math.Abs(best)) {
			ties++
		}
		if arg == int(labels[r]) {
			correct++
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - best)
		}
		loss += math.Log(s) + best - row[labels[r]]
	}
	n := float64(len(logits))
	return float64(correct) / n, loss / n, ties
}
