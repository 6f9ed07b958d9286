package neat

import "fmt"

// Shape is the per-image shape of a value: [C, H, W] for a 4-D value
// ([B, C, H, W] with the batch), or [C] for a 2-D one ([B, C]), when Flat.
// A flat shape has H = W = 1.
type Shape struct {
	C, H, W int
	Flat    bool
}

// Size is the number of elements of one image's value.
func (s Shape) Size() int { return s.C * s.H * s.W }

func (s Shape) String() string {
	if s.Flat {
		return fmt.Sprintf("[B %d]", s.C)
	}
	return fmt.Sprintf("[B %d %d %d]", s.C, s.H, s.W)
}

// Step is one reachable node of a compiled graph, with every default
// resolved and every shape known.
type Step struct {
	// Node is the listed node with Stride, Padding, Merge and Activation
	// resolved to the values in force.
	Node Node
	// Inputs are the values the node reads, in listed order: an index into
	// Graph.Steps, or -1 for the input batch.
	Inputs []int
	// InShapes are the shapes of Inputs; In is the shape after merging.
	InShapes []Shape
	In       Shape
	Out      Shape
	// Weight and Bias are the node's parameters (conv2d and dense), checked
	// against the shapes: Weight [out, in, k, k] or [out, in], Bias [out].
	Weight *Tensor
	Bias   *Tensor
	// Release lists the steps whose values are dead once this step has run:
	// their last consumer is this step, and none of them is the output.
	Release []int
	// FLOPs is 2 × the multiply-adds of this step for one image.
	FLOPs int64
}

// Graph is a genome compiled for evaluation: its reachable nodes in an order
// that respects every edge, shapes inferred, parameters checked.
//
// The order and Release lists are the liveness schedule that every backend
// follows; the memory figures are computed from that same schedule, so the
// figures and the allocations a backend makes agree.
type Graph struct {
	GenomeID   int64
	Input      Shape
	NumClasses int
	// Steps are the reachable nodes in evaluation order; the output is last.
	Steps []Step
	// Params is the number of weights and biases of the reachable nodes.
	Params int64
	// FLOPs is 2 × the multiply-adds of the reachable conv2d and dense nodes,
	// for one image.
	FLOPs int64
}

// WeightBytes is the memory of the graph's parameters with elemSize bytes per
// element (4 for float32, 2 for bfloat16).
func (g *Graph) WeightBytes(elemSize int) int64 { return g.Params * int64(elemSize) }

// Workspace, when given to PeakActivationBytes, says how many bytes of
// scratch memory a backend allocates while it runs step i for a batch of b
// images, beyond the step's output: a merged input it materialises, a
// kernel's scratch, converted tiles. Return it rounded as the backend's
// allocator rounds.
type Workspace func(g *Graph, i int, b int) int64

// PeakActivationBytes is the largest amount of activation memory live at
// once during a forward of b images with elemSize bytes per element,
// following the graph's liveness schedule: at step i, the values still to be
// read, the step's output and its workspace are live together; after it, the
// workspace and the values in Release are freed. The output stays live to
// the end. The input batch is not counted: it is the caller's. Every value's
// size is rounded up to a multiple of align (the allocator's rounding; 1 for
// none).
func (g *Graph) PeakActivationBytes(b, elemSize int, align int64, ws Workspace) int64 {
	if align < 1 {
		align = 1
	}
	var live, peak int64
	size := func(i int) int64 {
		n := int64(g.Steps[i].Out.Size()) * int64(b) * int64(elemSize)
		return (n + align - 1) / align * align
	}
	for i := range g.Steps {
		var w int64
		if ws != nil {
			w = ws(g, i, b)
		}
		out := size(i)
		if p := live + w + out; p > peak {
			peak = p
		}
		live += out
		for _, r := range g.Steps[i].Release {
			live -= size(r)
		}
	}
	return peak
}
