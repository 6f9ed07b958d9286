package kernels

import (
	"fmt"
	"math"
	"math/bits"
)

// ConvShape is the geometry of a 2-D convolution over NCHW data: C input
// channels of H×W, OC output channels of OH×OW, a square K×K filter, stride
// and zero padding on every side. OH and OW must be the format's
// (H + 2·Pad − K)/Stride + 1.
type ConvShape struct{ C, H, W, OC, K, Stride, Pad, OH, OW int }

// OutSize returns (in + 2·pad − k)/stride + 1, the output size of a
// convolution or pool along one axis (floor mode).
func OutSize(in, k, stride, pad int) int {
	if stride < 1 || in+2*pad < k {
		return 0
	}
	return (in+2*pad-k)/stride + 1
}

// FLOPs returns 2 × the multiply-adds of the convolution for one image.
func (s ConvShape) FLOPs() int64 {
	return 2 * int64(s.OC) * int64(s.C*s.K*s.K) * int64(s.OH*s.OW)
}

func (s ConvShape) check() {
	if s.C < 1 || s.H < 1 || s.W < 1 || s.OC < 1 || s.K < 1 || s.Stride < 1 || s.Pad < 0 ||
		s.OH < 1 || s.OW < 1 || s.OH != OutSize(s.H, s.K, s.Stride, s.Pad) || s.OW != OutSize(s.W, s.K, s.Stride, s.Pad) {
		panic(fmt.Sprintf("kernels: bad conv shape %+v", s))
	}
}

// The convolution is a matrix product C[OC, pixels] = W[OC, C·K·K] ·
// X[C·K·K, pixels], computed "directly": no im2col matrix is built. Each image
// is first copied into a scratch plane set with the zero padding in place and,
// for stride S > 1, split into S×S phase planes (plane (a,b) holds padded
// pixels (i·S+a, j·S+b)). In that layout every filter tap (c, kh, kw) reads,
// for consecutive output pixels, consecutive floats at a fixed offset koff[k]
// from the pixel's position q = oh·Wq + ow; so a micro-kernel tile of
// consecutive q reads whole vectors of B straight from the planes. Columns
// with ow ≥ OW (the Wq−OW padding columns of each row) are computed and
// dropped by the store masks; one tile may cover several output rows.
//
// With stride 1 and no padding the layout is the image's own (Wq = W), so
// the kernel reads small images where they lie instead of copying them
// (inPlace). The padding columns cost (Wq−OW)/Wq of the lanes: 7% at 28×28
// with a 3×3 filter, more on tiny maps.
//
// At stride 1 the tiles can skip those columns instead: the image is copied
// into K column-shifted planes per channel (shifted), plane (c, kw) holding
// at row y, column ow the padded pixel (y, ow+kw), zero where that is
// padding, in rows of OW floats. Tap (c, kh, kw) then reads output pixel
// q = oh·OW + ow at q + koff[k] with koff[k] = (c·K+kw)·plane + kh·OW, so a
// tile of consecutive q covers output pixels only, and stores one run. The
// copy is K times the plain layout's; the cost model (planConv) takes it
// where the lanes saved are worth more (a 5×5 filter on 14×14 maps: 12% of
// the lanes; on 28×28: 7%). The taps read the same values in the same
// order, so the sums are the same, bit for bit.

// convPlan is the blocking of one convolution call on one path. The
// workspace layout is a function of (path, shape, batch, threads) only.
type convPlan struct {
	path     Path
	nv, nr   int    // tile width in vectors and columns
	mpan     int    // panels of output channels
	kdim     int    // C·taps: the product's depth
	taps     uint64 // the filter taps computed (bit kh·K+kw), see usedTaps
	nph      int    // phases per axis: min(S, K)
	hq, wq   int    // phase plane size
	plane    int    // hq·wq
	imgLen   int    // floats of one image's planes
	qspan    int    // columns a direct tile sweep covers: (OH−1)·Wq + OW
	ntiles   int    // direct: tiles per image
	nsegs    int    // direct: store segments of all tiles
	packed   bool   // im2col panels packed per tile over groups of images (conv_packed.go)
	shifted  bool   // direct, over K column-shifted planes per channel (no padding columns)
	winograd bool   // F(2×2, K×K) over groups of images (conv_winograd.go)
	wg       wgPlan
	group    int // packed: images per group
	ntg      int // packed: tiles per full group
	prepLen  int // floats of one worker's planes, with read slack
	workers  int
	offA     int // packed weights, OC·kdim (none when they come packed)
	offKoff  int // kdim int32: tap offsets in the planes
	offTile  int // direct: ntiles+1 int32, first seg of each tile
	offSegs  int // direct: nsegs segs
	offKoffP int // packed: kdim int32, k·(nr+packPad)
	offPrep  int // workers × prepLen
	offPackB int // packed: workers × kdim·(nr+packPad)
	wsLen    int
}

