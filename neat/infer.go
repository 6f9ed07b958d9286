package neat

import (
	"math"
	"slices"
)

// inferStep resolves the defaults of one reachable node, checks its fields,
// merges its input shapes, infers its output shape and checks its
// parameters.
func inferStep(gid int64, s *Step, p *Params, withParams bool) error {
	n := &s.Node
	id := n.ID
	if err := resolveFields(gid, n); err != nil {
		return err
	}
	in, err := mergeShapes(gid, s)
	if err != nil {
		return err
	}
	s.In = in

	// Output shape.
	switch n.Op {
	case OpConv2D, OpMaxPool2D, OpAvgPool2D:
		if in.Flat {
			return genomeErr(gid, id, "%s needs a 4-D input, got %v", n.Op, in)
		}
		if in.H+2*n.Padding < n.Kernel || in.W+2*n.Padding < n.Kernel {
			return genomeErr(gid, id, "%s kernel %d stride %d padding %d on input %v gives an output below 1×1",
				n.Op, n.Kernel, n.Stride, n.Padding, in)
		}
		h := (in.H+2*n.Padding-n.Kernel)/n.Stride + 1
		w := (in.W+2*n.Padding-n.Kernel)/n.Stride + 1
		c := in.C
		if n.Op == OpConv2D {
			c = n.OutChannels
		}
		s.Out = Shape{C: c, H: h, W: w}
	case OpGlobalAvgPool:
		if in.Flat {
			return genomeErr(gid, id, "global_avg_pool needs a 4-D input, got %v", in)
		}
		s.Out = Shape{C: in.C, H: 1, W: 1, Flat: true}
	case OpDense:
		s.Out = Shape{C: n.OutFeatures, H: 1, W: 1, Flat: true}
	}
	if !sizeOK(s.Out) {
		return genomeErr(gid, id, "%s output %v has more than %d elements per image", n.Op, s.Out, MaxSize)
	}

	// Parameters and FLOPs.
	switch n.Op {
	case OpConv2D:
		s.FLOPs = satMul(2, int64(n.OutChannels), int64(in.C), int64(n.Kernel), int64(n.Kernel), int64(s.Out.H), int64(s.Out.W))
	case OpDense:
		s.FLOPs = satMul(2, int64(n.OutFeatures), int64(in.Size()))
	}
	if wshape := s.WeightShape(); wshape != nil && withParams {
		if err := checkParams(gid, n, p, wshape); err != nil {
			return err
		}
		s.Weight, s.Bias = p.Weight, p.Bias
	}
	return nil
}

// WeightShape is the shape the step's weight must have: [out, in, k, k] for
// a conv2d, [out, in] for a dense node, nil for an op without weights. The
// bias is [out].
func (s *Step) WeightShape() []int {
	switch s.Node.Op {
	case OpConv2D:
		return []int{s.Node.OutChannels, s.In.C, s.Node.Kernel, s.Node.Kernel}
	case OpDense:
		return []int{s.Node.OutFeatures, s.In.Size()}
	}
	return nil
}

// params is the number of weights and biases the step's shapes call for.
func (s *Step) params() int64 {
	w := s.WeightShape()
	if w == nil {
		return 0
	}
	n := int64(1)
	for _, d := range w {
		n = satMul(n, int64(d))
	}
	return satAdd(n, int64(w[0]))
}

// resolveFields replaces the zero values that mean "default" by the values in
// force and checks every field the node's op uses.
func resolveFields(gid int64, n *Node) error {
	id := n.ID
	if len(n.Inputs) == 1 {
		n.Merge = MergeSum // ignored on a node with one input, whatever it says
	}
	if n.Merge == "" {
		n.Merge = MergeSum
	}
	if n.Merge != MergeSum && n.Merge != MergeConcat {
		return genomeErr(gid, id, "unknown merge %q (want sum or concat)", n.Merge)
	}
	switch n.Op {
	case OpConv2D, OpMaxPool2D, OpAvgPool2D:
		if err := fieldRange(gid, n, "kernel", n.Kernel, 1); err != nil {
			return err
		}
		if n.Stride == 0 {
			if n.Op == OpConv2D {
				n.Stride = 1
			} else {
				n.Stride = n.Kernel
			}
		}
		if err := fieldRange(gid, n, "stride", n.Stride, 1); err != nil {
			return err
		}
	}
	switch n.Op {
	case OpConv2D:
		if n.Padding == PaddingDefault {
			n.Padding = n.Kernel / 2
		}
		if err := fieldRange(gid, n, "padding", n.Padding, 0); err != nil {
			return err
		}
		if err := fieldRange(gid, n, "out_channels", n.OutChannels, 1); err != nil {
			return err
		}
		if n.Activation == "" {
			n.Activation = ActReLU
		}
	case OpDense:
		if err := fieldRange(gid, n, "out_features", n.OutFeatures, 1); err != nil {
			return err
		}
		if n.Activation == "" {
			n.Activation = ActIdentity
		}
	case OpMaxPool2D, OpAvgPool2D:
		n.Padding = 0
	case OpGlobalAvgPool:
	case "":
		return genomeErr(gid, id, "op is missing")
	default:
		return genomeErr(gid, id, "unknown op %q", n.Op)
	}
	if n.Op == OpConv2D || n.Op == OpDense {
		if !slices.Contains(Activations, n.Activation) {
			return genomeErr(gid, id, "unknown activation %q", n.Activation)
		}
	}
	return nil
}

