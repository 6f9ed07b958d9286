package evaluator

import (
	"math"
	"math/big"
	"strconv"
)

// A Sum is the exact sum of float64 terms, rounded once when it is read.
//
// A float64 sum's last bits depend on the order and grouping of its terms:
// summed slice by slice, a genome's loss would follow how the batch
// controller sliced its images, how a forward tiled them and how many
// genomes ran at once. A Sum keeps every bit of every term instead, in a
// fixed-point accumulator wide enough for any finite float64 (2,144 bits
// in 32-bit limbs), so Float64 is the correctly rounded value of the
// mathematical sum whatever the order, grouping or slicing of the terms.
// Adding a term costs a few integer adds; a Sum is about 550 bytes.
//
// The zero Sum is 0. NaN and ±Inf terms are summed apart, in float64, and
// that sum is the result when there is one (so a NaN term makes the Sum
// NaN, as it would a float64 sum).
type Sum struct {
	limb    [sumLimbs]int64 // value = Σ limb[i]·2^(32i−1074)
	pending int32           // terms added since the limbs were last normalized
	special bool            // a non-finite term was added
	inf     float64         // the non-finite terms' float64 sum
}

const (
	// A finite float64 is m·2^(p−1074) with m < 2^53 and 0 ≤ p ≤ 2045, so
	// its bits lie in limbs p/32 … p/32+2 ≤ 65; limb 66 takes the carries
	// of up to 2^31 terms.
	sumLimbs = 67
	// sumNormalize bounds the terms between normalizations: each adds
	// under 2^32 to a limb, so a limb stays within int64.
	sumNormalize = 1 << 30
)

// SumOf is the Sum of xs.
func SumOf(xs ...float64) Sum {
	var s Sum
	for _, x := range xs {
		s.Add(x)
	}
	return s
}

// Add adds x to s exactly.
func (s *Sum) Add(x float64) {
	b := math.Float64bits(x)
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	switch e {
	case 0x7ff:
		s.special, s.inf = true, s.inf+x
		return
	case 0: // subnormal or zero: m·2^−1074
		e = 1
	default:
		m |= 1 << 52
	}
	p := e - 1
	i, sh := p>>5, uint(p&31)
	v := m << sh
	a0, a1, a2 := int64(v&0xffffffff), int64(v>>32), int64(m>>(64-sh))
	if sh == 0 {
		a2 = 0
	}
	if b>>63 != 0 {
		a0, a1, a2 = -a0, -a1, -a2
	}
	s.limb[i] += a0
	s.limb[i+1] += a1
	s.limb[i+2] += a2
	if s.pending++; s.pending >= sumNormalize {
		s.normalize()
	}
}

// Merge adds o's terms to s: the result is as if s had been given them.
func (s *Sum) Merge(o Sum) {
	if o.pending+s.pending+1 >= sumNormalize {
		s.normalize()
		o.normalize()
	}
	for i := range s.limb {
		s.limb[i] += o.limb[i]
	}
	s.pending += o.pending + 1
	if o.special {
		s.special, s.inf = true, s.inf+o.inf
	}
}

// normalize carries each limb's excess into the next, leaving limbs 0 to
// sumLimbs−2 in [0, 2^32) and the sign in the last.
func (s *Sum) normalize() {
	for i := 0; i < sumLimbs-1; i++ {
		c := s.limb[i] >> 32
		s.limb[i] -= c << 32
		s.limb[i+1] += c
	}
	s.pending = 0
}

// Float64 is the sum rounded to the nearest float64 (ties to even; ±Inf
// past the largest), or the non-finite terms' sum when there were any.
func (s Sum) Float64() float64 {
	if s.special {
		return s.inf
	}
	s.normalize()
	v := new(big.Int).SetInt64(s.limb[sumLimbs-1])
	limb := new(big.Int)
	for i := sumLimbs - 2; i >= 0; i-- {
		v.Lsh(v, 32)
		v.Add(v, limb.SetInt64(s.limb[i]))
	}
	if v.Sign() == 0 {
		return 0
	}
	f := new(big.Float).SetInt(v)
	f.SetMantExp(f, -1074)
	x, _ := f.Float64()
	return x
}

// Equal says whether s and o are the same sum exactly (not only once
// rounded): the same terms in any order or grouping give equal Sums.
func (s Sum) Equal(o Sum) bool {
	if s.special || o.special {
		return s.special == o.special && math.Float64bits(s.inf) == math.Float64bits(o.inf)
	}
	s.normalize()
	o.normalize()
	return s.limb == o.limb
}

// String is the rounded sum.
func (s Sum) String() string { return strconv.FormatFloat(s.Float64(), 'g', -1, 64) }
