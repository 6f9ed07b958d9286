package neat

import (
	"math"
	"testing"
)

// TestESUtilities: the rank utilities sum to zero, fall with the rank,
// and reward only the better half.
func TestESUtilities(t *testing.T) {
	for _, n := range []int{2, 3, 10, 31} {
		u := esUtilities(n)
		var sum float64
		for k, v := range u {
			sum += v
			if k > 0 && v > u[k-1] {
				t.Errorf("n=%d: utility %d (%v) above utility %d (%v)", n, k, v, k-1, u[k-1])
			}
			if k >= (n+1)/2 && v > 0 {
				t.Errorf("n=%d: rank %d of the worse half has utility %v > 0", n, k, v)
			}
		}
		if math.Abs(sum) > 1e-12 {
			t.Errorf("n=%d: utilities sum to %v", n, sum)
		}
	}
}

// TestESStepMovesTowardsTheBetterSample: with a mirrored pair, the centre
// moves towards the better sample, by its utility's share of the step.
func TestESStepMovesTowardsTheBetterSample(t *testing.T) {
	centre := &Genome{ID: 1, Params: map[int]*Params{5: {Weight: &Tensor{Shape: []int{1, 2}, Data: []float32{1, 1}}}}}
	plus, minus := centre.Clone(2), centre.Clone(3)
	plus.Params[5].Weight.Data = []float32{1.5, 1}
	minus.Params[5].Weight.Data = []float32{0.5, 1}
	e := &Evolution{pop: []*Genome{centre, minus, plus}, fitness: []float64{0, 0.1, 0.9}}
	got := e.esStep(centre, []int{1, 2}, 9).Params[5].Weight.Data
	u := esUtilities(2) // the better sample gets u[0] = 0.5, the worse −0.5
	want := float32(1 + u[0]*0.5 + u[1]*-0.5)
	if got[0] != want || got[1] != 1 {
		t.Errorf("centre moved to %v, want [%v 1]", got, want)
	}
	if centre.Params[5].Weight.Data[0] != 1 {
		t.Error("esStep changed the old centre")
	}
}