// planConv plans a call on path p. nvOnly > 0 restricts the tile width to
// nvOnly vectors (weights packed for it), modeOnly to one algorithm
// (modeAuto: the cheaper, or convMode's); prepacked leaves the packed
// weights out of the workspace; allTaps computes every filter tap, even
// those usedTaps leaves out. The workspace of a given path, width and
// algorithm never shrinks as b grows (the workspace functions rely on it).
func planConv(p Path, s ConvShape, b, threads, nvOnly, modeOnly int, prepacked, allTaps bool) convPlan {
	if modeOnly == modeAuto {
		modeOnly = convMode
	}
	if modeOnly == modeWinograd || modeOnly == modeAuto {
		if wgEligible(s) {
			pl := convPlan{path: p}
			planWinograd(&pl, p, s, b, threads, prepacked)
			return pl
		}
		modeOnly = modeAuto
	}
	if modeOnly == modeClassic {
		modeOnly = modeAuto
	}
	pl := convPlan{path: p, taps: usedTaps(s)}
	if allTaps {
		pl.taps = allTapsOf(s)
	}
	pl.kdim = s.C * tapCount(s, pl.taps)
	pl.nph = min(s.Stride, s.K)
	pl.hq = ceilDiv(s.H+2*s.Pad, s.Stride)
	pl.wq = ceilDiv(s.W+2*s.Pad, s.Stride)
	pl.plane = pl.hq * pl.wq
	if s.Stride == 1 && s.Pad > 0 && s.Pad < s.K && !padBothSides {
		// Rows share their padding: the P zeros before row y's pixels are
		// both its left padding and row y−1's right padding (a tap reads
		// columns −P to W+P−1 of a row, and the latter land in the next
		// row's P zeros), and P zeros after the last row close the plane.
		// A row is then W+P floats, not W+2P: a direct tile's lanes over
		// padding columns drop from 2P to P a row (14×14 with 5×5 filters:
		// 4 of 18 → 2 of 16). OW ≤ W+P as P < K. The taps read the same
		// values, so the sums are the same, bit for bit.
		pl.wq = s.W + s.Pad
		pl.plane = pl.hq*pl.wq + s.Pad
	}
	pl.imgLen = s.C * pl.nph * pl.nph * pl.plane
	pl.qspan = (s.OH-1)*pl.wq + s.OW
	pix := s.OH * s.OW
	lanes := p.lanes()
	// The shifted planes (above) cost their extra copying per image:
	// shiftCopy a vector or row copied (BenchmarkConv2DShifted).
	// (Not where the K-fold copy would outgrow the 32-bit tap offsets that
	// the plain layout still fits in.)
	shiftOK := s.Stride == 1 && s.K > 1 && shiftPlanes != shiftNever &&
		int64(s.C*s.K)*int64(s.H+2*s.Pad)*int64(s.OW) < 1<<30
	shiftExtra := float64(s.C*s.K*s.H) * float64(ceilDiv(s.OW, lanes)+1)
	if !inPlace(&s) {
		shiftExtra -= float64(s.C*s.H) * float64(ceilDiv(s.W, lanes)+1)
	}
	shiftExtra *= shiftCopy
	best := -1.0
	for nv := 1; nv <= maxNV; nv++ {
		if nvOnly > 0 && nv != nvOnly {
			continue
		}
		nr := nv * lanes
		mp := panels(s.OC, mrMax(p, nv))
		// perOf is the cost of a tile of the panels of nv vectors computed
		// k vectors wide (k ≤ nv: a last tile, see lastNV).
		perOf := func(k int) float64 {
			var c float64
			for i := range mp {
				_, mr := panel(s.OC, mp, i)
				c += float64(pl.kdim)*kernelCycles(mr, k) + float64(mr*k)*2 + 20
			}
			return c
		}
		per := perOf(nv)
		// Direct: tiles sweep the padded rows of one image, or its output
		// pixels over the shifted planes.
		ntiles := ceilDiv(pl.qspan, nr)
		cost := float64(ntiles-1)*per + perOf(lastNV(pl.qspan, nr, lanes))
		shifted := false
		if shiftOK {
			// A tile that straddles rows stores a vector again for each
			// row it starts (about two cycles a row of the tile).
			cost += float64(convSegs(s, pl.wq, nr, ntiles, nil, nil)-ntiles) * float64(s.OC) * 2
			st := ceilDiv(pix, nr)
			sc := float64(st-1)*per + perOf(lastNV(pix, nr, lanes)) + shiftExtra
			if sc < cost || shiftPlanes == shiftAlways {
				cost, ntiles, shifted = sc, st, true
			}
		}
		if modeOnly != modePacked && (best < 0 || cost < best) {
			best, pl.nv, pl.nr, pl.ntiles, pl.mpan, pl.packed, pl.shifted = cost, nv, nr, ntiles, mp, false, shifted
		}
		// Packed: tiles sweep the output pixels of a group of images,
		// packed by row runs (about packCycles per run and tap).
		// At most b/threads images a group, so that every worker has one.
		g := groupSize(pix, nr, ceilDiv(b, max(1, min(threads, b))))
		ntg := ceilDiv(g*pix, nr)
		runs := ceilDiv(nr, min(s.OW, 2*lanes)) + 1
		gcost := (float64(ntg-1)*per + perOf(lastNV(g*pix, nr, lanes)) + float64(ntg*pl.kdim*runs)*packCycles) / float64(g)
		if modeOnly != modeDirect && (best < 0 || gcost < best) {
			best, pl.nv, pl.nr, pl.ntg, pl.group, pl.mpan, pl.packed, pl.shifted = gcost, nv, nr, ntg, g, mp, true, false
		}
	}
	pl.offA = 0
	pl.offKoff = pl.offA
	if !prepacked {
		pl.offKoff += s.OC * pl.kdim
	}
	pl.offTile = pl.offKoff + pl.kdim
	if pl.packed {
		pl.workers = max(1, min(threads, ceilDiv(b, pl.group)))
		// Room for min(threads, b) workers, not pl.workers: a larger batch
		// has larger groups and may have fewer of them than a smaller one.
		room := max(1, min(threads, b))
		pl.prepLen = pl.group*pl.imgLen + 2*packPad
		pl.offKoffP = pl.offTile
		pl.offPrep = pl.offKoffP + pl.kdim
		// The panels on a cache line (the block's buffers are): packVec's
		// stores and the micro-kernels' loads of B then stay on one line.
		pl.offPackB = alignUp(pl.offPrep+room*pl.prepLen, 16)
		pl.wsLen = pl.offPackB + room*pl.kdim*(pl.nr+packPad)
		return pl
	}
	koffMax := ((s.C-1)*pl.nph*pl.nph+pl.nph*pl.nph-1)*pl.plane + ((s.K-1)/s.Stride)*(pl.wq+1)
	if pl.shifted {
		pl.nph, pl.hq, pl.wq = 1, s.H+2*s.Pad, s.OW
		pl.plane = pl.hq * pl.wq
		pl.imgLen = s.C * s.K * pl.plane
		pl.qspan = pix
		koffMax = (s.C*s.K-1)*pl.plane + (s.K-1)*pl.wq
	}
	pl.nsegs = convSegs(s, pl.wq, pl.nr, pl.ntiles, nil, nil)
	pl.prepLen = max(pl.imgLen, pl.ntiles*pl.nr+koffMax) + 16
	pl.workers = max(1, min(threads, b))
	pl.offSegs = pl.offTile + pl.ntiles + 1
	pl.offPrep = pl.offSegs + pl.nsegs*segWords
	pl.wsLen = pl.offPrep + pl.workers*pl.prepLen
	return pl
}

