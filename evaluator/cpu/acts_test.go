package cpu

import (
	"math"
	"slices"
	"testing"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu/kernels"
	"github.com/neateval/neateval/neat"
)

// TestStepActs checks which activations stepActs moves after a max pool
// on the bench's small population: exactly the tanh and sigmoid
// convolutions whose only reader is a one-input max pool, each to that
// pool; every other step keeps its own.
func TestStepActs(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	pop := neat.Generate(1, 64, in, 10, neat.DefaultGenConfig())
	moved := 0
	for _, gen := range pop.Genomes {
		g, err := neat.Compile(gen, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		own, post := stepActs(g)
		for i := range g.Steps {
			s, a := &g.Steps[i], activations[g.Steps[i].Node.Activation]
			readers := 0
			for j := range g.Steps {
				if slices.Contains(g.Steps[j].Inputs, i) {
					readers++
				}
			}
			r := onlyReader(g, i)
			want := s.Node.Op == neat.OpConv2D && (a == kernels.Tanh || a == kernels.Sigmoid) && readers == 1 &&
				g.Steps[r].Node.Op == neat.OpMaxPool2D && len(g.Steps[r].Inputs) == 1
			switch {
			case want && (own[i] != kernels.Identity || post[r] != a):
				t.Errorf("genome %d step %d (%s %s, read by a max pool only): own %v, pool's post %v", g.GenomeID, i, s.Node.Op, a, own[i], post[r])
			case !want && own[i] != a:
				t.Errorf("genome %d step %d (%s %s): own %v", g.GenomeID, i, s.Node.Op, a, own[i])
			case want:
				moved++
			}
			if post[i] != kernels.Identity && s.Node.Op != neat.OpMaxPool2D {
				t.Errorf("genome %d step %d (%s): post %v", g.GenomeID, i, s.Node.Op, post[i])
			}
		}
	}
	if moved == 0 {
		t.Fatal("no activation moved after a max pool")
	}
	t.Logf("%d activations moved after a max pool", moved)
}

// TestActsAfterPoolClose compares the forwards of the small population's
// genomes that move an activation after a max pool with the graph's order
// (activation, then pool): the loss within 1e-6 relative, and the same
// number of correct images.
func TestActsAfterPoolClose(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	ds := datasets.Synthetic(200, 1, 28, 28, 10, 3)
	pop := neat.Generate(1, 64, in, 10, neat.DefaultGenConfig())
	checked, differ := 0, 0
	for _, gen := range pop.Genomes {
		g, err := neat.Compile(gen, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		if own, _ := stepActs(g); slices.Equal(own, ownActs(g)) {
			continue
		}
		var st [2]evaluator.SliceStats
		for k, deferred := range []bool{false, true} {
			prev := deferToPool
			deferToPool = deferred
			st[k] = forwardOnce(t, g, ds)
			deferToPool = prev
		}
		a, b := st[0].LossSum.Float64(), st[1].LossSum.Float64()
		if math.Abs(a-b) > 1e-6*math.Abs(a) || st[0].Correct != st[1].Correct || st[0].NonFinite != st[1].NonFinite {
			t.Errorf("genome %d: after the pool %+v, before %+v", g.GenomeID, st[1], st[0])
		}
		if !st[0].Equal(st[1]) {
			differ++
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no genome moves an activation after a max pool")
	}
	t.Logf("%d genomes, %d with other bits than the graph's order", checked, differ)
}

// ownActs is every step's own activation, none moved.
func ownActs(g *neat.Graph) []kernels.Act {
	a := make([]kernels.Act, len(g.Steps))
	for i := range g.Steps {
		a[i] = activations[g.Steps[i].Node.Activation]
	}
	return a
}
