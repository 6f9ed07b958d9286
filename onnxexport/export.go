package onnxexport

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/neateval/neateval/neat"
)

// InputName and OutputName are the names of the models' input, a float
// tensor [N, C, H, W] of images (x/255, and normalised where the run
// normalises), and of their output, the logits [N, classes]. N is the
// symbolic dimension "N": any batch size.
const (
	InputName  = "input"
	OutputName = "logits"
)

// Options adjust what a model records beyond its graph. The zero value is
// fine.
type Options struct {
	// ProducerVersion is the model's producer_version, e.g. neateval's
	// version; empty for none.
	ProducerVersion string
}

// Write writes genome g, for images of shape in and classes classes, as an
// ONNX model to w. A genome that neat.Compile rejects is not written, and
// the error is Compile's *neat.GenomeError.
func Write(w io.Writer, g *neat.Genome, in neat.Input, classes int, o Options) error {
	b, err := Encode(g, in, classes, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Encode is Write to memory: it returns the encoded ModelProto.
func Encode(g *neat.Genome, in neat.Input, classes int, o Options) ([]byte, error) {
	gr, err := neat.Compile(g, in, classes)
	if err != nil {
		return nil, err
	}
	b := &builder{names: make([]string, len(gr.Steps))}
	for i := range gr.Steps {
		if i == len(gr.Steps)-1 {
			b.names[i] = OutputName
		} else {
			b.names[i] = fmt.Sprintf("n%d", gr.Steps[i].Node.ID)
		}
		b.step(gr, i)
	}
	graph := msg(nil)
	for _, n := range b.nodes {
		graph = graph.bytes(graphNode, n)
	}
	graph = graph.str(graphName, fmt.Sprintf("genome_%d", g.ID))
	for _, t := range b.inits {
		graph = graph.bytes(graphInitializer, t)
	}
	graph = graph.str(graphDocString, fmt.Sprintf("neateval genome %d: input [N, %d, %d, %d] as x/255, output the logits [N, %d]",
		g.ID, in.Channels, in.Height, in.Width, classes))
	graph = graph.bytes(graphInput, valueInfo(InputName, int64(in.Channels), int64(in.Height), int64(in.Width)))
	graph = graph.bytes(graphOutput, valueInfo(OutputName, int64(classes)))

	model := msg(nil).varint(modelIRVersion, IRVersion).
		str(modelProducerName, "neateval")
	if o.ProducerVersion != "" {
		model = model.str(modelProducerVersion, o.ProducerVersion)
	}
	model = model.str(modelDocString, fmt.Sprintf("genome %d of a %s population", g.ID, neat.FormatV1)).
		bytes(modelGraph, graph).
		bytes(modelOpsetImport, msg(nil).str(opsetDomain, "").varint(opsetVersion, Opset)).
		bytes(modelMetadataProps, msg(nil).str(entryKey, "neateval.genome_id").str(entryValue, strconv.FormatInt(g.ID, 10)))
	return model, nil
}

// builder collects the nodes and initializers of one graph. names[i] is the
// value name of step i's output; intermediate values are named after the
// step's node id ("n4.merged", "n4.conv"), so a model reads like its genome.
type builder struct {
	names  []string
	nodes  []msg
	inits  []msg
	consts map[string]bool
}

// node appends a NodeProto named after its output.
func (b *builder) node(op string, ins []string, out string, attrs ...msg) {
	n := msg(nil)
	for _, in := range ins {
		n = n.str(nodeInput, in)
	}
	n = n.str(nodeOutput, out).str(nodeName, out).str(nodeOpType, op)
	for _, a := range attrs {
		n = n.bytes(nodeAttribute, a)
	}
	b.nodes = append(b.nodes, n)
}

// scalar returns the name of a float32 constant of shape [] holding v,
// added once per graph.
func (b *builder) scalar(name string, v float32) string {
	if b.consts == nil {
		b.consts = map[string]bool{}
	}
	if !b.consts[name] {
		b.consts[name] = true
		b.inits = append(b.inits, floatTensor(name, nil, []float32{v}))
	}
	return name
}

// input is the value name of a step's j-th input.
func (b *builder) input(gr *neat.Graph, i, j int) string {
	if src := gr.Steps[i].Inputs[j]; src >= 0 {
		return b.names[src]
	}
	return InputName
}

// step appends the nodes of step i: the merge of its inputs, its op and
// its activation, the last of them writing b.names[i].
func (b *builder) step(gr *neat.Graph, i int) {
	s := &gr.Steps[i]
	n := &s.Node
	pre := fmt.Sprintf("n%d.", n.ID)
	x := b.merge(gr, i, pre)
	out := b.names[i]
	act := n.Activation
	if act == neat.ActIdentity || n.Op != neat.OpConv2D && n.Op != neat.OpDense {
		act = ""
	}
	opOut := out
	if act != "" {
		opOut = pre + string(n.Op)
	}
	k, st, p := int64(n.Kernel), int64(n.Stride), int64(n.Padding)
	switch n.Op {
	case neat.OpConv2D:
		w, bias := b.params(gr, s, pre)
		b.node("Conv", []string{x, w, bias}, opOut,
			intsAttr("kernel_shape", k, k), intsAttr("strides", st, st), intsAttr("pads", p, p, p, p))
	case neat.OpMaxPool2D:
		b.node("MaxPool", []string{x}, opOut, intsAttr("kernel_shape", k, k), intsAttr("strides", st, st))
	case neat.OpAvgPool2D:
		b.node("AveragePool", []string{x}, opOut, intsAttr("kernel_shape", k, k), intsAttr("strides", st, st))
	case neat.OpGlobalAvgPool:
		b.node("GlobalAveragePool", []string{x}, pre+"gap")
		b.node("Flatten", []string{pre + "gap"}, opOut, intAttr("axis", 1))
	case neat.OpDense:
		if !s.In.Flat {
			// [N, C, H, W] → [N, C·H·W] in C, H, W order, as the format says.
			b.node("Flatten", []string{x}, pre+"flat", intAttr("axis", 1))
			x = pre + "flat"
		}
		w, bias := b.params(gr, s, pre)
		b.node("Gemm", []string{x, w, bias}, opOut, intAttr("transB", 1))
	}
	if act != "" {
		b.activation(act, opOut, out, pre)
	}
}

// params adds the step's weight and bias as initializers, named as in the
// population's safetensors file, and returns their names.
func (b *builder) params(gr *neat.Graph, s *neat.Step, pre string) (w, bias string) {
	w = fmt.Sprintf("g%d.n%d.weight", gr.GenomeID, s.Node.ID)
	bias = fmt.Sprintf("g%d.n%d.bias", gr.GenomeID, s.Node.ID)
	b.inits = append(b.inits, floatTensor(w, dims(s.Weight.Shape), s.Weight.Data), floatTensor(bias, dims(s.Bias.Shape), s.Bias.Data))
	return w, bias
}

func dims(shape []int) []int64 {
	d := make([]int64, len(shape))
	for i, v := range shape {
		d[i] = int64(v)
	}
	return d
}

// merge appends the nodes that merge step i's inputs and returns the name
// of the merged value. A sum zero-pads every input whose channel (or
// feature) count is below the largest at the end of that axis with Pad,
// then adds them with Add in listed order; a concat is Concat on axis 1.
func (b *builder) merge(gr *neat.Graph, i int, pre string) string {
	s := &gr.Steps[i]
	if len(s.Inputs) == 1 {
		return b.input(gr, i, 0)
	}
	ins := make([]string, len(s.Inputs))
	for j := range s.Inputs {
		ins[j] = b.input(gr, i, j)
	}
	if s.Node.Merge == neat.MergeConcat {
		b.node("Concat", ins, pre+"merged", intAttr("axis", 1))
		return pre + "merged"
	}
	for j, sh := range s.InShapes {
		if sh.C == s.In.C {
			continue
		}
		// Pad's pads are [begin of each axis..., end of each axis...].
		pads := []int64{0, 0, 0, int64(s.In.C - sh.C)}
		if !sh.Flat {
			pads = []int64{0, 0, 0, 0, 0, int64(s.In.C - sh.C), 0, 0}
		}
		pn := fmt.Sprintf("%spads%d", pre, j)
		b.inits = append(b.inits, int64Tensor(pn, []int64{int64(len(pads))}, pads))
		b.node("Pad", []string{ins[j], pn}, fmt.Sprintf("%spadded%d", pre, j))
		ins[j] = fmt.Sprintf("%spadded%d", pre, j)
	}
	acc := ins[0]
	for j := 1; j < len(ins); j++ {
		out := fmt.Sprintf("%ssum%d", pre, j)
		if j == len(ins)-1 {
			out = pre + "merged"
		}
		b.node("Add", []string{acc, ins[j]}, out)
		acc = out
	}
	return acc
}

// activation appends the nodes of activation a from x to out. GELU is the
// exact erf form of the format, x · ½ · (1 + erf(x/√2)).
func (b *builder) activation(a neat.Activation, x, out, pre string) {
	switch a {
	case neat.ActReLU:
		b.node("Relu", []string{x}, out)
	case neat.ActLeakyReLU:
		b.node("LeakyRelu", []string{x}, out, floatAttr("alpha", 0.01))
	case neat.ActTanh:
		b.node("Tanh", []string{x}, out)
	case neat.ActSigmoid:
		b.node("Sigmoid", []string{x}, out)
	case neat.ActGELU:
		b.node("Div", []string{x, b.scalar("sqrt2", math.Sqrt2)}, pre+"gelu_div")
		b.node("Erf", []string{pre + "gelu_div"}, pre+"gelu_erf")
		b.node("Add", []string{pre + "gelu_erf", b.scalar("one", 1)}, pre+"gelu_add")
		b.node("Mul", []string{x, b.scalar("half", 0.5)}, pre+"gelu_half")
		b.node("Mul", []string{pre + "gelu_half", pre + "gelu_add"}, out)
	}
}
