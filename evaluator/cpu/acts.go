package cpu

import (
	"slices"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
)

// Activations after a max pool.
//
// A max pool keeps each window's largest input, and a non-decreasing
// activation keeps which input is largest: activation then pool and pool
// then activation are the same function, and the second runs the
// activation on a quarter of the values (2×2 windows of stride 2) or
// fewer. So in float32 a tanh or sigmoid convolution whose output only a
// max pool reads leaves its activation to the pool's output (stepActs):
// the convolution stores its sums, the pool picks among them, and the
// activation runs on what the pool kept. On the bench's small preset that
// saved about 2 % of the time (bench/NOTES.md, stop 26).
//
// The float32 tanh and sigmoid of package kernels are non-decreasing only
// to within a few units in the last place: counted over every float32,
// tanh steps down at 15 M of its inputs, to at most 10 ulp below the
// largest earlier value (near ±7.3, where tanh is within 1e-6 of ±1), and
// sigmoid at 0.15 M, by at most 2 ulp. Where a window's largest input sits
// on such a step, the pooled value comes out up to that much below the
// activation-first order's: 6e-7 absolute at worst, within the
// conformance tolerance of the float64 reference. The choice is the
// graph's alone, so a genome's results stay one set of bits whatever the
// batch, tiling, threads or conv-pool fusion. ReLU and LeakyReLU, fused
// into the convolution's store at no cost, stay before the pool; GELU is
// not monotone; bfloat16 forwards keep the graph's order.

// deferToPool lets stepActs move activations after max pools (tests
// compare the two orders).
var deferToPool = true

// stepActs returns, per step of g, the activation its kernel applies
// (own) and the one applied to its output afterwards (post, Identity for
// none): a tanh or sigmoid convolution whose output only a max pool reads
// (and no other step) gets Identity, and that pool its activation.
func stepActs(g *neat.Graph) (own, post []kernels.Act) {
	own = make([]kernels.Act, len(g.Steps))
	post = make([]kernels.Act, len(g.Steps))
	for i := range g.Steps {
		own[i] = activations[g.Steps[i].Node.Activation]
	}
	if !deferToPool {
		return own, post
	}
	for i := range g.Steps {
		a := own[i]
		if g.Steps[i].Node.Op != neat.OpConv2D || (a != kernels.Tanh && a != kernels.Sigmoid) {
			continue
		}
		if r := onlyReader(g, i); r >= 0 && g.Steps[r].Node.Op == neat.OpMaxPool2D && len(g.Steps[r].Inputs) == 1 {
			own[i], post[r] = kernels.Identity, a
		}
	}
	return own, post
}

// onlyReader returns the one step that reads step i's output, or −1 if
// none or several do.
func onlyReader(g *neat.Graph, i int) int {
	r := -1
	for j := i + 1; j < len(g.Steps); j++ {
		if slices.Contains(g.Steps[j].Inputs, i) {
			if r >= 0 {
				return -1
			}
			r = j
		}
	}
	return r
}
