package neat_test

import (
	"slices"
	"testing"

	"github.com/neateval/neateval/neat"
)

// skipGenome is a small network with a skip connection, on in8 (1×8×8) with
// 3 classes, whose figures are worked out by hand in TestFigures:
//
//	node 1 conv2d  [0]   4 ch, k3 p1   → [4 8 8]   256 values
//	node 2 conv2d  [1]   4 ch, k3 p1   → [4 8 8]   256
//	node 3 conv2d  [2 1] sum, 2 ch, k1 → [2 8 8]   128   (node 1 is live across node 2)
//	node 6 conv2d  [3]   4 ch, k3 p1   → [4 8 8]   256
//	node 4 global_avg_pool [6]         → [4]         4
//	node 5 dense   [4]   3 features    → [3]         3
//
// Node 9 is unreachable and counts toward nothing.
func skipGenome() *neat.Genome {
	return &neat.Genome{
		ID:     3,
		Output: 5,
		Nodes: []neat.Node{
			{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: 4, Kernel: 3, Padding: neat.PaddingDefault},
			{ID: 2, Op: neat.OpConv2D, Inputs: []int{1}, OutChannels: 4, Kernel: 3, Padding: neat.PaddingDefault},
			{ID: 3, Op: neat.OpConv2D, Inputs: []int{2, 1}, OutChannels: 2, Kernel: 1, Padding: 0},
			{ID: 6, Op: neat.OpConv2D, Inputs: []int{3}, OutChannels: 4, Kernel: 3, Padding: neat.PaddingDefault},
			{ID: 4, Op: neat.OpGlobalAvgPool, Inputs: []int{6}},
			{ID: 5, Op: neat.OpDense, Inputs: []int{4}, OutFeatures: 3},
			{ID: 9, Op: neat.OpConv2D, Inputs: []int{6}, OutChannels: 64, Kernel: 5, Padding: neat.PaddingDefault},
		},
		Params: map[int]*neat.Params{
			1: params(4, 1, 3, 3), 2: params(4, 4, 3, 3), 3: params(2, 4, 1, 1),
			6: params(4, 2, 3, 3), 5: params(3, 4), 9: params(64, 4, 5, 5),
		},
	}
}

func TestFigures(t *testing.T) {
	gr, err := neat.Compile(skipGenome(), in8, 3)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, s := range gr.Steps {
		order = append(order, s.Node.ID)
	}
	if want := []int{1, 2, 3, 6, 4, 5}; !slices.Equal(order, want) {
		t.Fatalf("evaluation order %v, want %v", order, want)
	}
	// Params: (36+4) + (144+4) + (8+2) + (72+4) + (12+3).
	if gr.Params != 289 {
		t.Errorf("Params %d, want 289", gr.Params)
	}
	// FLOPs: 2 × (4·1·9·64 + 4·4·9·64 + 2·4·1·64 + 4·2·9·64 + 3·4).
	if gr.FLOPs != 33304 {
		t.Errorf("FLOPs %d, want 33304", gr.FLOPs)
	}
	if got := gr.WeightBytes(4); got != 1156 {
		t.Errorf("WeightBytes(4) %d, want 1156", got)
	}
	if got := gr.WeightBytes(2); got != 578 {
		t.Errorf("WeightBytes(2) %d, want 578", got)
	}
	wantRelease := [][]int{nil, nil, {0, 1}, {2}, {3}, {4}}
	for i, s := range gr.Steps {
		if !slices.Equal(s.Release, wantRelease[i]) {
			t.Errorf("step %d (node %d) releases %v, want %v", i, s.Node.ID, s.Release, wantRelease[i])
		}
	}

	// Live values, in elements per image, while each step runs:
	//   node 1: 256                       after: 256
	//   node 2: 256 + 256 = 512           after: 512
	//   node 3: 512 + 128 = 640 (peak)    after: 128 (nodes 1 and 2 die)
	//   node 6: 128 + 256 = 384           after: 256
	//   node 4: 256 + 4   = 260           after: 4
	//   node 5: 4 + 3     = 7             after: 3
	// The sum of all values is 256+256+128+256+4+3 = 903.
	sum := int64(0)
	for _, s := range gr.Steps {
		sum += int64(s.Out.Size())
	}
	cases := []struct {
		name     string
		b, elem  int
		align    int64
		ws       neat.Workspace
		want     int64
		wantLess bool
	}{
		{"one image, float32", 1, 4, 1, nil, 640 * 4, true},
		{"ten images, bfloat16", 10, 2, 1, nil, 640 * 10 * 2, true},
		{"align 0 means 1", 1, 4, 0, nil, 640 * 4, true},
		// Sizes rounded up to 1000 bytes: 1024→2000, 512→1000, 16→1000, 12→1000.
		// node 3 runs with 2000+2000+1000 live.
		{"rounded to 1000 bytes", 1, 4, 1000, nil, 5000, false},
		{"workspace below the peak", 1, 4, 1, func(g *neat.Graph, i, b int) int64 {
			if i == 3 {
				return 1000 // 384·4 + 1000 = 2536 < 2560
			}
			return 0
		}, 640 * 4, true},
		{"workspace makes the peak", 1, 4, 1, func(g *neat.Graph, i, b int) int64 {
			if g.Steps[i].Node.ID == 6 {
				return 2000 * int64(b) // 384·4 + 2000
			}
			return 0
		}, 384*4 + 2000, true},
	}
	for _, c := range cases {
		got := gr.PeakActivationBytes(c.b, c.elem, c.align, c.ws)
		if got != c.want {
			t.Errorf("%s: PeakActivationBytes = %d, want %d", c.name, got, c.want)
		}
		if all := sum * int64(c.b*c.elem); c.wantLess && got >= all {
			t.Errorf("%s: peak %d is not below the sum of all activations %d", c.name, got, all)
		}
	}
}

// A chain's peak is its two largest neighbours, far below the sum.
func TestPeakOfAChain(t *testing.T) {
	g := &neat.Genome{ID: 1, Output: 6, Params: map[int]*neat.Params{6: params(2, 8)}}
	prev := 0
	for id := 1; id <= 4; id++ {
		g.Nodes = append(g.Nodes, neat.Node{ID: id, Op: neat.OpConv2D, Inputs: []int{prev}, OutChannels: 8, Kernel: 1, Padding: 0})
		g.Params[id] = params(8, max(1, 8*min(prev, 1)), 1, 1)
		prev = id
	}
	g.Nodes = append(g.Nodes,
		neat.Node{ID: 5, Op: neat.OpGlobalAvgPool, Inputs: []int{4}},
		neat.Node{ID: 6, Op: neat.OpDense, Inputs: []int{5}, OutFeatures: 2})
	gr, err := neat.Compile(g, in8, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Each conv output is 8·64 = 512 values; two of them live at once.
	if got := gr.PeakActivationBytes(1, 1, 1, nil); got != 1024 {
		t.Errorf("peak %d, want 1024", got)
	}
}
