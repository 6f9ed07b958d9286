package kernels

// The packed variant of the convolution, for small output maps where the
// direct tiles waste most lanes on padding columns and partial tiles (a 7×7
// map with a 5×5 filter keeps 49 of 96 lanes busy). Tiles run over the output
// pixels of a group of images, back to back; each tile's B panel (kdim rows of
// nr floats, row stride nr+16) is packed from the images' phase planes, one
// run of consecutive output pixels of one output row at a time: for every tap
// k, run r copies n floats from prep[koff[k] + r.src] to lane r.lane. The
// packed panel then feeds the same micro-kernels, with store segments that
// split at image boundaries. This is im2col, one tile at a time, by vector
// copies.

// run is one row run of a packed tile; the assembly reads it (16 bytes).
type run struct {
	src  int32 // plane offset of the run's first pixel
	lane int32 // its lane in the tile
	n    int32 // pixels, at most 2 vectors
	_    int32
}

// vecPieces is one vector of a packed tile for packVec: its lanes come from
// n (1 to 3) row runs, piece i from the tap's source at off[i] + lane
// (off[i] = the run's src − its lane + the vector's first lane) for the
// lanes in mask[i]; piece 0 covers the vector's first lane and is loaded
// whole (its mask is not read). The assembly reads it (32 bytes).
type vecPieces struct {
	n    int32
	off  [3]int32
	mask [3]uint32
	_    int32
}

// vecPiecesOf splits the len(vp) vectors of a tile's lanes among its runs
// (lanes 0 on, in order, none skipped), or reports false when a vector
// spans more than three runs (rows under 8 pixels).
func vecPiecesOf(vp []vecPieces, runs []run, lanes int) bool {
	for v := range vp {
		lo, hi := v*lanes, (v+1)*lanes
		p := &vp[v]
		p.n = 0
		for _, r := range runs {
			a, b := max(int(r.lane), lo), min(int(r.lane+r.n), hi)
			if a >= b {
				continue
			}
			if p.n == 3 {
				return false
			}
			p.off[p.n] = r.src - r.lane + int32(lo)
			p.mask[p.n] = uint32(laneMask(a-lo, b-lo))
			p.n++
		}
	}
	return true
}

// packPad is the padding after each packed row: the assembly copies whole
// vectors and may write up to a vector past a run.
const packPad = 16

func (j *convJob) initPacked() {
	pl := &j.pl
	j.koffP = asInt32(j.ws[pl.offKoffP:], pl.kdim)
	for k := range j.koffP {
		j.koffP[k] = int32(k * (pl.nr + packPad))
	}
}

func (j *convJob) runPacked(w int) {
	pl, s := &j.pl, &j.s
	ngroups := ceilDiv(j.b, pl.group)
	lo, hi := share(ngroups, pl.workers, w)
	if lo >= hi {
		return
	}
	prep := j.ws[pl.offPrep+w*pl.prepLen : pl.offPrep+(w+1)*pl.prepLen]
	cleared := false
	stride := pl.nr + packPad
	packB := j.ws[pl.offPackB+w*pl.kdim*stride : pl.offPackB+(w+1)*pl.kdim*stride]
	pix := s.OH * s.OW
	in := s.C * s.H * s.W
	maxRun := 2 * pl.path.lanes()
	var segBuf [maxSegs + 1]seg
	var runBuf [2*maxSegs + 2]run
	var vecBuf [maxNV]vecPieces
	// Rows of 8 pixels or more: no vector spans more than three runs.
	vecOK := pl.path == AVX512 && s.OW >= 8
	ta := tileArgs{
		a: j.a, b: packB, koff: j.koffP, c: j.dst,
		rowBias: j.bias, colBias: zeros[:], k: pl.kdim, ldc: pix, act: epilogueAct(j.act),
		bias: biasRow,
	}
	for grp := lo; grp < hi; grp++ {
		img0 := grp * pl.group
		g := min(pl.group, j.b-img0)
		// In place (inPlace), a run's whole-vector reads need 2·packPad
		// floats of the batch after the group.
		planes := prep
		if inPlace(s) && (img0+g)*in+2*packPad <= j.b*in {
			planes = j.src[img0*in : (img0+g)*in+2*packPad]
		} else {
			if !cleared {
				clear(prep)
				cleared = true
			}
			for i := range g {
				prepImage(pl, s, prep[i*pl.imgLen:(i+1)*pl.imgLen], j.src[(img0+i)*in:(img0+i+1)*in])
			}
		}
		nl := g * pix
		for t := range ceilDiv(nl, pl.nr) {
			n0 := t * pl.nr
			end := min(nl, n0+pl.nr)
			nr := tileRuns(runBuf[:], n0, end, pix, s.OW, pl.wq, pl.imgLen, maxRun)
			nvec := ceilDiv(end-n0, pl.path.lanes())
			if !vecOK || !vecPiecesOf(vecBuf[:nvec], runBuf[:nr], pl.path.lanes()) ||
				!packVec(pl.path, packB, planes, j.koff, vecBuf[:nvec], stride) {
				packRuns(pl.path, packB, planes, j.koff, runBuf[:nr], stride)
			}
			ns := 0
			for i := n0 / pix; i*pix < end; i++ {
				a, b := max(i*pix, n0), min((i+1)*pix, end)
				segBuf[ns].off = int32(i*(s.OC-1)*pix + n0)
				segBuf[ns].setMask(laneMask(a-n0, b-n0))
				ns++
			}
			ta.segs = segBuf[:ns]
			nv := ceilDiv(end-n0, pl.path.lanes()) // the last tile of a group may be narrower (lastNV)
			if fullLastTile {
				nv = pl.nv
			}
			for i := range pl.mpan {
				oc0, mr := panel(s.OC, pl.mpan, i)
				ta.aoff, ta.astride, ta.mr = oc0*pl.kdim, mr, mr
				ta.coff, ta.rboff = img0*s.OC*pix+oc0*pix, oc0
				gemm(pl.path, nv, &ta)
			}
		}
		if applyAfter(j.act) {
			applyVec(pl.path, j.act, j.dst[img0*s.OC*pix:(img0+g)*s.OC*pix])
		}
	}
}

// tileRuns lists in runs the row runs of the tile of lanes n0..end-1 (the
// output pixels of a group's images, pix an image, rows of ow, phase-plane
// rows wq apart, images imgLen apart), each at most maxRun pixels, and
// returns their count.
func tileRuns(runs []run, n0, end, pix, ow, wq, imgLen, maxRun int) int {
	nr := 0
	for n := n0; n < end; {
		i, q := n/pix, n%pix
		oh, w := q/ow, q%ow
		l := min(ow-w, end-n, maxRun)
		runs[nr] = run{src: int32(i*imgLen + oh*wq + w), lane: int32(n - n0), n: int32(l)}
		nr++
		n += l
	}
	return nr
}

// packRunsGo is the pure-Go twin of the run packing kernels: for every tap
// k and run r, dst[k·stride + r.lane + i] = src[koff[k] + r.src + i], i < r.n.
func packRunsGo(dst, src []float32, koff []int32, runs []run, stride int) {
	for _, r := range runs {
		for k, o := range koff {
			d := k*stride + int(r.lane)
			sr := int(o) + int(r.src)
			copy(dst[d:d+int(r.n)], src[sr:sr+int(r.n)])
		}
	}
}
