//go:build !noasm

package kernels

import "golang.org/x/sys/cpu"

//go:generate go run gen_asm.go gen_vec.go gen_pool.go gen_wino.go

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
)

func best() Path {
	switch {
	case hasAVX512:
		return AVX512
	case hasAVX2:
		return AVX2
	}
	return PureGo
}

func available(p Path) bool {
	switch p {
	case AVX512:
		return hasAVX512
	case AVX2:
		return hasAVX2
	}
	return p == PureGo
}

// The micro-kernels, generated into gemm_amd64.s. Calls go through the
// switch in gemm, not through function values, so that the argument block
// stays on the caller's stack (//go:noescape only holds for direct calls).

//go:noescape
func gemm512x1(t *tileArgs)

//go:noescape
func gemm512x1s(t *tileArgs)

//go:noescape
func gemm512x2(t *tileArgs)

//go:noescape
func gemm512x3(t *tileArgs)

//go:noescape
func gemm512x4(t *tileArgs)

//go:noescape
func gemm256x1(t *tileArgs)

//go:noescape
func gemm256x2(t *tileArgs)

//go:noescape
func gemm256x3(t *tileArgs)

//go:noescape
func gemm256x4(t *tileArgs)

// gemmRows runs the one-vector AVX-512 tile with A's rows where they lie:
// row r of A at a[aoff + r·astride + k], B at b[boff + k·16] (koff
// unread). The same sums as gemm512x1's in the same order, so the same
// bits as gemm512x1 on A transposed into a panel.
func gemmRows(t *tileArgs) { gemm512x1s(t) }

func gemm(p Path, nv int, t *tileArgs) {
	switch p {
	case AVX512:
		switch nv {
		case 1:
			gemm512x1(t)
		case 2:
			gemm512x2(t)
		case 3:
			gemm512x3(t)
		default:
			gemm512x4(t)
		}
	case AVX2:
		switch nv {
		case 1:
			gemm256x1(t)
		case 2:
			gemm256x2(t)
		case 3:
			gemm256x3(t)
		default:
			gemm256x4(t)
		}
	default:
		gemmGo(t, nv)
	}
}

// The vector kernels, generated into vec_amd64.s. Each handles whole
// vectors; the Go twins finish the tails.

//go:noescape
func act512(act int, x []float32)

//go:noescape
func act256(act int, x []float32)

//go:noescape
func add512(dst, src []float32)

//go:noescape
func add256(dst, src []float32)

//go:noescape
func sum512(x []float32) float32

//go:noescape
func sum256(x []float32) float32

//go:noescape
func pool2x2_512(isMax int, out, in []float32, planes, oh, ow, w int)

//go:noescape
func pool2x2_256(isMax int, out, in []float32, planes, oh, ow, w int, masks *[24]int32)

//go:noescape
func toBF16_512(dst []uint16, src []float32)

//go:noescape
func toBF16_256(dst []uint16, src []float32)

//go:noescape
func fromBF16_512(dst []float32, src []uint16)

//go:noescape
func fromBF16_256(dst []float32, src []uint16)

// applyVec applies act to x with the vector kernel of path p, the last
// partial vector included: it goes through the kernel in a padded copy, so
// that every element gets the same arithmetic wherever it sits. With the
// pure-Go twin for the tail (its float32 algorithms, but another rounding:
// no fused multiply-adds), an element's activation depended on its place in
// the call, and so on how a forward grouped its images.
func applyVec(p Path, act Act, x []float32) {
	var pad [16]float32
	switch p {
	case AVX512:
		n := len(x) &^ 15
		act512(int(act), x[:n])
		if n < len(x) {
			copy(pad[:], x[n:])
			act512(int(act), pad[:16])
			copy(x[n:], pad[:])
		}
	case AVX2:
		n := len(x) &^ 7
		act256(int(act), x[:n])
		if n < len(x) {
			copy(pad[:], x[n:])
			act256(int(act), pad[:8])
			copy(x[n:], pad[:])
		}
	default:
		applyGo(act, x)
	}
}

func addVec(p Path, dst, src []float32) {
	src = src[:len(dst)]
	n := 0
	switch p {
	case AVX512:
		n = len(dst) &^ 15
		add512(dst[:n], src[:n])
	case AVX2:
		n = len(dst) &^ 7
		add256(dst[:n], src[:n])
	}
	addGo(dst[n:], src[n:])
}

func sumVec(p Path, x []float32) float32 {
	n := len(x) &^ 15
	var s float32
	switch p {
	case AVX512:
		s = sum512(x[:n])
	case AVX2:
		s = sum256(x[:n])
	default:
		return sumGo(x)
	}
	for _, v := range x[n:] {
		s += v
	}
	return s
}

