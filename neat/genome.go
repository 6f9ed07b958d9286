package neat

import "fmt"

// FormatV1 is the value of the "format" field of a population file.
const FormatV1 = "neateval.population/v1"

// Op names a node's operation, as written in the population format.
type Op string

// The ops of the population format v1.
const (
	OpConv2D        Op = "conv2d"
	OpMaxPool2D     Op = "maxpool2d"
	OpAvgPool2D     Op = "avgpool2d"
	OpGlobalAvgPool Op = "global_avg_pool"
	OpDense         Op = "dense"
)

// Ops lists every op of the format, in a fixed order.
var Ops = []Op{OpConv2D, OpMaxPool2D, OpAvgPool2D, OpGlobalAvgPool, OpDense}

// Activation names the function applied after a node's bias.
type Activation string

// The activations of the population format v1.
const (
	ActIdentity  Activation = "identity"
	ActReLU      Activation = "relu"
	ActLeakyReLU Activation = "leaky_relu"
	ActTanh      Activation = "tanh"
	ActSigmoid   Activation = "sigmoid"
	ActGELU      Activation = "gelu"
)

// Activations lists every activation of the format, in a fixed order.
var Activations = []Activation{ActIdentity, ActReLU, ActLeakyReLU, ActTanh, ActSigmoid, ActGELU}

// Merge says how a node with several inputs combines them.
type Merge string

// The merges of the population format v1.
const (
	MergeSum    Merge = "sum"
	MergeConcat Merge = "concat"
)

// PaddingDefault in Node.Padding means "the format's default", kernel/2.
const PaddingDefault = -1

// InputNode is the id of the input batch in every genome. It is never listed.
const InputNode = 0

// Node is one listed node of a genome. Fields that an op does not use are
// zero. Zero values of Stride, Merge and Activation, and PaddingDefault in
// Padding, mean the format's defaults; Compile resolves them.
type Node struct {
	ID          int
	Op          Op
	Inputs      []int
	Merge       Merge
	OutChannels int
	OutFeatures int
	Kernel      int
	Stride      int
	Padding     int
	Activation  Activation
	// Problem is what the loader found wrong with one of the op's fields (a
	// value of the wrong JSON type, out of range, or missing), or "". The
	// format judges fields only on reachable nodes, so Compile reports it
	// only when the node is reachable from the output.
	Problem string
}

// Tensor is a dense float32 array in row-major order.
type Tensor struct {
	Shape []int
	Data  []float32
	// DType is the element type the tensor had in its file ("F32", "F16",
	// "BF16", ...), or "" for a tensor made in memory. F16 and BF16 are
	// converted to float32 on reading; a tensor of any other dtype keeps its
	// shape but has no Data, and Compile rejects it when a reachable node
	// uses it.
	DType string
}

// Len is the number of elements the shape describes.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Params holds a node's weight and bias as they were found in the weights
// file, shapes and dtypes unchecked; either may be nil when the file had no
// such tensor. Compile checks them for the nodes that are reachable.
type Params struct {
	Weight *Tensor
	Bias   *Tensor
}

// Genome is one CNN of a population.
//
// Invalid is set by the loader for a structural problem it found in this
// genome alone (output or nodes missing or of the wrong JSON type, a node
// without a usable id or inputs): such a genome is reported with that error
// and not evaluated, and the rest of the population is. Compile returns it
// before anything else. Problems with an op's fields are kept in the node
// (Node.Problem), since they count only on reachable nodes.
type Genome struct {
	ID      int64
	Output  int
	Nodes   []Node
	Params  map[int]*Params
	Invalid error
}

// Input is the shape of one input image.
type Input struct {
	Channels int
	Height   int
	Width    int
}

// Population is a set of genomes over one input shape and class count.
type Population struct {
	Input      Input
	NumClasses int
	Genomes    []*Genome
}

// GenomeError locates a problem in one genome, and in one node of it when
// Node is not zero.
type GenomeError struct {
	Genome int64
	Node   int // 0 when the problem is not one node's
	Msg    string
}

func (e *GenomeError) Error() string {
	if e.Node != 0 {
		return fmt.Sprintf("genome %d, node %d: %s", e.Genome, e.Node, e.Msg)
	}
	return fmt.Sprintf("genome %d: %s", e.Genome, e.Msg)
}

func genomeErr(g int64, node int, format string, args ...any) error {
	return &GenomeError{Genome: g, Node: node, Msg: fmt.Sprintf(format, args...)}
}