// alignUp rounds n up to a multiple of m.
func alignUp(n, m int) int { return (n + m - 1) / m * m }

// lastNV is the width in vectors of lanes each of the last of the tiles of
// nr columns that cover n columns: the tile ends with the columns, as the
// micro-kernels of fewer vectors compute the same sums (every kernel
// serves panels up to its mrMax, which is larger for narrower ones).
func lastNV(n, nr, lanes int) int {
	if fullLastTile {
		return nr / lanes
	}
	return ceilDiv(n-(ceilDiv(n, nr)-1)*nr, lanes)
}

// fullLastTile computes last tiles as wide as the others (tests compare).
var fullLastTile = false

// shiftPlanes overrides the cost model's choice of the shifted planes for
// the direct variant (tests compare): shiftAuto, shiftNever or shiftAlways
// (wherever the shape allows them: stride 1, K > 1).
var shiftPlanes = shiftAuto

const (
	shiftAuto = iota
	shiftNever
	shiftAlways
)

// convMode forces one convolution algorithm, for tests (export_test.go).
var convMode = modeAuto

const (
	modeAuto = iota
	modeDirect
	modePacked
	modeWinograd // where the shape takes it (wgEligible)
	modeClassic  // the cheaper of direct and packed, never Winograd
)

// shiftCopy is the cost of copying a vector into the shifted planes,
// relative to the kernel's FMA cycles: it stands for the planes' larger
// footprint in L1 too (BenchmarkConv2DShifted).
const shiftCopy = 1.5

// packCycles is the cost of copying one run of one tap, relative to the
// kernel's FMA cycles (measured with BenchmarkConv2DModes).
const packCycles = 3

// groupLanes bounds a packed group's pixels. At 512, a 14×14 map (196
// pixels) was packed two images a group, 392 pixels in 7 tiles of 64 lanes
// (14% of the lanes idle); at 2048, eight images fill 49 tiles of 32 lanes
// or 25 of 64 (2%). The group's planes grow with it (0.25–1 MiB for the
// wide preset's 14×14 layers of ~100 channels), still within L2 at the
// tile's reads of one or two images at a time.
const groupLanes = 2048

// groupSize picks how many images one packed tile sweep covers: enough
// pixels for a few tiles, with the least waste in the last tile. A batch
// of fewer images than that is searched from one image up: a 1×1 or 2×2
// map in a tile of 8 images had been packed one image a tile (1 or 4 of
// 16 lanes busy). The group never shrinks as b grows (b adds at most one
// candidate, the last), so neither does the workspace.
func groupSize(pix, nr, b int) int {
	bestG, bestWaste := 1, 2.0
	lo := max(1, 128/pix)
	if lo > b {
		lo = 1
	}
	for g := lo; g <= max(1, groupLanes/pix) && g <= b; g++ {
		lanes := g * pix
		waste := float64(ceilDiv(lanes, nr)*nr-lanes) / float64(lanes)
		if waste < bestWaste-0.01 {
			bestG, bestWaste = g, waste
		}
	}
	return min(bestG, b)
}

