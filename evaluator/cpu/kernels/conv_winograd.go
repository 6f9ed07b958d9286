package kernels

// The Winograd variant of the convolution, for 3×3 and 5×5 filters of
// stride 1 where it pays (wgRatio): F(2×2, K×K) computes each 2×2 block of
// output pixels (a tile) from the (K+1)×(K+1) input pixels under it with
// n² = (K+1)² multiplications per input and output channel instead of
// 4·K²: 16 instead of 36 for 3×3 (2.25× fewer), 36 instead of 100 for 5×5
// (2.78×). Three steps, per block of nb tiles (over the images of a
// group, row by row):
//
//   - the input transform V = Bᵀ·d·B of every tile's n×n patch d and
//     every input channel, vectors across tiles: the image is split into
//     its four stride-2 phase planes (as a stride-2 convolution has it), so
//     that pixel (2·ty+i, 2·tx+j) of consecutive tiles tx is a run of
//     consecutive floats of plane (i mod 2, j mod 2);
//   - for each of the n² positions ξ, the product M_ξ = U_ξ·V_ξ of the
//     transformed weights U = G·g·Gᵀ (OC×C) and the block's V_ξ (C×nb), by
//     the same micro-kernels as the other variants, C deep;
//   - the output transform Y = Aᵀ·M·A, 2×2 outputs a tile, with the bias
//     and ReLU or LeakyReLU, then stored into the output rows (two outputs
//     of a tile row interleaved); tanh, sigmoid and GELU follow as a pass.
//
// The transforms add, subtract and multiply by 2 and 4 only (exact) except
// the weights' (G has 1/2 for 3×3, and sixths and twenty-fourths for 5×5:
// computed in float64 once, rounded to float32). A result is not the
// direct sum's bit for bit: the product runs in the transformed domain and
// the transforms round, which costs a few units in the last place (relative
// to the sum of the products' magnitudes; measured in TestWinogradError).
// It is a function of the image's tile and the weights only: which block,
// lane, group, worker or path computes a tile does not change its bits
// (the Go path aside, which rounds products apart as elsewhere). So the
// variant is chosen by the shape alone (wgEligible), never by the batch, the
// thread count or the path: the results of a genome stay one set of bits.

// wgFit holds the coefficients of wgRatio for 3×3 and 5×5 filters: a, b,
// c, d in (a + b/OC + c/C + d/(OH·OW)) / (u·taps/K²). a is the share of the
// direct sum's multiplications the products keep (in theory 16/36 and
// 36/100), b/OC the input transform (shared by the output channels), c/C
// the output transform (shared by the input channels), d/(OH·OW) what is
// paid per image; u is the share of the tiles' 2×2 outputs inside the map
// (odd sizes waste a row and a column), taps/K² the share of the filter the
// direct sum computes (usedTaps leaves out the taps that read only
// padding). They are a least-squares fit, weighted by time, of the two
// variants' measured times (AVX-512, one thread, 32 images) over every
// 3×3 and 5×5 stride-1 layer of three seeds of the bench's small and wide
// populations: BenchmarkWinogradShapes writes them, bench/wgfit.py fits
// them (bench/NOTES.md, stop 24).
var wgFit = [2][4]float64{
	{0.481, 5.573, 1.081, 1.014}, // 3×3
	{0.362, 5.327, 1.343, 0.468}, // 5×5
}

// wgRatio predicts the Winograd variant's time over the direct or packed
// sum's for shape s (stride 1, K 3 or 5).
func wgRatio(s ConvShape) float64 {
	f := wgFit[s.K/2-1]
	tiles := ceilDiv(s.OH, 2) * ceilDiv(s.OW, 2)
	u := float64(s.OH*s.OW) / float64(4*tiles)
	taps := float64(tapCount(s, usedTaps(s))) / float64(s.K*s.K)
	cost := f[0] + f[1]/float64(s.OC) + f[2]/float64(s.C) + f[3]/float64(s.OH*s.OW)
	return cost / (u * taps)
}

// wgEligible reports whether shape s takes the Winograd variant: a 3×3 or
// 5×5 stride-1 filter over a map of at least 2×2 outputs, where wgRatio
// predicts it faster (or wherever it can, under the test knob wgAlways).
// A pure function of the shape: never of the batch, threads or path (the
// fit is AVX-512's; other paths follow its choice so that a genome's
// results are the same bits on every processor).
func wgEligible(s ConvShape) bool {
	if s.Stride != 1 || (s.K != 3 && s.K != 5) || s.OH < 2 || s.OW < 2 || s.C < 1 || s.OC < 1 {
		return false
	}
	return wgAlways || wgRatio(s) < 1
}

