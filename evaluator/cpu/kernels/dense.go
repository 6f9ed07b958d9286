package kernels

import "fmt"

// A dense layer is the product C[b, out] = X[b, in] · Wᵀ[in, out]: batch rows
// are the tile rows (A, broadcast) and output features the tile columns (B,
// vectors). Both operands are packed into the layouts the micro-kernels read:
// X by panels of mr rows, k-major; Wᵀ by panels of nr features, k-major,
// zero beyond out. The bias is a column bias.

type densePlan struct {
	path    Path
	nv, nr  int
	npan    int // panels of nr output features
	mpan    int // panels of batch rows
	workers int
	offB    int // packed Wᵀ: npan·nr·in (none when it comes packed)
	offKoff int // in int32
	offBias int // npan·nr
	offA    int // packed X: b·in
	wsLen   int
}

// planDense plans a call on path p. nvOnly > 0 restricts the tile width to
// nvOnly vectors (Wᵀ packed for it); prepacked leaves the packed Wᵀ out of
// the workspace, and its packing out of the cost.
func planDense(p Path, in, out, b, threads, nvOnly int, prepacked bool) densePlan {
	pl := densePlan{path: p}
	best := -1.0
	for nv := 1; nv <= maxNV; nv++ {
		if nvOnly > 0 && nv != nvOnly {
			continue
		}
		nr := nv * p.lanes()
		np := ceilDiv(out, nr)
		mp := panels(b, mrMax(p, nv))
		var per float64
		for i := range mp {
			_, mr := panel(b, mp, i)
			per += float64(in)*kernelCycles(mr, nv) + float64(mr*nv) + 20
		}
		cost := float64(np) * per
		if !prepacked {
			cost += float64(np*nr*in) / 4
		}
		if best < 0 || cost < best {
			best, pl.nv, pl.nr, pl.npan, pl.mpan = cost, nv, nr, np, mp
		}
	}
	pl.workers = max(1, min(threads, pl.mpan))
	pl.offB = 0
	pl.offKoff = pl.offB
	if !prepacked {
		pl.offKoff += pl.npan * pl.nr * in
	}
	pl.offBias = pl.offKoff + in
	pl.offA = pl.offBias + pl.npan*pl.nr
	pl.wsLen = pl.offA + b*in
	return pl
}

// DenseFLOPs returns 2 × the multiply-adds of a dense layer for one row.
func DenseFLOPs(in, out int) int64 { return 2 * int64(in) * int64(out) }

// DenseWorkspace returns the float32s of scratch Dense needs for a batch of
// up to b, on any path.
func DenseWorkspace(in, out, b, threads int) int {
	if in < 1 || out < 1 || b < 1 || threads < 1 {
		panic(fmt.Sprintf("kernels: DenseWorkspace: bad sizes in %d out %d b %d threads %d", in, out, b, threads))
	}
	return denseWorkspace(in, out, b, threads, false)
}

// denseWorkspace is the largest workspace of any path and tile width at
// batch b: the width a call picks may differ with the batch (a smaller one
// included) and the packing, and each grows with b.
func denseWorkspace(in, out, b, threads int, prepacked bool) int {
	return memoWorkspace(wsKey{s: ConvShape{C: in, OC: out}, b: b, threads: threads, dense: true, prepacked: prepacked}, denseWorkspaceOf)
}

func denseWorkspaceOf(k wsKey) int {
	in, out, b, threads, prepacked := k.s.C, k.s.OC, k.b, k.threads, k.prepacked
	n := 0
	for p := range numPaths {
		for nv := 1; nv <= maxNV; nv++ {
			n = max(n, planDense(p, in, out, b, threads, nv, prepacked).wsLen)
		}
	}
	return n
}

// DensePackedWorkspace returns the float32s of scratch DensePacked needs
// for a batch of up to b, whatever Packing Wᵀ has.
func DensePackedWorkspace(in, out, b, threads int) int {
	DenseWorkspace(in, out, b, threads) // checks the sizes
	return denseWorkspace(in, out, b, threads, true)
}