// convSegs lists the store segments of every tile of one image: tile t's are
// segs[start[t]:start[t+1]]. With nil slices it only counts them.
func convSegs(s ConvShape, wq, nr, ntiles int, start []int32, segs []seg) int {
	n := 0
	for t := range ntiles {
		if start != nil {
			start[t] = int32(n)
		}
		q0, q1 := t*nr, (t+1)*nr
		if wq == s.OW {
			// No padding columns: the tile's pixels are one run.
			if segs != nil {
				segs[n].off = int32(q0)
				segs[n].setMask(laneMask(0, min(q1, s.OH*s.OW)-q0))
			}
			n++
			continue
		}
		for oh := q0 / wq; oh < s.OH && oh*wq < q1; oh++ {
			lo, hi := max(oh*wq, q0), min(oh*wq+s.OW, q1)
			if hi <= lo {
				continue
			}
			if segs != nil {
				segs[n].off = int32(q0 - oh*(wq-s.OW))
				segs[n].setMask(laneMask(lo-q0, hi-q0))
			}
			n++
		}
	}
	if start != nil {
		start[ntiles] = int32(n)
	}
	return n
}

// ConvWorkspace returns the float32s of scratch Conv2D needs for shape s, a
// batch of up to b and the given thread count, on any path.
func ConvWorkspace(s ConvShape, b, threads int) int { return convWorkspace(s, b, threads, false) }

// ConvPackedWorkspace returns the float32s of scratch Conv2DPacked needs
// for shape s, a batch of up to b and the given thread count, whatever
// Packing the weights have: ConvWorkspace less the weights.
func ConvPackedWorkspace(s ConvShape, b, threads int) int { return convWorkspace(s, b, threads, true) }

// convWorkspace is the largest workspace of any path, tile width and
// algorithm at batch b: the one a call picks may differ with the batch
// (a smaller one included) and the packing, and each of these grows with b.
func convWorkspace(s ConvShape, b, threads int, prepacked bool) int {
	s.check()
	return memoWorkspace(wsKey{s: s, b: b, threads: threads, prepacked: prepacked, wgAlways: wgAlways, shift: shiftPlanes}, convWorkspaceOf)
}

func convWorkspaceOf(k wsKey) int {
	s, b, threads, prepacked := k.s, k.b, k.threads, k.prepacked
	n := 0
	for p := range numPaths {
		for nv := 1; nv <= maxNV; nv++ {
			for _, m := range []int{modeDirect, modePacked} {
				for _, all := range []bool{false, true} {
					n = max(n, planConv(p, s, b, threads, nv, m, prepacked, all).wsLen)
				}
			}
		}
		if wgEligible(s) {
			n = max(n, planConv(p, s, b, threads, 0, modeWinograd, prepacked, false).wsLen)
		}
	}
	return n
}

// Packing is how PackConv or PackDense laid weights out: for which path and
// tile width. It goes with the packed weights to Conv2DPacked or
// DensePacked, which compute on that path.
type Packing struct {
	path     Path
	nv       int
	allTaps  bool // every filter tap packed (see skipTaps)
	winograd bool // transformed for the Winograd variant (wgWeights)
}

// PackedConvLen returns the float32s of a convolution's packed weights:
// OC·C·K·K, or OC·C·(K+1)² where the shape takes the Winograd variant.
func PackedConvLen(s ConvShape) int {
	if wgEligible(s) {
		return max(s.OC*s.C*s.K*s.K, wgPackedLen(s))
	}
	return s.OC * s.C * s.K * s.K
}

// PackConv stores w ([OC, C, K, K] row-major) in dst, at most
// PackedConvLen(s) floats, as the micro-kernels read it, for the tile width
// the selected path picks for a batch of b on the given threads. Weights
// packed once serve every later Conv2DPacked call of that shape, of any
// batch, with the same bias (OC floats; whether the taps that read only
// padding can be left out depends on it, see skipTaps): a layer repacks its
// weights for every call of Conv2D.
func PackConv(dst, w, bias []float32, s ConvShape, b, threads int) Packing {
	s.check()
	n := PackedConvLen(s)
	if b < 1 || threads < 1 || len(dst) < n || len(w) < s.OC*s.C*s.K*s.K || len(bias) < s.OC {
		panic(fmt.Sprintf("kernels: PackConv: b %d threads %d len(dst) %d len(w) %d len(bias) %d, want %d and %d for %+v",
			b, threads, len(dst), len(w), len(bias), n, s.OC, s))
	}
	all := !skipTaps(s, w, bias)
	pl := planConv(selected(), s, b, threads, 0, modeAuto, true, all)
	if pl.winograd {
		wgWeights(dst[:wgPackedLen(s)], w, s, pl.mpan)
		return Packing{path: pl.path, nv: pl.nv, winograd: true}
	}
	packConvWeights(dst[:s.OC*s.C*s.K*s.K], w, s, pl.taps, pl.mpan)
	return Packing{path: pl.path, nv: pl.nv, allTaps: all}
}