func pool2x2(p Path, isMax bool, dst, src []float32, planes, h, w, oh, ow int) {
	if p == PureGo {
		pool2x2Rows(isMax, dst, src, planes, h, w, oh, ow, 0)
		return
	}
	m := 0
	if isMax {
		m = 1
	}
	// Whole vectors read 2·lanes floats per row from a row start: in bounds
	// as 2·ow ≤ w. Rows follow each other only when h = 2·oh.
	np, step := planes, 1
	if h != 2*oh {
		np, step = 1, planes
	}
	// AVX2's tail masks: the 2·rem input lanes over two vectors, then the
	// rem output lanes.
	var masks [24]int32
	rem := ow % 8
	for i := range 8 {
		if i < 2*rem {
			masks[i] = -1
		}
		if i+8 < 2*rem {
			masks[8+i] = -1
		}
		if i < rem {
			masks[16+i] = -1
		}
	}
	for i := 0; i < step; i++ {
		in := src[i*h*w : (i+np)*h*w]
		out := dst[i*oh*ow : (i+np)*oh*ow]
		if p == AVX512 {
			pool2x2_512(m, out, in, np, oh, ow, w)
		} else {
			pool2x2_256(m, out, in, np, oh, ow, w, &masks)
		}
	}
}

func toBF16Vec(p Path, dst []uint16, src []float32) int {
	switch p {
	case AVX512:
		n := len(src) &^ 15
		toBF16_512(dst[:n], src[:n])
		return n
	case AVX2:
		n := len(src) &^ 7
		toBF16_256(dst[:n], src[:n])
		return n
	}
	return 0
}

func fromBF16Vec(p Path, dst []float32, src []uint16) int {
	switch p {
	case AVX512:
		n := len(src) &^ 15
		fromBF16_512(dst[:n], src[:n])
		return n
	case AVX2:
		n := len(src) &^ 7
		fromBF16_256(dst[:n], src[:n])
		return n
	}
	return 0
}

//go:noescape
func packRuns512(dst, src []float32, koff []int32, runs []run, stride int)

//go:noescape
func packRuns256(dst, src []float32, koff []int32, runs []run, stride int)

// packRuns packs a tile (packRunsGo). The assembly copies whole vectors and
// does not check bounds: the caller keeps runs to two vectors, rows padded
// by packPad and packPad floats of slack after the planes (conv_packed.go).
func packRuns(p Path, dst, src []float32, koff []int32, runs []run, stride int) {
	switch p {
	case AVX512:
		_ = dst[(len(koff)-1)*stride+stride-1]
		packRuns512(dst, src, koff, runs, stride)
	case AVX2:
		_ = dst[(len(koff)-1)*stride+stride-1]
		packRuns256(dst, src, koff, runs, stride)
	default:
		packRunsGo(dst, src, koff, runs, stride)
	}
}

//go:noescape
func packVec512(dst, src []float32, koff []int32, vp []vecPieces, strideBytes int)

// packVec packs a tile vector by vector (vecPieces) and reports true, or
// reports false where the path has no such kernel (then packRuns packs
// it). The assembly reads whole vectors of src, as packRuns512 does.
func packVec(p Path, dst, src []float32, koff []int32, vp []vecPieces, stride int) bool {
	if p != AVX512 {
		return false
	}
	if len(koff) > 0 && len(vp) > 0 {
		_ = dst[(len(koff)-1)*stride+16*len(vp)-1]
		packVec512(dst, src, koff, vp, 4*stride)
	}
	return true
}

// maxPoolRow bounds the stride-1 row a pool of a larger stride computes
// on the stack (poolVec); wider maps take the scalar loop.
const maxPoolRow = 1024

//go:noescape
func poolRow512(isMax int, out, in []float32, w, k, s int, scale float32)

// poolRows2_512 is poolRow512 for two consecutive output rows: out holds
// both (2·ow floats), in starts at the first one's input rows.
//
//go:noescape
func poolRows2_512(isMax int, out, in []float32, w, k, s int, scale float32)

