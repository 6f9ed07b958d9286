package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackVecSameAsRuns packs tiles of row runs (as runPacked cuts them:
// rows of 8 to 40 pixels, tiles of 1 to 4 vectors starting anywhere in a
// group of images) vector by vector and by runs, and compares every lane
// the tile's pixels fill, bit for bit (the source holds NaN payloads, ±0,
// ±Inf and random bits).
func TestPackVecSameAsRuns(t *testing.T) {
	if !available(AVX512) {
		t.Skip("needs AVX-512")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for it := range 400 {
		ow := 8 + r.IntN(33)
		oh := 1 + r.IntN(6)
		wq := ow + r.IntN(5)
		imgLen := (oh+r.IntN(5))*wq + r.IntN(20)
		pix := oh * ow
		g := 1 + r.IntN(3)
		nv := 1 + r.IntN(maxNV)
		nr := 16 * nv
		nl := g * pix
		n0 := r.IntN(nl)
		end := min(nl, n0+nr)
		kdim := 1 + r.IntN(30)
		src := make([]float32, g*imgLen+kdim+2*packPad)
		for i := range src {
			switch r.IntN(6) {
			case 0:
				src[i] = math.Float32frombits(0x7fc00000 | r.Uint32()&0x3fffff) // NaN payloads
			case 1:
				src[i] = float32(math.Copysign(0, r.Float64()-0.5))
			case 2:
				src[i] = float32(math.Inf(1 - 2*r.IntN(2)))
			default:
				src[i] = math.Float32frombits(r.Uint32())
			}
		}
		koff := make([]int32, kdim)
		for k := range koff {
			koff[k] = int32(r.IntN(kdim + 1))
		}
		var runs [2*maxSegs + 2]run
		n := tileRuns(runs[:], n0, end, pix, ow, wq, imgLen, 32)
		stride := nr + packPad
		want := make([]float32, kdim*stride)
		packRunsGo(want, src, koff, runs[:n], stride)
		var vp [maxNV]vecPieces
		nvec := ceilDiv(end-n0, 16)
		if !vecPiecesOf(vp[:nvec], runs[:n], 16) {
			t.Fatalf("case %d: rows of %d: a vector spans more than three runs", it, ow)
		}
		got := make([]float32, kdim*stride)
		if !packVec(AVX512, got, src, koff, vp[:nvec], stride) {
			t.Fatal("packVec: no AVX-512 kernel")
		}
		for k := range kdim {
			for l := range end - n0 {
				a, b := math.Float32bits(got[k*stride+l]), math.Float32bits(want[k*stride+l])
				if a != b {
					t.Fatalf("case %d (ow %d wq %d n0 %d end %d nv %d): tap %d lane %d: %#x, want %#x", it, ow, wq, n0, end, nv, k, l, a, b)
				}
			}
		}
	}
}