// packConvWeights stores w [OC, C·K·K] as the micro-kernels read it, the
// taps in the mask only (kdim = C·taps of them): panel by panel of the np
// balanced panels of output channels, k-major within a panel (w[oc0+r, k]
// at oc0·kdim + k·mr + r, k counting the taps kept).
func packConvWeights(a, w []float32, s ConvShape, taps uint64, np int) {
	kk := s.K * s.K
	full := s.C * kk
	kdim := s.C * tapCount(s, taps)
	for i := range np {
		oc0, mr := panel(s.OC, np, i)
		pa := a[oc0*kdim : (oc0+mr)*kdim]
		for r := range mr {
			row := w[(oc0+r)*full : (oc0+r+1)*full]
			if kdim == full {
				for k, v := range row {
					pa[k*mr+r] = v
				}
				continue
			}
			k := 0
			for c := range s.C {
				for t := range kk {
					if hasTap(s, taps, t) {
						pa[k*mr+r] = row[c*kk+t]
						k++
					}
				}
			}
		}
	}
}

// usedTaps returns the filter taps (bit kh·K+kw) that read a pixel of the
// image for at least one output pixel. The others read only the zero
// padding (a 5×5 filter with padding 2 over a 1×1 map: all but the
// centre). Filters of more than 64 taps keep them all.
func usedTaps(s ConvShape) uint64 {
	if s.K*s.K > 64 {
		return allTapsOf(s)
	}
	// kh (kw) that some output row (column) reads inside the image.
	var rows, cols uint64
	for k := range s.K {
		for o := range s.OH {
			if y := o*s.Stride + k - s.Pad; y >= 0 && y < s.H {
				rows |= 1 << uint(k)
				break
			}
		}
		for o := range s.OW {
			if x := o*s.Stride + k - s.Pad; x >= 0 && x < s.W {
				cols |= 1 << uint(k)
				break
			}
		}
	}
	var m uint64
	for kh := range s.K {
		for kw := range s.K {
			if rows>>uint(kh)&1 != 0 && cols>>uint(kw)&1 != 0 {
				m |= 1 << uint(kh*s.K+kw)
			}
		}
	}
	return m
}

// keepPadTaps turns skipTaps off (tests compare the two).
var keepPadTaps = false

// allTapsOf is the mask of every tap of s's filter (all ones for more
// than 64 taps).
func allTapsOf(s ConvShape) uint64 {
	if s.K*s.K >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(s.K*s.K) - 1
}

// tapCount is the number of taps in mask m of s's filter.
func tapCount(s ConvShape, m uint64) int {
	if s.K*s.K > 64 {
		return s.K * s.K
	}
	return bits.OnesCount64(m)
}

// hasTap reports whether tap t of s's filter is in mask m.
func hasTap(s ConvShape, m uint64, t int) bool { return t >= 64 || m>>uint(t)&1 != 0 }

// skipTaps reports whether the convolution may leave out of its sums the
// taps usedTaps leaves out, bit for bit: some are left out, their weights
// are finite, and no bias is −0.
//
// Each left-out term is w·(+0) = ±0 for a finite w (an infinite or NaN w
// would make it NaN, which the sum must keep). Adding ±0 leaves a sum as it
// is unless the sum is a zero of the other sign (−0 + +0 = +0), so the
// sums with and without these terms are the same bits, or both zeros of
// different signs; the next nonzero term makes them the same again (its
// rounded sum with a zero does not depend on the zero's sign). A sum that
// stays zero to the end gets the bias, which gives the same bits from
// either zero unless the bias is −0 itself. (A sum is −0 only where its
// only nonzero products underflowed to −0.)
func skipTaps(s ConvShape, w, bias []float32) bool {
	used := usedTaps(s)
	if keepPadTaps || used == allTapsOf(s) {
		return false
	}
	for _, v := range bias[:s.OC] {
		if v == 0 && math.Signbit(float64(v)) {
			return false
		}
	}
	kk := s.K * s.K
	for i := range s.OC * s.C {
		for t, v := range w[i*kk : (i+1)*kk] {
			if !hasTap(s, used, t) && (v != v || math.IsInf(float64(v), 0)) {
				return false
			}
		}
	}
	return true
}

// Conv2D computes dst[b, OC, OH, OW] = act(bias[oc] + Σ w[oc, c, kh, kw] ·
// src[b, c, oh·S+kh−P, ow·S+kw−P]) with zero padding, for a batch of b NCHW
// images; w is [OC, C, K, K] row-major. ws is scratch of at least
// ConvWorkspace(s, b, threads) floats; threads ≥ 1 workers share the batch.
// Bad lengths panic: they are the caller's bugs.
func Conv2D(dst, src, w, bias []float32, s ConvShape, b int, act Act, ws []float32, threads int) {
	conv2D(dst, src, w, nil, Packing{}, bias, s, b, act, ws, threads)
}