// poolVec runs a k×k pool row by row on AVX-512 or AVX2 and reports
// whether it did. The kernel reads input rows [oy·s, oy·s+k) and masks
// every column past the window. On AVX-512 it has strides 1, 2 and 4 (the
// 4×4 stride-4 pool of the genomes evolve breeds, where the scalar loop
// was 70% of scoring them) and runs rows in pairs, on AVX2 (poolRow256)
// strides 1 and 2 a row at a time (the scalar loop was a fifth of the
// small bench's time there); another stride computes the row's windows at
// stride 1, each in pool's order, and keeps every s-th: s times the work
// of the windows it keeps, but in vectors.
func poolVec(p Path, isMax bool, dst, src []float32, planes, h, w, k, s, oh, ow int, scale float32) bool {
	row, native := poolRow512, s <= 2 || s == 4
	switch p {
	case AVX2:
		row, native = poolRow256, s <= 2
	case AVX512:
	default:
		return false
	}
	m := 0
	if isMax {
		m = 1
	}
	if !native {
		if w-k+1 > maxPoolRow {
			return false
		}
		var buf [maxPoolRow]float32
		all := buf[:w-k+1]
		for pl := range planes {
			in := src[pl*h*w : (pl+1)*h*w]
			for oy := range oh {
				row(m, all, in[oy*s*w:(oy*s+k)*w], w, k, 1, scale)
				out := dst[(pl*oh+oy)*ow : (pl*oh+oy+1)*ow]
				for ox := range out {
					out[ox] = all[ox*s]
				}
			}
		}
		return true
	}
	for pl := range planes {
		in := src[pl*h*w : (pl+1)*h*w]
		oy := 0
		// AVX-512 rows in pairs: a row's taps are one dependent chain per
		// 16 outputs (an output row of these maps is one or two vectors),
		// and a pair's two chains overlap.
		for ; p == AVX512 && oy+1 < oh; oy += 2 {
			poolRows2_512(m, dst[(pl*oh+oy)*ow:(pl*oh+oy+2)*ow], in[oy*s*w:((oy+1)*s+k)*w], w, k, s, scale)
		}
		for ; oy < oh; oy++ {
			row(m, dst[(pl*oh+oy)*ow:(pl*oh+oy+1)*ow], in[oy*s*w:(oy*s+k)*w], w, k, s, scale)
		}
	}
	return true
}

//go:noescape
func poolRow256(isMax int, out, in []float32, w, k, s int, scale float32)

//go:noescape
func deint512(even, odd, row []float32)

//go:noescape
func deint256(even, odd, row []float32)

// deint splits row into its even and odd elements (deintGo); the slices are
// checked here, the assembly writes exactly ceil(n/2) and n/2 floats.
func deint(p Path, even, odd, row []float32) {
	even, odd = even[:(len(row)+1)/2], odd[:len(row)/2]
	switch p {
	case AVX512:
		deint512(even, odd, row)
	case AVX2:
		n := len(row) &^ 15
		deint256(even, odd, row[:n])
		deintGo(even[n/2:], odd[n/2:], row[n:])
	default:
		deintGo(even, odd, row)
	}
}

//go:noescape
func copyRows512(dst, src []float32, rows, w, srcStride, dstStride int)

//go:noescape
func copyRows256(dst, src []float32, rows, w, srcStride, dstStride int)

// copyRows copies rows of w floats, srcStride apart, to rows dstStride
// apart (copyRowsGo); the slices are checked here. AVX-512 masks each
// row's last vector; AVX2 ends a row of 8 floats or more with a vector
// that overlaps the one before, and leaves shorter rows to Go.
func copyRows(p Path, dst, src []float32, rows, w, srcStride, dstStride int) {
	if rows == 0 || w == 0 || p == PureGo || (p == AVX2 && w < 8) {
		copyRowsGo(dst, src, rows, w, srcStride, dstStride)
		return
	}
	_, _ = dst[(rows-1)*dstStride+w-1], src[(rows-1)*srcStride+w-1]
	if p == AVX2 {
		copyRows256(dst, src, rows, w, srcStride, dstStride)
		return
	}
	copyRows512(dst, src, rows, w, srcStride, dstStride)
}

//go:noescape
func evenRows512(dst, src []float32, rows, n, srcStride, dstStride int)

// evenRows copies src[r·srcStride+2i] to dst[r·dstStride+i] for r < rows,
// i < n (evenRowsGo); the slices are checked here, the assembly masks each
// row's last vector.
func evenRows(p Path, dst, src []float32, rows, n, srcStride, dstStride int) {
	if p != AVX512 || rows == 0 || n == 0 {
		evenRowsGo(dst, src, rows, n, srcStride, dstStride)
		return
	}
	_, _ = dst[(rows-1)*dstStride+n-1], src[(rows-1)*srcStride+2*(n-1)]
	evenRows512(dst, src, rows, n, srcStride, dstStride)
}

//go:noescape
func deintPlane512(prep, img []float32, h, w, wq, plane, evenAdd, oddAdd, y0 int)

//go:noescape
func deintPlane256(prep, img []float32, h, w, wq, plane, evenAdd, oddAdd, y0 int)

