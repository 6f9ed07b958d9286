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
	offB    int // packed Wᵀ: npan·nr·in
	offKoff int // in int32
	offBias int // npan·nr
	offA    int // packed X: b·in
	wsLen   int
}

func planDense(p Path, in, out, b, threads int) densePlan {
	pl := densePlan{path: p}
	best := -1.0
	for nv := 1; nv <= maxNV; nv++ {
		nr := nv * p.lanes()
		np := ceilDiv(out, nr)
		mp := panels(b, mrMax(p, nv))
		var per float64
		for i := range mp {
			_, mr := panel(b, mp, i)
			per += float64(in)*kernelCycles(mr, nv) + float64(mr*nv) + 20
		}
		cost := float64(np)*per + float64(np*nr*in)/4
		if best < 0 || cost < best {
			best, pl.nv, pl.nr, pl.npan, pl.mpan = cost, nv, nr, np, mp
		}
	}
	pl.workers = max(1, min(threads, pl.mpan))
	pl.offB = 0
	pl.offKoff = pl.offB + pl.npan*pl.nr*in
	pl.offBias = pl.offKoff + in
	pl.offA = pl.offBias + pl.npan*pl.nr
	pl.wsLen = pl.offA + b*in
	return pl
}

// DenseFLOPs returns 2 × the multiply-adds of a dense layer for one row.
func DenseFLOPs(in, out int) int64 { return 2 * int64(in) * int64(out) }

// DenseWorkspace returns the float32s of scratch Dense needs, on any path.
func DenseWorkspace(in, out, b, threads int) int {
	if in < 1 || out < 1 || b < 1 || threads < 1 {
		panic(fmt.Sprintf("kernels: DenseWorkspace: bad sizes in %d out %d b %d threads %d", in, out, b, threads))
	}
	n := 0
	for p := range numPaths {
		n = max(n, planDense(p, in, out, b, threads).wsLen)
	}
	return n
}

// Dense computes dst[b, out] = act(w · src[b] + bias) for b rows of in
// features; w is [out, in] row-major. ws is scratch of at least
// DenseWorkspace(in, out, b, threads) floats.
func Dense(dst, src, w, bias []float32, b, in, out int, act Act, ws []float32, threads int) {
	if b < 1 || in < 1 || out < 1 || threads < 1 || !act.Valid() || len(dst) < b*out || len(src) < b*in ||
		len(w) < out*in || len(bias) < out {
		panic(fmt.Sprintf("kernels: Dense: bad arguments: b %d in %d out %d threads %d act %v len(dst) %d len(src) %d len(w) %d len(bias) %d",
			b, in, out, threads, act, len(dst), len(src), len(w), len(bias)))
	}
	pl := planDense(selected(), in, out, b, threads)
	if len(ws) < pl.wsLen {
		panic(fmt.Sprintf("kernels: Dense: workspace of %d floats, want %d", len(ws), pl.wsLen))
	}
	j := denseJob{pl: pl, in: in, out: out, b: b, dst: dst, src: src, w: w, ws: ws, act: act}
	koff := asInt32(ws[pl.offKoff:], in)
	for k := range koff {
		koff[k] = int32(k * pl.nr)
	}
	cb := ws[pl.offBias : pl.offBias+pl.npan*pl.nr]
	copy(cb, bias[:out])
	clear(cb[out:])
	j.koff = koff
	if pl.workers == 1 {
		j.packB(0, pl.npan)
		j.run(0)
		return
	}
	jp := new(denseJob)
	*jp = j
	fanOut(pl.workers, densePack{jp})
	fanOut(pl.workers, jp)
}

type denseJob struct {
	pl          densePlan
	in, out, b  int
	dst, src, w []float32
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
		pb := j.ws[pl.offB+pn*in*pl.nr : pl.offB+(pn+1)*in*pl.nr]
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
		b: j.ws[pl.offB : pl.offB+pl.npan*pl.nr*in], koff: j.koff, c: j.dst, segs: sg[:],
		rowBias: zeros[:], colBias: j.ws[pl.offBias : pl.offBias+pl.npan*pl.nr],
		k: in, ldc: j.out, act: epilogueAct(j.act),
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
