package kernels_test

import (
	"fmt"

	"github.com/neateval/neateval/evaluator/cpu/kernels"
)

// A 3×3 convolution with one input and one output channel, zero padding 1:
// each output is the sum of its 3×3 neighbourhood plus the bias.
func ExampleConv2D() {
	s := kernels.ConvShape{C: 1, H: 3, W: 3, OC: 1, K: 3, Stride: 1, Pad: 1}
	s.OH, s.OW = kernels.OutSize(s.H, s.K, s.Stride, s.Pad), kernels.OutSize(s.W, s.K, s.Stride, s.Pad)
	src := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	w := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
	bias := []float32{-10}
	dst := make([]float32, s.OC*s.OH*s.OW)
	ws := make([]float32, kernels.ConvWorkspace(s, 1, 1))
	kernels.Conv2D(dst, src, w, bias, s, 1, kernels.ReLU, ws, 1)
	fmt.Println(dst)
	// Output: [2 11 6 17 35 23 14 29 18]
}

// A dense layer of two outputs over three features, for a batch of two.
func ExampleDense() {
	src := []float32{1, 2, 3, 0, 0, 1} // two rows of three features
	w := []float32{1, 0, -1, 0.5, 0.5, 0.5}
	bias := []float32{0, 1}
	dst := make([]float32, 4)
	ws := make([]float32, kernels.DenseWorkspace(3, 2, 2, 1))
	kernels.Dense(dst, src, w, bias, 2, 3, 2, kernels.Identity, ws, 1)
	fmt.Println(dst)
	// Output: [-2 4 -1 1.5]
}

func ExampleMaxPool2D() {
	src := []float32{
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 1, 2, 3,
		4, 5, 6, 0,
	}
	dst := make([]float32, 4)
	kernels.MaxPool2D(dst, src, 1, 1, 4, 4, 2, 2, 2, 2)
	fmt.Println(dst)
	// Output: [6 8 9 6]
}

func ExampleApply() {
	x := []float32{-2, -0.5, 0, 1}
	kernels.Apply(kernels.LeakyReLU, x)
	fmt.Println(x)
	// Output: [-0.02 -0.005 0 1]
}

// Tests and benchmarks compare the paths by selecting them in turn.
func ExampleSelect() {
	prev, err := kernels.Select(kernels.PureGo)
	if err != nil {
		panic(err)
	}
	defer kernels.Select(prev)
	fmt.Println(kernels.Selected())
	// Output: purego
}