// Conv2DPacked is Conv2D with the weights packed by PackConv (pk is what it
// returned), on the path they were packed for; ws is scratch of at least
// ConvPackedWorkspace(s, b, threads) floats. The results are Conv2D's, bit
// for bit.
func Conv2DPacked(dst, src, packed []float32, pk Packing, bias []float32, s ConvShape, b int, act Act, ws []float32, threads int) {
	if pk.nv < 1 || pk.nv > maxNV || pk.path >= numPaths {
		panic(fmt.Sprintf("kernels: Conv2DPacked: packing %+v is not from PackConv", pk))
	}
	conv2D(dst, src, nil, packed, pk, bias, s, b, act, ws, threads)
}

// conv2D is Conv2D (packed nil) and Conv2DPacked (w nil).
func conv2D(dst, src, w, packed []float32, pk Packing, bias []float32, s ConvShape, b int, act Act, ws []float32, threads int) {
	s.check()
	kdim := s.C * s.K * s.K
	p := s.OH * s.OW
	weights, need := w, s.OC*kdim
	if w == nil {
		weights = packed
		if pk.winograd {
			need = wgPackedLen(s)
		}
	}
	if b < 1 || threads < 1 || !act.Valid() || len(dst) < b*s.OC*p || len(src) < b*s.C*s.H*s.W ||
		len(weights) < need || len(bias) < s.OC {
		panic(fmt.Sprintf("kernels: Conv2D: bad arguments: b %d threads %d act %v len(dst) %d len(src) %d len(w) %d len(bias) %d for %+v",
			b, threads, act, len(dst), len(src), len(weights), len(bias), s))
	}
	var pl convPlan
	if w == nil {
		mode := modeClassic
		if pk.winograd {
			mode = modeWinograd
		}
		pl = planConv(pk.path, s, b, threads, pk.nv, mode, true, pk.allTaps)
	} else {
		pl = planConv(selected(), s, b, threads, 0, modeAuto, false, !skipTaps(s, w, bias))
	}
	if pl.prepLen >= 1<<31-1 || s.OC*pl.kdim >= 1<<31-1 {
		panic(fmt.Sprintf("kernels: Conv2D: %+v is too large for 32-bit tap offsets", s))
	}
	if len(ws) < pl.wsLen {
		panic(fmt.Sprintf("kernels: Conv2D: workspace of %d floats, want %d", len(ws), pl.wsLen))
	}
	j := convJob{pl: pl, s: s, dst: dst, src: src, bias: bias, act: act, b: b, ws: ws}
	if pl.winograd {
		j.initWinograd(w, packed)
	} else {
		j.initClassic(w, packed)
	}
	if pl.workers == 1 {
		j.run(0)
		return
	}
	jp := new(convJob)
	*jp = j
	fanOut(pl.workers, jp)
}

// initClassic packs the weights (w) or takes them packed, and lays out
// the tap offsets and the tiles' store segments of the direct and packed
// variants.
func (j *convJob) initClassic(w, packed []float32) {
	pl, s, ws := &j.pl, j.s, j.ws
	if w != nil {
		j.a = ws[pl.offA : pl.offA+s.OC*pl.kdim]
		packConvWeights(j.a, w, s, pl.taps, pl.mpan)
	} else {
		j.a = packed[:s.OC*pl.kdim]
	}
	j.koff = asInt32(ws[pl.offKoff:], pl.kdim)
	k := 0
	for c := range s.C {
		for kh := range s.K {
			for kw := range s.K {
				if !hasTap(s, pl.taps, kh*s.K+kw) {
					continue
				}
				if pl.shifted {
					j.koff[k] = int32((c*s.K+kw)*pl.plane + kh*pl.wq)
					k++
					continue
				}
				po := (c*pl.nph+kh%s.Stride)*pl.nph + kw%s.Stride
				j.koff[k] = int32(po*pl.plane + (kh/s.Stride)*pl.wq + kw/s.Stride)
				k++
			}
		}
	}
	if pl.packed {
		j.initPacked()
	} else {
		j.start = asInt32(ws[pl.offTile:], pl.ntiles+1)
		j.segs = asSegs(ws[pl.offSegs:], pl.nsegs)
		convSegs(s, pl.wq, pl.nr, pl.ntiles, j.start, j.segs)
	}
}

type convJob struct {
	pl       convPlan
	s        ConvShape
	a        []float32 // the packed weights (packConvWeights)
	dst, src []float32
	bias, ws []float32
	koff     []int32
	koffP    []int32 // packed: k·(nr+packPad)
	start    []int32
	segs     []seg
	act      Act
	b        int
}

