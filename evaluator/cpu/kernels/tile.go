package kernels

import "math/bits"

// The micro-kernels compute one tile of C = A·B: mr rows (output channels
// for a convolution, batch rows for a dense layer) by nr = nv·lanes columns
// (output pixels, output features), with vectors running along the columns.
//
// For k in 0..K-1 the tile reads mr floats of A at a[aoff + k·astride], and
// nr floats of B at b[boff + koff[k]]: B is addressed through a per-k offset
// table, which lets one kernel read a packed panel (koff[k] = k·nr) or an
// image directly (koff[k] = where tap k of the filter sits relative to the
// output pixel, see conv.go). The epilogue adds rowBias[rboff+r] and
// colBias[cboff+j] (or only the one that is not zeros, see biasRow),
// applies the piecewise-linear activation, and stores column j of row r to
// c[coff + seg.off + r·ldc + j] for every segment whose mask has bit j,
// skipping the vectors a segment's mask leaves out. Segments let one tile
// straddle output rows and images.

// maxNV is the widest tile, in vectors.
const maxNV = 4

// maxSegs bounds the segments of one tile: one per column at worst.
const maxSegs = maxNV*16 + 1

// seg is one store segment of a tile. Its layout (16 bytes, 4-byte aligned,
// the mask as two little-endian halves) is read by the assembly.
type seg struct {
	off int32  // c offset of column 0 of row 0 of this segment
	lo  uint32 // mask bits 0..31: columns stored through this segment
	hi  uint32 // mask bits 32..63
	_   int32
}

func (s *seg) setMask(m uint64) { s.lo, s.hi = uint32(m), uint32(m>>32) }
func (s seg) mask() uint64      { return uint64(s.lo) | uint64(s.hi)<<32 }

// laneMask returns the mask of columns lo..hi-1.
func laneMask(lo, hi int) uint64 {
	if hi <= lo {
		return 0
	}
	m := ^uint64(0) >> (64 - uint(hi-lo))
	return m << uint(lo)
}

// tileArgs is the argument block of one micro-kernel call. The assembly reads
// it by field offset (see tileargs_amd64.h, checked by TestTileArgsLayout);
// keep the order.
type tileArgs struct {
	a       []float32
	b       []float32
	koff    []int32
	c       []float32
	segs    []seg
	rowBias []float32
	colBias []float32
	aoff    int
	boff    int
	coff    int
	rboff   int
	cboff   int
	k       int
	astride int
	ldc     int
	mr      int
	act     int // 0 none, 1 ReLU, 2 LeakyReLU
	bias    int // biasBoth, or biasRow / biasCol when the other bias is zeros
}

// Which biases the epilogue adds. A convolution's column bias and a dense
// layer's row bias are zeros, and adding +0 changes no sum: a sum is −0
// only if both its terms are, and an accumulator, which starts at +0, never
// is (nor then is accumulator + row bias). So a convolution adds the row
// bias only and a dense layer the column bias only, with bit for bit the
// results of adding both and one vector add less per accumulator: about a
// tenth of a tile when K is short (a 3×3 filter over one input channel).
const (
	biasBoth = iota
	biasRow
	biasCol
)

// zeros backs the bias that a product does not have (row bias of a dense
// layer, column bias of a convolution). Kernels only read it.
var zeros [64]float32

// mrMax is the most rows a micro-kernel of nv vectors handles, per path:
// the accumulators, nv B vectors and a broadcast must fit the register file
// (32 zmm for AVX-512, 16 ymm for AVX2). PureGo copies AVX-512.
func mrMax(p Path, nv int) int {
	if p == AVX2 {
		return [...]int{0, 14, 6, 4, 2}[nv]
	}
	return [...]int{0, 28, 14, 9, 6}[nv]
}

// panels splits m rows into the fewest panels of at most mx rows, balanced:
// panel i has rows [lo, lo+n).
func panels(m, mx int) (count int) { return (m + mx - 1) / mx }

func panel(m, count, i int) (lo, n int) {
	q, r := m/count, m%count
	if i < r {
		return i * (q + 1), q + 1
	}
	return r*(q+1) + (i-r)*q, q
}

// kernelCycles estimates the cycles of one k step of an mr×nv tile: two FMAs
// and about two loads per cycle, plus the row gating.
func kernelCycles(mr, nv int) float64 {
	fma := float64(mr*nv) / 2
	ld := float64(mr+nv) / 2
	if ld > fma {
		fma = ld
	}
	return fma + 0.5 + float64(mr)/8
}

// gemmGo is the pure-Go twin of the assembly micro-kernels (gemm_*_amd64.s):
// the same tile, the same accumulation order, one lane at a time.
func gemmGo(t *tileArgs, nv int) {
	nr := nv * 16
	mr := t.mr
	var accBuf [28 * 16]float32
	acc := accBuf[:mr*nr]
	ai := t.aoff
	for k := 0; k < t.k; k++ {
		bo := t.boff + int(t.koff[k])
		brow := t.b[bo : bo+nr]
		arow := t.a[ai : ai+mr]
		for r, av := range arow {
			ar := acc[r*nr : r*nr+nr]
			for j, bv := range brow {
				ar[j] += av * bv
			}
		}
		ai += t.astride
	}
	rb := t.rowBias[t.rboff : t.rboff+mr]
	cb := t.colBias[t.cboff : t.cboff+nr]
	for r := range mr {
		ar := acc[r*nr : r*nr+nr]
		for j := range ar {
			v := ar[j]
			if t.bias != biasCol {
				v += rb[r]
			}
			if t.bias != biasRow {
				v += cb[j]
			}
			switch {
			case t.act == 1 && v < 0:
				v = 0
			case t.act == 2 && v < 0:
				v *= LeakySlope
			}
			ar[j] = v
		}
	}
	for _, s := range t.segs {
		m := s.mask()
		for r := range mr {
			base := t.coff + int(s.off) + r*t.ldc
			for mm := m; mm != 0; mm &= mm - 1 {
				j := bits.TrailingZeros64(mm)
				t.c[base+j] = acc[r*nr+j]
			}
		}
	}
}