// fieldRange checks lo ≤ v ≤ MaxSize for one of a node's integer fields.
func fieldRange(gid int64, n *Node, field string, v, lo int) error {
	if v < lo {
		return genomeErr(gid, n.ID, "%s %s %d, want ≥ %d", n.Op, field, v, lo)
	}
	if v > MaxSize {
		return genomeErr(gid, n.ID, "%s %s %d, want ≤ %d", n.Op, field, v, MaxSize)
	}
	return nil
}

// mergeShapes checks that a node's inputs can be merged and returns the
// merged shape.
func mergeShapes(gid int64, s *Step) (Shape, error) {
	n := &s.Node
	in := s.InShapes[0]
	for j, sh := range s.InShapes[1:] {
		if sh.Flat != in.Flat {
			return in, genomeErr(gid, n.ID, "cannot merge a 2-D and a 4-D input (input %d is %v, input %d is %v)",
				n.Inputs[0], s.InShapes[0], n.Inputs[j+1], sh)
		}
		if !sh.Flat && (sh.H != in.H || sh.W != in.W) {
			return in, genomeErr(gid, n.ID, "%s merge of inputs with different spatial sizes (input %d is %v, input %d is %v)",
				n.Merge, n.Inputs[0], s.InShapes[0], n.Inputs[j+1], sh)
		}
	}
	if len(s.InShapes) == 1 {
		return in, nil
	}
	switch n.Merge {
	case MergeSum:
		for _, sh := range s.InShapes[1:] {
			in.C = max(in.C, sh.C)
		}
	case MergeConcat:
		if in.Flat {
			return in, genomeErr(gid, n.ID, "concat merge of 2-D inputs")
		}
		for _, sh := range s.InShapes[1:] {
			in.C += sh.C
		}
		if !sizeOK(in) {
			return in, genomeErr(gid, n.ID, "concat merge %v has more than %d elements per image", in, MaxSize)
		}
	}
	return in, nil
}

// sizeOK reports whether every dimension of s and its size are at most
// MaxSize, without overflowing.
func sizeOK(s Shape) bool {
	if s.C > MaxSize || s.H > MaxSize || s.W > MaxSize {
		return false
	}
	return int64(s.C)*int64(s.H) <= MaxSize && int64(s.C)*int64(s.H)*int64(s.W) <= MaxSize
}

func checkParams(gid int64, n *Node, p *Params, wshape []int) error {
	var w, b *Tensor
	if p != nil {
		w, b = p.Weight, p.Bias
	}
	if err := checkTensor(gid, n, "weight", w, wshape); err != nil {
		return err
	}
	return checkTensor(gid, n, "bias", b, wshape[:1])
}

// floatDTypes are the file dtypes whose tensors are converted to float32.
var floatDTypes = []string{"", "F32", "F16", "BF16"}

func checkTensor(gid int64, n *Node, name string, t *Tensor, want []int) error {
	if t == nil {
		return genomeErr(gid, n.ID, "%s %s shape none, want %v", n.Op, name, want)
	}
	if !slices.Contains(floatDTypes, t.DType) {
		return genomeErr(gid, n.ID, "%s %s dtype %s (shape %v), want F32, F16 or BF16", n.Op, name, t.DType, t.Shape)
	}
	if !slices.Equal(t.Shape, want) {
		return genomeErr(gid, n.ID, "%s %s shape %v, want %v", n.Op, name, t.Shape, want)
	}
	if len(t.Data) != t.Len() {
		return genomeErr(gid, n.ID, "%s %s has %d values for shape %v", n.Op, name, len(t.Data), t.Shape)
	}
	if i := firstNonFinite(t.Data); i >= 0 {
		v := t.Data[i]
		return genomeErr(gid, n.ID, "%s %s has a non-finite value (%v) at flat index %d", n.Op, name, v, i)
	}
	return nil
}

// firstNonFinite is the index of the first NaN or ±Inf in v, or −1. A value
// is not finite when its exponent bits are all ones; the scan tests eight
// values a step without a branch (adding 1 to an all-ones exponent carries
// into the sign bit), so that checking a population's weights runs at the
// speed of memory: 134 M weights of 10,000 small genomes took 0.8 s one
// value at a time.
func firstNonFinite(v []float32) int {
	const exp, one, sign = 0x7f800000, 0x00800000, 0x80000000
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		var bad uint32
		for _, x := range w {
			bad |= (math.Float32bits(x) & exp) + one
		}
		if bad&sign != 0 {
			break
		}
	}
	for ; i < len(v); i++ {
		if math.Float32bits(v[i])&exp == exp {
			return i
		}
	}
	return -1
}