func (j *convJob) run(w int) {
	if j.pl.winograd {
		j.runWinograd(w)
		return
	}
	if j.pl.packed {
		j.runPacked(w)
		return
	}
	pl, s := &j.pl, &j.s
	lo, hi := share(j.b, pl.workers, w)
	if lo >= hi {
		return
	}
	prep := j.ws[pl.offPrep+w*pl.prepLen : pl.offPrep+(w+1)*pl.prepLen]
	cleared := false
	p := s.OH * s.OW
	in := s.C * s.H * s.W
	ta := tileArgs{
		a: j.a, koff: j.koff, c: j.dst,
		rowBias: j.bias, colBias: zeros[:], k: pl.kdim, ldc: p, act: epilogueAct(j.act),
		bias: biasRow,
	}
	for img := lo; img < hi; img++ {
		if inPlace(s) && !pl.shifted && img*in+pl.prepLen <= j.b*in {
			ta.b = j.src[img*in : img*in+pl.prepLen]
		} else {
			if !cleared {
				clear(prep)
				cleared = true
			}
			if pl.shifted {
				prepShifted(pl, s, prep, j.src[img*in:(img+1)*in])
			} else {
				prepImage(pl, s, prep, j.src[img*in:(img+1)*in])
			}
			ta.b = prep
		}
		for t := range pl.ntiles {
			ta.segs = j.segs[j.start[t]:j.start[t+1]]
			ta.boff = t * pl.nr
			nv := pl.nv
			if t == pl.ntiles-1 {
				nv = lastNV(pl.qspan, pl.nr, pl.path.lanes())
			}
			for i := range pl.mpan {
				oc0, mr := panel(s.OC, pl.mpan, i)
				ta.aoff, ta.astride, ta.mr = oc0*pl.kdim, mr, mr
				ta.coff, ta.rboff = img*s.OC*p+oc0*p, oc0
				gemm(pl.path, nv, &ta)
			}
		}
		if applyAfter(j.act) {
			applyVec(pl.path, j.act, j.dst[img*s.OC*p:(img+1)*s.OC*p])
		}
	}
}

// padBothSides lays the planes out with each row's own left and right
// padding (Wq = W+2P) at stride 1 too (tests compare the two layouts).
var padBothSides = false

// inPlace reports whether a convolution reads its input where it lies: with
// stride 1 and no padding an image is its own plane set (plane = H·W,
// Wq = W), so no copy is needed where the batch holds the reads' slack
// after the image. A tile's reads past the image land in the next image's
// pixels, and only in lanes that the store masks drop (columns ow ≥ OW,
// pixels past the map), so the stored outputs are those of the copy, bit
// for bit; the batch's last image, with no room after it, is copied.
//
// Only images of at most inPlaceMax floats: on larger ones (28×28 maps of
// 20 channels and more) reading in place measured 0.81–1.0× the copy's
// time, whose streaming read fills a buffer that stays hot, against
// 1.02–1.5× below it (bench/NOTES.md, change 19).
func inPlace(s *ConvShape) bool {
	return s.Stride == 1 && s.Pad == 0 && s.C*s.H*s.W <= inPlaceMax
}

// inPlaceMax bounds the images a convolution reads in place, in floats
// (48 KiB).
const inPlaceMax = 12 << 10

// prepImage writes one image into its padded phase planes. The padding and
// the slack stay zero from the clear before the call's first copy.
func prepImage(pl *convPlan, s *ConvShape, prep, img []float32) {
	S, P := s.Stride, s.Pad
	// Whole channels at a time where a kernel does a plane in one call (a
	// row loop per channel that skipped all but the first row cost about
	// a microsecond per image of 16 channels).
	switch {
	case S == 1:
		for c := range s.C {
			o := c*pl.plane + P*pl.wq + P
			copyRows(pl.path, prep[o:o+(s.H-1)*pl.wq+s.W], img[c*s.H*s.W:(c+1)*s.H*s.W], s.H, s.W, s.W, pl.wq)
		}
		return
	case S == 2 && pl.nph == 2 && (pl.path == AVX512 || pl.path == AVX2):
		for c := range s.C {
			deintPlane(pl.path, prep[c*4*pl.plane:(c+1)*4*pl.plane], img[c*s.H*s.W:(c+1)*s.H*s.W], s.H, s.W, pl.wq, pl.plane, P)
		}
		return
	case S == 2 && pl.nph == 1 && s.W <= 2*maxSpare:
		prepPhase00(pl, s, prep, img)
		return
	}
	for c := range s.C {
		for ih := range s.H {
			row := img[(c*s.H+ih)*s.W : (c*s.H+ih+1)*s.W]
			y := ih + P
			a := y % S
			if a >= pl.nph {
				continue
			}
			base := (c*pl.nph + a) * pl.nph * pl.plane
			if S == 2 && pl.nph == 2 {
				deinterleave2(pl.path, prep, base+(y/2)*pl.wq, base+pl.plane+(y/2)*pl.wq, P, row)
				continue
			}
			// Columns x = iw + P of phase bx are x ≡ bx (mod S): every S-th
			// pixel, from the first iw ≥ 0 in that phase.
			for bx := range pl.nph {
				iw := ((bx-P)%S + S) % S
				d := prep[base+bx*pl.plane+(y/S)*pl.wq+(iw+P)/S:]
				for j := 0; iw < s.W; iw, j = iw+S, j+1 {
					d[j] = row[iw]
				}
			}
		}
	}
}