// PackedDenseLen returns the float32s PackDense may write: Wᵀ in panels of
// the tile width, out rounded up to it, for the widest case.
func PackedDenseLen(in, out int) int {
	n := 0
	for p := range numPaths {
		for nv := 1; nv <= maxNV; nv++ {
			nr := nv * p.lanes()
			n = max(n, ceilDiv(out, nr)*nr*in)
		}
	}
	return n
}

// PackDense stores Wᵀ (w is [out, in] row-major) in dst, PackedDenseLen(in,
// out) floats, as the micro-kernels read it, for the tile width the selected
// path picks for a batch of b on the given threads. Packed once, it serves
// every later DensePacked call of that layer, of any batch: Dense repacks
// Wᵀ on every call.
func PackDense(dst, w []float32, in, out, b, threads int) Packing {
	DenseWorkspace(in, out, b, threads) // checks the sizes
	if len(dst) < PackedDenseLen(in, out) || len(w) < in*out {
		panic(fmt.Sprintf("kernels: PackDense: len(dst) %d len(w) %d for in %d out %d", len(dst), len(w), in, out))
	}
	pl := planDense(selected(), in, out, b, threads, 0, true)
	j := denseJob{pl: pl, in: in, out: out, w: w, wt: dst}
	j.packB(0, pl.npan)
	return Packing{path: pl.path, nv: pl.nv}
}

// Dense computes dst[b, out] = act(w · src[b] + bias) for b rows of in
// features; w is [out, in] row-major. ws is scratch of at least
// DenseWorkspace(in, out, b, threads) floats.
func Dense(dst, src, w, bias []float32, b, in, out int, act Act, ws []float32, threads int) {
	dense(dst, src, w, nil, Packing{}, bias, b, in, out, act, ws, threads)
}

// DensePacked is Dense with Wᵀ packed by PackDense (pk is what it
// returned), on the path it was packed for; ws is scratch of at least
// DensePackedWorkspace(in, out, b, threads) floats. The results are
// Dense's, bit for bit.
func DensePacked(dst, src, packed []float32, pk Packing, bias []float32, b, in, out int, act Act, ws []float32, threads int) {
	if pk.nv < 1 || pk.nv > maxNV || pk.path >= numPaths {
		panic(fmt.Sprintf("kernels: DensePacked: packing %+v is not from PackDense", pk))
	}
	dense(dst, src, nil, packed, pk, bias, b, in, out, act, ws, threads)
}

// dense is Dense (packed nil) and DensePacked (w nil).
func dense(dst, src, w, packed []float32, pk Packing, bias []float32, b, in, out int, act Act, ws []float32, threads int) {
	weights, wlen := w, out*in
	if w == nil {
		weights, wlen = packed, 0
		if b >= 1 && in >= 1 && out >= 1 && pk.path < numPaths {
			nr := pk.nv * pk.path.lanes()
			wlen = ceilDiv(out, nr) * nr * in
		}
	}
	if b < 1 || in < 1 || out < 1 || threads < 1 || !act.Valid() || len(dst) < b*out || len(src) < b*in ||
		len(weights) < wlen || len(bias) < out {
		panic(fmt.Sprintf("kernels: Dense: bad arguments: b %d in %d out %d threads %d act %v len(dst) %d len(src) %d len(w) %d len(bias) %d",
			b, in, out, threads, act, len(dst), len(src), len(weights), len(bias)))
	}
	var pl densePlan
	if w == nil {
		pl = planDense(pk.path, in, out, b, threads, pk.nv, true)
	} else {
		pl = planDense(selected(), in, out, b, threads, 0, false)
	}
	if len(ws) < pl.wsLen {
		panic(fmt.Sprintf("kernels: Dense: workspace of %d floats, want %d", len(ws), pl.wsLen))
	}
	j := denseJob{pl: pl, in: in, out: out, b: b, dst: dst, src: src, w: w, ws: ws, act: act}
	if w != nil {
		j.wt = ws[pl.offB : pl.offB+pl.npan*pl.nr*in]
	} else {
		j.wt = packed[:pl.npan*pl.nr*in]
	}
	koff := asInt32(ws[pl.offKoff:], in)
	for k := range koff {
		koff[k] = int32(k * pl.nr)
	}
	cb := ws[pl.offBias : pl.offBias+pl.npan*pl.nr]
	copy(cb, bias[:out])
	clear(cb[out:])
	j.koff = koff
	if pl.workers == 1 {
		if w != nil {
			j.packB(0, pl.npan)
		}
		j.run(0)
		return
	}
	jp := new(denseJob)
	*jp = j
	if w != nil {
		fanOut(pl.workers, densePack{jp})
	}
	fanOut(pl.workers, jp)
}