// wgAlways makes every shape the variant can compute take it, whatever
// wgRatio predicts: tests run their shapes through it (SetConvMode).
var wgAlways = false

// wgPackedLen is the float32s of the Winograd variant's packed weights:
// n² matrices of OC×C.
func wgPackedLen(s ConvShape) int {
	n := s.K + 1
	return n * n * s.OC * s.C
}

// wgRun is one tile-row run of a Winograd block: cnt tiles of one tile row
// of one image, from tile column tx0, at lane lane of the block. The
// assembly reads it (32 bytes).
type wgRun struct {
	src  int32 // input transform: offset of the run's first patch in the group's planes
	dst  int32 // store: output offset of the run's first pixel
	lane int32 // lane of the block
	cnt  int32 // tiles
	rows int32 // output rows (1 or 2: the last tile row of an odd map has 1)
	n    int32 // outputs a row: min(2·cnt, OW − 2·tx0)
	_    [2]int32
}

// wgArgs is the argument block of the transform kernels (the assembly reads
// it by field offset; keep the order).
type wgArgs struct {
	dst, src   []float32
	bias       []float32
	runs       []wgRun
	dOff, sOff int
	cnt        int // lanes (output transform)
	rows       int // channels (input transform) or output channels
	dRow, sRow int // floats between consecutive channels in dst and src
	dXi, sXi   int // floats between consecutive positions ξ in dst and src
	plane, wq  int // input transform: phase plane and its row
	bOff       int // output transform: bias of row 0
	act        int // output transform: 0, ReLU or LeakyReLU (epilogueAct)
}

// wgWeights computes U = G·g·Gᵀ of every filter g = w[oc, c] ([OC, C, K,
// K] row-major) in float64 and stores it rounded, as the micro-kernels read
// A: for each ξ, the OC×C matrix U_ξ in np balanced panels of output
// channels, k-major within a panel (U_ξ[oc0+r, c] at ξ·OC·C + oc0·C +
// c·mr + r).
func wgWeights(u, w []float32, s ConvShape, np int) {
	n, kk := s.K+1, s.K*s.K
	g := wgG(s.K)
	var uu [36]float64
	for i := range np {
		oc0, mr := panel(s.OC, np, i)
		for r := range mr {
			for c := range s.C {
				f := w[((oc0+r)*s.C+c)*kk : ((oc0+r)*s.C+c+1)*kk]
				wgFilter(&uu, f, s.K, g)
				for xi := range n * n {
					u[xi*s.OC*s.C+oc0*s.C+c*mr+r] = float32(uu[xi])
				}
			}
		}
	}
}

// wgFilter computes U = G·f·Gᵀ of one K×K filter f into uu (n×n, row-major)
// in float64.
func wgFilter(uu *[36]float64, f []float32, k int, g [][]float64) {
	n := k + 1
	var t [6 * 5]float64 // G·f
	for a := range n {
		for j := range k {
			var v float64
			for q := range k {
				v += g[a][q] * float64(f[q*k+j])
			}
			t[a*k+j] = v
		}
	}
	for a := range n {
		for b := range n {
			var v float64
			for j := range k {
				v += t[a*k+j] * g[b][j]
			}
			uu[a*n+b] = v
		}
	}
}

// wgG returns G (n×K) of F(2, K).
func wgG(k int) [][]float64 {
	if k == 3 {
		return [][]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	}
	// Points 0, 1, −1, 2, −2 and ∞.
	return [][]float64{
		{1.0 / 4, 0, 0, 0, 0},
		{-1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6},
		{-1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6},
		{1.0 / 24, 2.0 / 24, 4.0 / 24, 8.0 / 24, 16.0 / 24},
		{1.0 / 24, -2.0 / 24, 4.0 / 24, -8.0 / 24, 16.0 / 24},
		{0, 0, 0, 0, 1},
	}
}

// wgIn4 and wgIn6 are the 1-D input transforms Bᵀ·x of F(2,3) and F(2,5).
// The order of the operations is the assembly's.
func wgIn4(x *[6]float32) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x[0] = x0 - x2
	x[1] = x1 + x2
	x[2] = x2 - x1
	x[3] = x3 - x1
}

