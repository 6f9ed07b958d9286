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
	e := &Evolution{cfg: EvolveConfig{ESRate: 1}, pop: []*Genome{centre, minus, plus}, fitness: []float64{0, 0.1, 0.9}}
	st := &esState{Sigma: esTensors{5: {{0.5, 0.5}, nil}}}
	moved, _ := e.esStep(centre, st, []int{1, 2}, 9)
	got := moved.Params[5].Weight.Data
	u := esUtilities(2) // the better sample gets u[0] = 0.5, the worse −0.5
	want := float32(1 + u[0]*0.5 + u[1]*-0.5)
	if got[0] != want || got[1] != 1 {
		t.Errorf("centre moved to %v, want [%v 1]", got, want)
	}
	if centre.Params[5].Weight.Data[0] != 1 {
		t.Error("esStep changed the old centre")
	}
}

// TestESSigmaFollowsTheBetterSteps: SNES's σ grows when the better samples
// stepped further than σ and shrinks when they stepped less, and stays
// without ESSigmaRate; momentum adds the last move.
func TestESSigmaFollowsTheBetterSteps(t *testing.T) {
	centre := &Genome{ID: 1, Params: map[int]*Params{5: {Weight: &Tensor{Shape: []int{1, 1}, Data: []float32{0}}}}}
	sample := func(id int64, w float32) *Genome { return withWeight0(centre, id, w) }
	pop := []*Genome{centre, sample(2, 2), sample(3, -2), sample(4, 0.5), sample(5, -0.5)}
	st := &esState{Sigma: esTensors{5: {{1}, nil}}, Velocity: esTensors{5: {{0.25}, nil}}}
	for _, c := range []struct {
		name    string
		rate    float64
		fitness []float64 // of centre, ±2, ±0.5
		grows   int       // +1: σ grows, −1: shrinks, 0: stays
	}{
		{"far samples better", 1, []float64{0, 0.9, 0.8, 0.2, 0.1}, 1},
		{"near samples better", 1, []float64{0, 0.2, 0.1, 0.9, 0.8}, -1},
		{"fixed σ", 0, []float64{0, 0.9, 0.8, 0.2, 0.1}, 0},
	} {
		e := &Evolution{cfg: EvolveConfig{ESRate: 1, ESSigmaRate: c.rate, ESMomentum: 0.5}, pop: pop, fitness: c.fitness}
		g, next := e.esStep(centre, st, []int{1, 2, 3, 4}, 9)
		sig := next.Sigma[5][0][0]
		switch {
		case c.grows > 0 && !(sig > 1), c.grows < 0 && !(sig < 1), c.grows == 0 && sig != 1:
			t.Errorf("%s: σ 1 became %v", c.name, sig)
		}
		u := esUtilities(4)
		step := u[0]*2 + u[1]*-2 + u[2]*0.5 + u[3]*-0.5 // the two far samples first
		if c.fitness[3] > c.fitness[1] {
			step = u[0]*0.5 + u[1]*-0.5 + u[2]*2 + u[3]*-2
		}
		want := float32(0.5*0.25 + step)
		if got := g.Params[5].Weight.Data[0]; math.Abs(float64(got-want)) > 1e-6 || next.Velocity[5][0][0] != got {
			t.Errorf("%s: centre moved to %v (velocity %v), want %v", c.name, got, next.Velocity[5][0][0], want)
		}
	}
}

// TestESSigmaPerTensor: per tensor, every parameter of a tensor keeps one
// σ, moved by the mean of the parameters' updates; per parameter, each
// moves on its own.
func TestESSigmaPerTensor(t *testing.T) {
	centre := &Genome{ID: 1, Params: map[int]*Params{5: {Weight: &Tensor{Shape: []int{1, 2}, Data: []float32{0, 0}}}}}
	sample := func(id int64, w0 float32) *Genome { return withWeight0(centre, id, w0) } // the second weight did not move
	pop := []*Genome{centre, sample(2, 2), sample(3, -2), sample(4, 0.5), sample(5, -0.5)}
	st := &esState{Sigma: esTensors{5: {{1, 1}, nil}}}
	for _, scope := range []string{ESSigmaPerTensor, ESSigmaPerParameter} {
		e := &Evolution{cfg: EvolveConfig{ESRate: 1, ESSigmaRate: 1, ESSigmaScope: scope}, pop: pop, fitness: []float64{0, 0.9, 0.8, 0.2, 0.1}}
		_, next := e.esStep(centre, st, []int{1, 2, 3, 4}, 9)
		s := next.Sigma[5][0]
		if same := s[0] == s[1]; same != (scope == ESSigmaPerTensor) || s[0] == 1 {
			t.Errorf("%s: σ [1 1] became %v", scope, s)
		}
	}
}

// TestESAnneal: the schedule starts at 1, is halfway at half its length,
// reaches its final share at the end and stays there; without one it is 1.
func TestESAnneal(t *testing.T) {
	for _, c := range []struct {
		gen, over int
		final     float64
		want      float64
	}{
		{0, 100, 0.1, 1}, {50, 100, 0.1, 0.55}, {100, 100, 0.1, 0.1}, {500, 100, 0.1, 0.1},
		{-1, 100, 0.1, 1}, {7, 0, 0.1, 1},
	} {
		if got := Anneal(c.gen, c.over, c.final); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Anneal(%d, %d, %v) = %v, want %v", c.gen, c.over, c.final, got, c.want)
		}
	}
}

// TestESStepAnnealed: at the end of the schedule the centre moves by
// ESRateFinal of the step, and σ's update measures the samples against
// the σ they were drawn with, s(t)σ.
func TestESStepAnnealed(t *testing.T) {
	centre := &Genome{ID: 1, Params: map[int]*Params{5: {Weight: &Tensor{Shape: []int{1, 1}, Data: []float32{0}}}}}
	sample := func(id int64, w float32) *Genome { return withWeight0(centre, id, w) }
	cfg := EvolveConfig{ESRate: 1, ESSigmaRate: 1, ESAnneal: 10, ESRateFinal: 0.25, ESSigmaFinal: 0.5}
	pop := []*Genome{centre, sample(2, 2), sample(3, -2), sample(4, 0.5), sample(5, -0.5)}
	e := &Evolution{cfg: cfg, gen: 20, pop: pop, fitness: []float64{0, 0.9, 0.8, 0.2, 0.1}}
	st := &esState{Sigma: esTensors{5: {{2}, nil}}} // drawn with s(t)σ = 1
	g, next := e.esStep(centre, st, []int{1, 2, 3, 4}, 9)
	u := esUtilities(4)
	if got, want := g.Params[5].Weight.Data[0], float32(0.25*(u[0]*2+u[1]*-2+u[2]*0.5+u[3]*-0.5)); got != want {
		t.Errorf("centre moved to %v, want %v", got, want)
	}
	gsig := (u[0]+u[1])*(2*2-1) + (u[2]+u[3])*(0.5*0.5-1) // ε = d / (s(t)σ)
	want := float32(2 * math.Exp(snesSigmaRate(centre, false)/2*gsig))
	if sig := next.Sigma[5][0][0]; math.Abs(float64(sig-want)) > 1e-6 {
		t.Errorf("σ 2 became %v, want %v", sig, want)
	}
}

// withWeight0 is a copy of centre, id id, whose node 5's first weight is w.
func withWeight0(centre *Genome, id int64, w float32) *Genome {
	g := centre.Clone(id)
	g.Params[5].Weight.Data[0] = w
	return g
}