// prepShifted writes one image into its column-shifted planes (see the
// top of this file): plane (c, kw) gets, in rows y = ih+P, the pixels
// ow+kw−P of row ih that lie in the image. The rest stays zero from the
// clear before the call's first copy.
func prepShifted(pl *convPlan, s *ConvShape, prep, img []float32) {
	P := s.Pad
	for c := range s.C {
		ch := img[c*s.H*s.W : (c+1)*s.H*s.W]
		for kw := range s.K {
			lo, hi := max(0, P-kw), min(s.OW, s.W+P-kw)
			if hi <= lo {
				continue
			}
			o := (c*s.K+kw)*pl.plane + P*pl.wq + lo
			copyRows(pl.path, prep[o:o+(s.H-1)*pl.wq+hi-lo], ch[lo+kw-P:], s.H, hi-lo, s.W, pl.wq)
		}
	}
}

// maxSpare bounds the row prepPhase00 splits: the other phase's pixels go
// to a buffer of this many floats on the stack.
const maxSpare = 512

// prepPhase00 is prepImage for a 1×1 filter of stride 2, which reads only
// the phase plane (0, 0): the padded rows y = ih + P that are even, their
// even-x pixels (x = iw + P). With AVX-512 one call per channel copies
// every second pixel of every second row (evenRows; per row the
// deinterleaving kernel's call and its discarded phase were ~2.4% of the
// small preset's time); otherwise each row is split by the deinterleaving
// kernel, its odd-x pixels dropped (the scalar loop's pixel by pixel copy
// was 4% of the small preset's time).
func prepPhase00(pl *convPlan, s *ConvShape, prep, img []float32) {
	P := s.Pad
	ne, no := (s.W+1)/2, s.W/2
	if pl.path == AVX512 {
		// Rows ih ≡ P (mod 2), from ih0 = P%2 to padded row (ih0+P)/2;
		// columns iw ≡ P (mod 2), from iw0 = P%2 to x/2 = (iw0+P)/2.
		i0 := P % 2
		rows, n := (s.H-i0+1)/2, ne
		if i0 == 1 {
			n = no
		}
		if rows == 0 || n == 0 { // P odd and H or W 1: no pixel to copy
			return
		}
		o := (i0+P)/2*pl.wq + (i0+P)/2
		for c := range s.C {
			evenRows(pl.path, prep[c*pl.plane+o:], img[c*s.H*s.W+i0*s.W+i0:], rows, n, 2*s.W, pl.wq)
		}
		return
	}
	var spare [maxSpare]float32
	for c := range s.C {
		for ih := P % 2; ih < s.H; ih += 2 {
			row := img[(c*s.H+ih)*s.W : (c*s.H+ih+1)*s.W]
			d := c*pl.plane + (ih+P)/2*pl.wq
			if P%2 == 0 { // even x = iw + P: even iw
				deint(pl.path, prep[d+P/2:d+P/2+ne], spare[:no], row)
			} else { // odd iw, pixel 2i+1 at x/2 = i + (P+1)/2
				deint(pl.path, spare[:ne], prep[d+(P+1)/2:d+(P+1)/2+no], row)
			}
		}
	}
}

// evenRowsGo is the pure-Go twin of the even-pixel row copy kernel:
// dst[r·dstStride+i] = src[r·srcStride+2i] for r < rows, i < n.
func evenRowsGo(dst, src []float32, rows, n, srcStride, dstStride int) {
	for r := range rows {
		d, s := dst[r*dstStride:r*dstStride+n], src[r*srcStride:]
		for i := range d {
			d[i] = s[2*i]
		}
	}
}

// copyRowsGo is the pure-Go twin of the row copy kernels: the w floats at
// src[r·srcStride:] go to dst[r·dstStride:], for r < rows.
func copyRowsGo(dst, src []float32, rows, w, srcStride, dstStride int) {
	for r := range rows {
		copy(dst[r*dstStride:r*dstStride+w], src[r*srcStride:r*srcStride+w])
	}
}

// deinterleave2 writes the pixels of one row of the image, whose padded
// column is x = iw + pad, to prep[o0 + x/2] for even x and to prep[o1 + x/2]
// for odd x.
func deinterleave2(p Path, prep []float32, o0, o1, pad int, row []float32) {
	ne, no := (len(row)+1)/2, len(row)/2
	var even, odd []float32 // row[2i] and row[2i+1]
	if pad%2 == 0 {
		even, odd = prep[o0+pad/2:o0+pad/2+ne], prep[o1+pad/2:o1+pad/2+no]
	} else {
		even, odd = prep[o1+pad/2:o1+pad/2+ne], prep[o0+pad/2+1:o0+pad/2+1+no]
	}
	deint(p, even, odd, row)
}

// deintGo is the pure-Go twin of the deinterleaving kernels.
func deintGo(even, odd, row []float32) {
	for i := range odd {
		even[i], odd[i] = row[2*i], row[2*i+1]
	}
	if len(even) > len(odd) {
		even[len(odd)] = row[len(row)-1]
	}
}