func wgIn6(x *[6]float32) {
	x0, x1, x2, x3, x4, x5 := x[0], x[1], x[2], x[3], x[4], x[5]
	t1 := x4 - 4*x2
	t2 := x3 - 4*x1
	t3 := x4 - x2
	t4 := 2 * (x3 - x1)
	x[0] = 4*(x0-x2) + t3
	x[1] = t1 + t2
	x[2] = t1 - t2
	x[3] = t3 + t4
	x[4] = t3 - t4
	x[5] = 4*(x1-x3) + (x5 - x3)
}

// wgOut4 and wgOut6 are the 1-D output transforms Aᵀ·m of F(2,3) and
// F(2,5): the two outputs.
func wgOut4(m *[6]float32) (float32, float32) {
	return (m[0] + m[1]) + m[2], (m[1] - m[2]) + m[3]
}

func wgOut6(m *[6]float32) (float32, float32) {
	s12, d12 := m[1]+m[2], m[1]-m[2]
	s34, d34 := m[3]+m[4], m[3]-m[4]
	return (m[0] + s12) + s34, (d12 + 2*d34) + m[5]
}

// wgInGo is the input transform of one run, the assembly's twin: for
// channel c < rows and lane l < cnt, with d[i][j] = src[sOff + c·sRow +
// ((i&1)·2 + (j&1))·plane + (i>>1)·wq + (j>>1) + l], it stores V = Bᵀ·d·B
// (Bᵀ along i first, then along j) to dst[dOff + (i·n+j)·dXi + c·dRow + l].
func wgInGo(n int, t *wgArgs) {
	in := func(x *[6]float32) {
		if n == 6 {
			wgIn6(x)
		} else {
			wgIn4(x)
		}
	}
	var d [6][6]float32
	var x [6]float32
	for c := range t.rows {
		for l := range t.cnt {
			base := t.sOff + c*t.sRow + l
			for i := range n {
				for j := range n {
					d[i][j] = t.src[base+((i&1)*2+(j&1))*t.plane+(i>>1)*t.wq+(j>>1)]
				}
			}
			for j := range n {
				for i := range n {
					x[i] = d[i][j]
				}
				in(&x)
				for i := range n {
					d[i][j] = x[i]
				}
			}
			for i := range n {
				copy(x[:n], d[i][:n])
				in(&x)
				for j := range n {
					t.dst[t.dOff+(i*n+j)*t.dXi+c*t.dRow+l] = x[j]
				}
			}
		}
	}
}

// wgOutGo is the output transform, the assembly's twin: for row r < rows
// and lane l < cnt, with m[ξ] = src[sOff + ξ·sXi + r·sRow + l], it computes
// Y = Aᵀ·m·A (Aᵀ along ξi first, then along ξj), adds bias[bOff + r],
// applies act and stores Y[a][b] to dst[dOff + (a·2+b)·dXi + r·dRow + l].
func wgOutGo(n int, t *wgArgs) {
	out := func(x *[6]float32) (float32, float32) {
		if n == 6 {
			return wgOut6(x)
		}
		return wgOut4(x)
	}
	var z [2][6]float32
	var x [6]float32
	for r := range t.rows {
		bias := t.bias[t.bOff+r]
		for l := range t.cnt {
			base := t.sOff + r*t.sRow + l
			for j := range n {
				for i := range n {
					x[i] = t.src[base+(i*n+j)*t.sXi]
				}
				z[0][j], z[1][j] = out(&x)
			}
			for a := range 2 {
				copy(x[:n], z[a][:n])
				y0, y1 := out(&x)
				for b, v := range [2]float32{y0, y1} {
					v += bias
					switch {
					case t.act == 1 && v < 0:
						v = 0
					case t.act == 2 && v < 0:
						v *= LeakySlope
					}
					t.dst[t.dOff+(a*2+b)*t.dXi+r*t.dRow+l] = v
				}
			}
		}
	}
}

// wgStoreGo stores a block's outputs, the assembly's twin: for output
// channel r < rows and every run, output row a < run.rows gets, for k <
// run.n, dst[run.dst + r·dRow + a·wq + k] = src[(a·2 + k&1)·sXi + r·sRow +
// run.lane + k>>1] (wq: the output's row length).
func wgStoreGo(t *wgArgs) {
	for r := range t.rows {
		for _, u := range t.runs {
			for a := range int(u.rows) {
				d := t.dst[int(u.dst)+r*t.dRow+a*t.wq:]
				s0 := t.src[(a*2)*t.sXi+r*t.sRow+int(u.lane):]
				s1 := t.src[(a*2+1)*t.sXi+r*t.sRow+int(u.lane):]
				for k := range int(u.n) {
					if k&1 == 0 {
						d[k] = s0[k>>1]
					} else {
						d[k] = s1[k>>1]
					}
				}
			}
		}
	}
}

