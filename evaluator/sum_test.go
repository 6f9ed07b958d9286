package evaluator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactSum is the sum of xs rounded once, computed with math/big.
func exactSum(xs []float64) float64 {
	acc := new(big.Float).SetPrec(4096)
	for _, x := range xs {
		acc.Add(acc, new(big.Float).SetPrec(4096).SetFloat64(x))
	}
	f, _ := acc.Float64()
	return f
}

// sumTerms draws terms across the whole float64 range: subnormals, the
// largest values, both signs, and values that cancel.
func sumTerms(r *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		switch r.IntN(6) {
		case 0:
			xs[i] = math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
		case 1:
			xs[i] = math.MaxFloat64 * r.Float64() / 4
		case 2:
			xs[i] = math.Ldexp(r.Float64(), r.IntN(2098)-1074)
		case 3:
			xs[i] = -xs[max(i-1, 0)] // cancels the term before
		default:
			xs[i] = r.ExpFloat64() // losses' range
		}
		if r.IntN(2) == 0 {
			xs[i] = -xs[i]
		}
	}
	return xs
}

func TestSumIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		xs := sumTerms(r, 1+r.IntN(200))
		var s Sum
		for _, x := range xs {
			s.Add(x)
		}
		want := exactSum(xs)
		if got := s.Float64(); got != want && !(got == 0 && want == 0) {
			t.Fatalf("trial %d: Sum of %d terms = %v (%x), want %v (%x)", trial, len(xs), got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

// TestSumIgnoresGrouping sums the same terms in shuffled order and in
// random groups merged in random order: the result is the same bits.
func TestSumIgnoresGrouping(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		xs := make([]float64, 1+r.IntN(300))
		for i := range xs {
			xs[i] = r.ExpFloat64() * math.Pow(10, float64(r.IntN(12)-6))
		}
		want := SumOf(xs...).Float64()
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var groups []Sum
		for lo := 0; lo < len(xs); {
			hi := min(len(xs), lo+1+r.IntN(40))
			groups = append(groups, SumOf(xs[lo:hi]...))
			lo = hi
		}
		var total Sum
		for _, i := range r.Perm(len(groups)) {
			total.Merge(groups[i])
		}
		if got := total.Float64(); got != want {
			t.Fatalf("trial %d: grouped %v, whole %v", trial, got, want)
		}
	}
}

func TestSumSmallCases(t *testing.T) {
	tiny := math.SmallestNonzeroFloat64
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{1, 2, 3.5}, 6.5},
		{[]float64{1e16, 1, -1e16}, 1}, // float64 left to right gives 0
		{[]float64{tiny, tiny, -tiny}, tiny},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{[]float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, math.MaxFloat64},
		{[]float64{1, math.Inf(1)}, math.Inf(1)},
		{[]float64{-1.25, 0.25}, -1},
		{[]float64{1, 0x1p-53}, 1},                     // a tie rounds to even
		{[]float64{1, 0x1p-53, 0x1p-105}, 1 + 0x1p-52}, // past the tie rounds up
	} {
		if got := SumOf(c.xs...).Float64(); got != c.want {
			t.Errorf("Sum%v = %v, want %v", c.xs, got, c.want)
		}
	}
	if got := SumOf(1, math.NaN()).Float64(); !math.IsNaN(got) {
		t.Errorf("Sum(1, NaN) = %v, want NaN", got)
	}
}

// TestSumNormalizes fills the limbs of values up to 2^206 with what sumNormalize−1 terms can
// leave there at most, adds one more term (which normalizes) and a merge,
// and checks the result against math/big: limbs near their bound carry
// into the next without overflow.
func TestSumNormalizes(t *testing.T) {
	if bound := new(big.Int).Mul(big.NewInt(1<<32), big.NewInt(sumNormalize+1)); bound.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		t.Fatalf("sumNormalize %d lets a limb reach %v, past int64", sumNormalize, bound)
	}
	for _, sign := range []int64{1, -1} {
		var s Sum
		want := new(big.Int)
		for i := range 41 {
			s.limb[i] = sign * (1<<32 - 1) * (sumNormalize - 1)
			want.Add(want, new(big.Int).Lsh(big.NewInt(s.limb[i]), uint(32*i)))
		}
		s.pending = sumNormalize - 1
		x := sign * (1 << 40)
		s.Add(float64(x)) // 2^40 = 2^(1114−1074): bit 1114
		want.Add(want, new(big.Int).Lsh(big.NewInt(x), 1074))
		o := s
		s.Merge(o)
		want.Mul(want, big.NewInt(2))
		f := new(big.Float).SetInt(want)
		f.SetMantExp(f, -1074)
		w, _ := f.Float64()
		if got := s.Float64(); got != w || math.IsInf(w, 0) {
			t.Fatalf("sign %d: %v, want %v", sign, got, w)
		}
	}
}

func BenchmarkSumAdd(b *testing.B) {
	xs := make([]float64, 1024)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range xs {
		xs[i] = r.ExpFloat64()
	}
	var s Sum
	for b.Loop() {
		for _, x := range xs {
			s.Add(x)
		}
	}
	_ = s.Float64()
}

func TestSumEqual(t *testing.T) {
	a := SumOf(1, 2, 3)
	var b Sum
	b.Merge(SumOf(3))
	b.Merge(SumOf(2, 1))
	if !a.Equal(b) || a.String() != "6" {
		t.Errorf("%v and %v (grouped) are not Equal", a, b)
	}
	// Sums that round alike but are not the same are not Equal.
	if c := SumOf(1, 0x1p-60); c.Float64() != 1 || c.Equal(SumOf(1)) {
		t.Errorf("1 + 2^-60 (%v) Equal to 1", c)
	}
	if !SumOf(math.NaN()).Equal(SumOf(math.NaN())) || SumOf(math.Inf(1)).Equal(SumOf(1)) {
		t.Error("non-finite Sums compared wrongly")
	}
}
