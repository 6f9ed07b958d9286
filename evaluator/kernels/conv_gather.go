package kernels

// The gather variant of the direct convolution, for small output maps where
// the padding columns and the last partial tile waste most lanes (a 7×7 map
// with a 5×5 filter keeps 49 of 96 lanes busy). Tiles run over the output
// pixels of a group of images, back to back; each tile's B panel (kdim × nr)
// is packed from the images' phase planes by gathers: lane j of tap k reads
// prep[lanes[j] + koff[k]]. The packed panel then feeds the same
// micro-kernels, with store segments that split at image boundaries.

// initGather fills the shared tables: koffP[k] = k·nr and lanes.
func (j *convJob) initGather() {
	pl, s := &j.pl, &j.s
	j.koffP = asInt32(j.ws[pl.offKoffP:], pl.kdim)
	for k := range j.koffP {
		j.koffP[k] = int32(k * pl.nr)
	}
	pix := s.OH * s.OW
	j.lanes = asInt32(j.ws[pl.offLanes:], pl.ntg*pl.nr)
	for n := range j.lanes {
		if n >= pl.group*pix {
			j.lanes[n] = 0 // past the group: read anything, stored nowhere
			continue
		}
		i, q := n/pix, n%pix
		j.lanes[n] = int32(i*pl.imgLen + (q/s.OW)*pl.wq + q%s.OW)
	}
}

func (j *convJob) runGather(w int) {
	pl, s := &j.pl, &j.s
	ngroups := ceilDiv(j.b, pl.group)
	lo, hi := share(ngroups, pl.workers, w)
	if lo >= hi {
		return
	}
	prep := j.ws[pl.offPrep+w*pl.prepLen : pl.offPrep+(w+1)*pl.prepLen]
	clear(prep)
	packB := j.ws[pl.offPackB+w*pl.kdim*pl.nr : pl.offPackB+(w+1)*pl.kdim*pl.nr]
	pix := s.OH * s.OW
	in := s.C * s.H * s.W
	var segBuf [maxSegs + 1]seg
	ta := tileArgs{
		a: j.ws[pl.offA : pl.offA+s.OC*pl.kdim], b: packB, koff: j.koffP, c: j.dst,
		rowBias: j.bias, colBias: zeros[:], k: pl.kdim, ldc: pix, act: epilogueAct(j.act),
	}
	for grp := lo; grp < hi; grp++ {
		img0 := grp * pl.group
		g := min(pl.group, j.b-img0)
		for i := range g {
			prepImage(pl, s, prep[i*pl.imgLen:(i+1)*pl.imgLen], j.src[(img0+i)*in:(img0+i+1)*in])
		}
		nl := g * pix
		for t := range ceilDiv(nl, pl.nr) {
			n0 := t * pl.nr
			gatherPack(pl.path, packB, prep, j.lanes[n0:n0+pl.nr], j.koff, pl.nv)
			ns := 0
			for i := n0 / pix; i*pix < min(nl, n0+pl.nr); i++ {
				a, b := max(i*pix, n0), min((i+1)*pix, n0+pl.nr, nl)
				segBuf[ns].off = int32(i*(s.OC-1)*pix + n0)
				segBuf[ns].setMask(laneMask(a-n0, b-n0))
				ns++
			}
			ta.segs = segBuf[:ns]
			for i := range pl.mpan {
				oc0, mr := panel(s.OC, pl.mpan, i)
				ta.aoff, ta.astride, ta.mr = oc0*pl.kdim, mr, mr
				ta.coff, ta.rboff = img0*s.OC*pix+oc0*pix, oc0
				gemm(pl.path, pl.nv, &ta)
			}
		}
		if applyAfter(j.act) {
			applyVec(pl.path, j.act, j.dst[img0*s.OC*pix:(img0+g)*s.OC*pix])
		}
	}
}

// gatherGo is the pure-Go twin of the gather kernels: for every tap k,
// dst[k·nr + j] = src[lanes[j] + koff[k]] for j < nr.
func gatherGo(dst, src []float32, lanes, koff []int32, nv int) {
	nr := nv * 16
	lanes = lanes[:nr]
	for k, o := range koff {
		row := dst[k*nr : (k+1)*nr]
		for jj, l := range lanes {
			row[jj] = src[int(l)+int(o)]
		}
	}
}