// wgPlan is the Winograd part of a convPlan.
type wgPlan struct {
	n      int // input tile side, K+1
	th, tw int // tiles per column and row of an image
	ldV    int // lanes a block's rows hold (nr and a vector of slack)
	offV   int // workers × n²·C·ldV: the transformed inputs of a block
	offM   int // workers × n²·mrMax·ldV: one panel's products
	offY   int // workers × 4·OC·ldV: the block's outputs
	offRun int // workers × (nr+1) runs
	wsV    int
	wsM    int
	wsY    int
}

// wgRunWords is a wgRun in float32s.
const wgRunWords = 8

// planWinograd fills in pl for the Winograd variant of s (wgEligible(s)).
func planWinograd(pl *convPlan, p Path, s ConvShape, b, threads int, prepacked bool) {
	n := s.K + 1
	w := &pl.wg
	pl.winograd = true
	w.n = n
	w.th, w.tw = ceilDiv(s.OH, 2), ceilDiv(s.OW, 2)
	pl.kdim = s.C
	pl.nph = 2
	pl.hq = ceilDiv(s.H+2*s.Pad, 2)
	pl.wq = ceilDiv(s.W+2*s.Pad, 2)
	pl.plane = pl.hq * pl.wq
	pl.imgLen = s.C * 4 * pl.plane
	lanes := p.lanes()
	pl.nv = 2
	pl.nr = pl.nv * lanes
	pl.mpan = panels(s.OC, mrMax(p, pl.nv))
	tiles := w.th * w.tw
	pl.group = groupSize(tiles, pl.nr, ceilDiv(b, max(1, min(threads, b))))
	pl.workers = max(1, min(threads, ceilDiv(b, pl.group)))
	room := max(1, min(threads, b))
	w.ldV = pl.nr + lanes
	// Slack after the planes: the input transform reads whole vectors.
	pl.prepLen = pl.group*pl.imgLen + 2*pl.wq + 4*lanes + 4
	w.wsV = n * n * s.C * w.ldV
	w.wsM = n * n * mrMax(p, pl.nv) * w.ldV
	w.wsY = 4 * s.OC * w.ldV
	pl.offA = 0
	pl.offKoff = pl.offA
	if !prepacked {
		pl.offKoff += n * n * s.OC * s.C
	}
	pl.offPrep = pl.offKoff + s.C
	w.offV = alignUp(pl.offPrep+room*pl.prepLen, 16)
	w.offM = w.offV + room*w.wsV
	w.offY = w.offM + room*w.wsM
	w.offRun = w.offY + room*w.wsY
	pl.wsLen = w.offRun + room*(pl.nr+1)*wgRunWords
}

// wgPrepPlan is the stride-2 plan whose planes prepImage fills for the
// Winograd variant.
func wgPrep(pl *convPlan, s *ConvShape) (convPlan, ConvShape) {
	s2 := *s
	s2.Stride = 2
	return convPlan{path: pl.path, nph: 2, hq: pl.hq, wq: pl.wq, plane: pl.plane}, s2
}

