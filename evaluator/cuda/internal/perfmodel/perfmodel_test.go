package perfmodel

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// TestBlocksPerSM checks the occupancy arithmetic against figures worked
// by hand: 110 registers are 3,584 a warp, 28,672 a block of 8 warps, so
// 2 blocks in 65,536; 32 registers leave the threads (8 blocks) as the
// limit; 100 KB of shared memory allow 2.
func TestBlocksPerSM(t *testing.T) {
	for _, tc := range []struct {
		r    kernels.Resource
		want int
	}{
		{kernels.Resource{Registers: 110, Shared: 13760}, 2},
		{kernels.Resource{Registers: 32}, 8},
		{kernels.Resource{Registers: 32, Shared: 100 << 10}, 2},
	} {
		if got := H200.BlocksPerSM(tc.r, 256); got != tc.want {
			t.Errorf("%+v: %d blocks, want %d", tc.r, got, tc.want)
		}
	}
}

// TestPredictConv checks one convolution's figures: 4 output channels of a
// 1-channel 28×28 image with 3×3 taps, 1,000 images: useful FLOPs 2 ×
// 784,000 × 4 × 9, issued with the 16-row tile and the 16-deep k-step.
func TestPredictConv(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	g := &neat.Genome{ID: 1, Output: 3, Nodes: []neat.Node{
		{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: 4, Kernel: 3, Stride: 1, Padding: 1, Activation: neat.ActReLU},
		{ID: 2, Op: neat.OpGlobalAvgPool, Inputs: []int{1}},
		{ID: 3, Op: neat.OpDense, Inputs: []int{2}, OutFeatures: 10, Activation: neat.ActIdentity},
	}, Params: map[int]*neat.Params{
		1: {Weight: &neat.Tensor{Shape: []int{4, 1, 3, 3}, Data: make([]float32, 36)}, Bias: &neat.Tensor{Shape: []int{4}, Data: make([]float32, 4)}},
		3: {Weight: &neat.Tensor{Shape: []int{10, 4}, Data: make([]float32, 40)}, Bias: &neat.Tensor{Shape: []int{10}, Data: make([]float32, 10)}},
	}}
	gr, err := neat.Compile(g, in, 10)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sched.Build(gr, vram.Float32, 1000, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kernels.Resources()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Predict(H200, res, &p.Launches[0])
	if err != nil {
		t.Fatal(err)
	}
	cols := 784000.0
	if c.FLOPs != 2*cols*4*9 || c.Issued != 2*cols*16*16 {
		t.Errorf("FLOPs %g issued %g, want %g and %g", c.FLOPs, c.Issued, 2*cols*4*9, 2*cols*16*16)
	}
	if want := cols*4 + 4*10*4 + cols*4*4; c.Bytes != want {
		t.Errorf("bytes %g, want %g", c.Bytes, want)
	}
	if c.Time < c.Compute || c.Time < c.Mem || c.Time < H200.MinBlock {
		t.Errorf("time %v under a term: %+v", c.Time, c)
	}
	for i := range p.Launches {
		if _, err := Predict(H200, res, &p.Launches[i]); err != nil {
			t.Error(err)
		}
	}
	if c.Bound(time.Microsecond) == "" {
		t.Error("no bound")
	}
}

// TestReportCommitted regenerates docs/gpu-performance-model.md and
// compares it with the committed one (make perf-model rewrites it).
func TestReportCommitted(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../../../docs/gpu-performance-model.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Error("docs/gpu-performance-model.md is not what the model gives now: make perf-model")
	}
}