// deintPlane splits one channel (h×w, padding pad) into its four stride-2
// phase planes of wq columns, chan = the channel's 4·plane floats
// (deinterleave2 per row, in one call), on AVX-512 or AVX2.
func deintPlane(p Path, chanPlanes, img []float32, h, w, wq, plane, pad int) {
	evenAdd, oddAdd := pad/2, plane+pad/2
	if pad%2 == 1 {
		evenAdd, oddAdd = plane+pad/2, pad/2+1
	}
	// The furthest write is in one of the last two rows (the odd-y one lies
	// two planes further on).
	last := 0
	for ih := max(0, h-2); ih < h; ih++ {
		y := ih + pad
		last = max(last, y/2*wq+(y%2)*2*plane+max(evenAdd+(w+1)/2, oddAdd+w/2))
	}
	_, _ = chanPlanes[last-1], img[h*w-1]
	if p == AVX2 {
		deintPlane256(chanPlanes, img, h, w, wq, plane, evenAdd, oddAdd, pad)
		return
	}
	deintPlane512(chanPlanes, img, h, w, wq, plane, evenAdd, oddAdd, pad)
}

// The Winograd transforms (conv_winograd.go): AVX-512 and AVX2 kernels per
// tile side n (wino_amd64.s, gen_wino.go), the Go twins on the other path.

//go:noescape
func wgIn4_512(t *wgArgs)

//go:noescape
func wgIn6_512(t *wgArgs)

//go:noescape
func wgOut4_512(t *wgArgs)

//go:noescape
func wgOut6_512(t *wgArgs)

//go:noescape
func wgStore512(t *wgArgs)

//go:noescape
func wgIn4_256(t *wgArgs)

//go:noescape
func wgIn6_256(t *wgArgs)

//go:noescape
func wgOut4_256(t *wgArgs)

//go:noescape
func wgOut6_256(t *wgArgs)

//go:noescape
func wgStore256(t *wgArgs)

// wgLanes rounds cnt up to whole vectors of p (16 lanes, 8 on AVX2): the
// kernels load and store them.
func wgLanes(p Path, cnt int) int {
	l := p.lanes()
	return (cnt + l - 1) &^ (l - 1)
}

// wgAsm reports whether path p has assembly for the transforms.
func wgAsm(p Path) bool { return p == AVX512 || p == AVX2 }

// wgIn is the input transform of one run (wgInGo). The assembly reads and
// writes whole vectors past cnt lanes; the slices are checked here for them.
func wgIn(p Path, n int, t *wgArgs) {
	if !wgAsm(p) || (n != 4 && n != 6) || t.rows <= 0 || t.cnt <= 0 {
		wgInGo(n, t)
		return
	}
	l := wgLanes(p, t.cnt) - 1
	h := (n - 1) >> 1
	_ = t.src[t.sOff+(t.rows-1)*t.sRow+3*t.plane+h*t.wq+h+l]
	_ = t.dst[t.dOff+(n*n-1)*t.dXi+(t.rows-1)*t.dRow+l]
	switch {
	case p == AVX2 && n == 4:
		wgIn4_256(t)
	case p == AVX2:
		wgIn6_256(t)
	case n == 4:
		wgIn4_512(t)
	default:
		wgIn6_512(t)
	}
}

// wgOut is the output transform of a panel (wgOutGo), whole vectors past
// cnt lanes read and written as wgIn's.
func wgOut(p Path, n int, t *wgArgs) {
	if !wgAsm(p) || (n != 4 && n != 6) || t.rows <= 0 || t.cnt <= 0 {
		wgOutGo(n, t)
		return
	}
	l := wgLanes(p, t.cnt) - 1
	_ = t.src[t.sOff+(n*n-1)*t.sXi+(t.rows-1)*t.sRow+l]
	_ = t.dst[t.dOff+3*t.dXi+(t.rows-1)*t.dRow+l]
	_ = t.bias[t.bOff+t.rows-1]
	switch {
	case p == AVX2 && n == 4:
		wgOut4_256(t)
	case p == AVX2:
		wgOut6_256(t)
	case n == 4:
		wgOut4_512(t)
	default:
		wgOut6_512(t)
	}
}

// wgStore stores a block's outputs (wgStoreGo); the assembly masks its
// loads and stores to each run's outputs, which are checked here.
func wgStore(p Path, t *wgArgs) {
	if !wgAsm(p) || t.rows <= 0 || len(t.runs) == 0 {
		wgStoreGo(t)
		return
	}
	r := t.rows - 1
	for _, u := range t.runs {
		if u.n <= 0 || u.rows <= 0 || u.rows > 2 {
			wgStoreGo(t) // the assembly does 1 or 2 rows of ≥ 1 outputs
			return
		}
		a := int(u.rows) - 1
		_ = t.dst[int(u.dst)+r*t.dRow+a*t.wq+int(u.n)-1]
		_ = t.dst[int(u.dst)]
		_ = t.src[(a*2+1)*t.sXi+r*t.sRow+int(u.lane)+(int(u.n)-1)>>1]
		_ = t.src[int(u.lane)]
	}
	if p == AVX2 {
		wgStore256(t)
	} else {
		wgStore512(t)
	}
}