func (j *convJob) runWinograd(w int) {
	pl, s, wg := &j.pl, &j.s, &j.pl.wg
	ngroups := ceilDiv(j.b, pl.group)
	lo, hi := share(ngroups, pl.workers, w)
	if lo >= hi {
		return
	}
	n := wg.n
	prep := j.ws[pl.offPrep+w*pl.prepLen : pl.offPrep+(w+1)*pl.prepLen]
	vb := j.ws[wg.offV+w*wg.wsV : wg.offV+(w+1)*wg.wsV]
	mb := j.ws[wg.offM+w*wg.wsM : wg.offM+(w+1)*wg.wsM]
	yb := j.ws[wg.offY+w*wg.wsY : wg.offY+(w+1)*wg.wsY]
	runs := asWgRuns(j.ws[wg.offRun+w*(pl.nr+1)*wgRunWords:], pl.nr+1)
	clear(prep)
	ppl, ps := wgPrep(pl, s)
	pix := s.OH * s.OW
	in := s.C * s.H * s.W
	tiles := wg.th * wg.tw
	ta := tileArgs{
		a: j.a, b: vb, koff: j.koff, c: mb, rowBias: zeros[:], colBias: zeros[:],
		k: s.C, ldc: wg.ldV, bias: biasRow,
	}
	var seg1 [1]seg
	ta.segs = seg1[:]
	for grp := lo; grp < hi; grp++ {
		img0 := grp * pl.group
		g := min(pl.group, j.b-img0)
		for i := range g {
			prepImage(&ppl, &ps, prep[i*pl.imgLen:(i+1)*pl.imgLen], j.src[(img0+i)*in:(img0+i+1)*in])
		}
		nt := g * tiles
		for t0 := 0; t0 < nt; t0 += pl.nr {
			cnt := min(pl.nr, nt-t0)
			nrun := wgRuns(runs, t0, cnt, wg, s, pl, img0)
			for _, u := range runs[:nrun] {
				wgIn(pl.path, n, &wgArgs{
					dst: vb, src: prep, dOff: int(u.lane), sOff: int(u.src), cnt: int(u.cnt), rows: s.C,
					dRow: wg.ldV, sRow: 4 * pl.plane, dXi: s.C * wg.ldV, plane: pl.plane, wq: pl.wq,
				})
			}
			nv := ceilDiv(cnt, pl.path.lanes())
			seg1[0].setMask(laneMask(0, nv*pl.path.lanes()))
			for i := range pl.mpan {
				oc0, mr := panel(s.OC, pl.mpan, i)
				ta.mr, ta.astride = mr, mr
				for xi := range n * n {
					ta.aoff = xi*s.OC*s.C + oc0*s.C
					ta.boff = xi * s.C * wg.ldV
					ta.coff = xi * mr * wg.ldV
					gemm(pl.path, nv, &ta)
				}
				wgOut(pl.path, n, &wgArgs{
					dst: yb, src: mb, bias: j.bias, dOff: oc0 * wg.ldV, cnt: cnt, rows: mr,
					dRow: wg.ldV, sRow: wg.ldV, dXi: s.OC * wg.ldV, sXi: mr * wg.ldV,
					bOff: oc0, act: epilogueAct(j.act),
				})
			}
			wgStore(pl.path, &wgArgs{
				dst: j.dst, src: yb, runs: runs[:nrun], rows: s.OC,
				dRow: pix, sRow: wg.ldV, sXi: s.OC * wg.ldV, wq: s.OW,
			})
		}
		if applyAfter(j.act) {
			applyVec(pl.path, j.act, j.dst[img0*s.OC*pix:(img0+g)*s.OC*pix])
		}
	}
}

// wgRuns lists the tile-row runs of the block of cnt tiles from tile t0 of
// the group that starts at image img0, and returns their count.
func wgRuns(runs []wgRun, t0, cnt int, wg *wgPlan, s *ConvShape, pl *convPlan, img0 int) int {
	tiles := wg.th * wg.tw
	pix := s.OH * s.OW
	nr := 0
	for t := t0; t < t0+cnt; {
		i, q := t/tiles, t%tiles
		ty, tx := q/wg.tw, q%wg.tw
		c := min(wg.tw-tx, t0+cnt-t)
		runs[nr] = wgRun{
			src:  int32(i*pl.imgLen + ty*pl.wq + tx),
			dst:  int32((img0+i)*s.OC*pix + 2*ty*s.OW + 2*tx),
			lane: int32(t - t0),
			cnt:  int32(c),
			rows: int32(min(2, s.OH-2*ty)),
			n:    int32(min(2*c, s.OW-2*tx)),
		}
		nr++
		t += c
	}
	return nr
}

// initWinograd transforms the weights (w) or takes them transformed, and
// lays out the product's row offsets in a block (koff[c] = c·ldV).
func (j *convJob) initWinograd(w, packed []float32) {
	pl, s := &j.pl, j.s
	n := wgPackedLen(s)
	if w != nil {
		j.a = j.ws[pl.offA : pl.offA+n]
		wgWeights(j.a, w, s, pl.mpan)
	} else {
		j.a = packed[:n]
	}
	j.koff = asInt32(j.ws[pl.offKoff:], s.C)
	for c := range j.koff {
		j.koff[c] = int32(c * pl.wg.ldV)
	}
}