type denseJob struct {
	pl          densePlan
	in, out, b  int
	dst, src, w []float32
	wt          []float32 // packed Wᵀ
	ws          []float32
	koff        []int32
	act         Act
}

type densePack struct{ *denseJob }

func (d densePack) run(w int) {
	lo, hi := share(d.pl.npan, d.pl.workers, w)
	d.packB(lo, hi)
}

// packB packs feature panels [lo, hi) of Wᵀ: w[n, k] at pn·in·nr + k·nr + j.
func (j *denseJob) packB(lo, hi int) {
	pl, in := &j.pl, j.in
	for pn := lo; pn < hi; pn++ {
		pb := j.wt[pn*in*pl.nr : (pn+1)*in*pl.nr]
		for jj := range pl.nr {
			n := pn*pl.nr + jj
			if n >= j.out {
				for k := range in {
					pb[k*pl.nr+jj] = 0
				}
				continue
			}
			for k, v := range j.w[n*in : (n+1)*in] {
				pb[k*pl.nr+jj] = v
			}
		}
	}
}

func (j *denseJob) run(w int) {
	pl, in := &j.pl, j.in
	lo, hi := share(pl.mpan, pl.workers, w)
	var sg [1]seg
	ta := tileArgs{
		b: j.wt, koff: j.koff, c: j.dst, segs: sg[:],
		rowBias: zeros[:], colBias: j.ws[pl.offBias : pl.offBias+pl.npan*pl.nr],
		k: in, ldc: j.out, act: epilogueAct(j.act), bias: biasCol,
	}
	// One panel of features (at most 16 on AVX-512, a dense layer of few
	// outputs: the last of the evolve genomes): the batch rows are read
	// where they lie, not transposed into a panel (which took four times
	// the product's time). The product reads the same numbers in the same
	// order either way.
	if pl.nv == 1 && pl.npan == 1 && pl.path == AVX512 {
		ta.a, ta.astride = j.src, in
		ta.boff, ta.cboff = 0, 0
		sg[0].setMask(laneMask(0, j.out))
		for i := lo; i < hi; i++ {
			b0, mr := panel(j.b, pl.mpan, i)
			ta.aoff, ta.mr, ta.coff = b0*in, mr, b0*j.out
			gemmRows(&ta)
			if applyAfter(j.act) {
				applyVec(pl.path, j.act, j.dst[b0*j.out:(b0+mr)*j.out])
			}
		}
		return
	}
	for i := lo; i < hi; i++ {
		b0, mr := panel(j.b, pl.mpan, i)
		pa := j.ws[pl.offA+b0*in : pl.offA+(b0+mr)*in]
		for r := range mr {
			for k, v := range j.src[(b0+r)*in : (b0+r+1)*in] {
				pa[k*mr+r] = v
			}
		}
		ta.a, ta.aoff, ta.astride, ta.mr, ta.coff = pa, 0, mr, mr, b0*j.out
		for pn := range pl.npan {
			sg[0].off = int32(pn * pl.nr)
			sg[0].setMask(laneMask(0, min(pl.nr, j.out-pn*pl.nr)))
			ta.boff, ta.cboff = pn*in*pl.nr, pn*pl.nr
			gemm(pl.path, pl.nv, &ta)
		}
		if applyAfter(j.act) {
			applyVec(pl.path, j.act, j.dst[b0*j.out:(b0+mr)*j.out])
		}
	}
}
