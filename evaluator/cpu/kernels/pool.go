package kernels

import "fmt"

// Pools work plane by plane over NCHW data (b·c planes of h×w), floor mode,
// no padding. Max pooling propagates NaN, as PyTorch does; average pooling
// divides the window sum by k·k. The 2×2 stride-2 pool, by far the most
// common, has vector kernels; the 4×4 stride-4 max pool of the evolve
// genomes an AVX-512 kernel of its own (pool4_amd64.s); other windows the
// AVX-512 row kernel (poolVec), or a scalar loop on the other paths.

func checkPool(name string, dst, src []float32, b, c, h, w, k, stride, oh, ow int) {
	if b < 1 || c < 1 || h < 1 || w < 1 || k < 1 || stride < 1 || oh < 1 || ow < 1 ||
		oh != OutSize(h, k, stride, 0) || ow != OutSize(w, k, stride, 0) ||
		len(dst) < b*c*oh*ow || len(src) < b*c*h*w {
		panic(fmt.Sprintf("kernels: %s: bad arguments: b %d c %d h %d w %d k %d stride %d oh %d ow %d len(dst) %d len(src) %d",
			name, b, c, h, w, k, stride, oh, ow, len(dst), len(src)))
	}
}

// MaxPool2D computes dst[b, c, oy, ox] = max of the k×k window of src at
// (oy·stride, ox·stride).
func MaxPool2D(dst, src []float32, b, c, h, w, k, stride, oh, ow int) {
	checkPool("MaxPool2D", dst, src, b, c, h, w, k, stride, oh, ow)
	pool(selected(), true, dst, src, b*c, h, w, k, stride, oh, ow)
}

// AvgPool2D computes dst[b, c, oy, ox] = the sum of the k×k window of src at
// (oy·stride, ox·stride), divided by k·k.
func AvgPool2D(dst, src []float32, b, c, h, w, k, stride, oh, ow int) {
	checkPool("AvgPool2D", dst, src, b, c, h, w, k, stride, oh, ow)
	pool(selected(), false, dst, src, b*c, h, w, k, stride, oh, ow)
}

func pool(p Path, isMax bool, dst, src []float32, planes, h, w, k, stride, oh, ow int) {
	if k == 2 && stride == 2 {
		pool2x2(p, isMax, dst[:planes*oh*ow], src[:planes*h*w], planes, h, w, oh, ow)
		return
	}
	if isMax && k == 4 && stride == 4 && maxPool4(p, dst, src, planes, h, w, oh, ow) {
		return
	}
	scale := float32(1) / float32(k*k)
	if poolVec(p, isMax, dst, src, planes, h, w, k, stride, oh, ow, scale) {
		return
	}
	poolGo(isMax, dst, src, planes, h, w, k, stride, oh, ow, scale)
}

// poolGo is the scalar pool: each window in row-major order, the
// accumulator starting from its first element (max) or zero (average);
// the vector kernels keep this order, so that a signed zero or a NaN comes
// out the same.
func poolGo(isMax bool, dst, src []float32, planes, h, w, k, stride, oh, ow int, scale float32) {
	for pl := range planes {
		in := src[pl*h*w : (pl+1)*h*w]
		out := dst[pl*oh*ow : (pl+1)*oh*ow]
		for oy := range oh {
			orow := out[oy*ow : (oy+1)*ow]
			for ox := range orow {
				base := oy*stride*w + ox*stride
				var acc float32
				if isMax {
					acc = in[base]
				}
				for ky := range k {
					for _, v := range in[base+ky*w : base+ky*w+k] {
						if isMax {
							acc = maxNaN(acc, v)
						} else {
							acc += v
						}
					}
				}
				if !isMax {
					acc *= scale
				}
				orow[ox] = acc
			}
		}
	}
}

// pool2x2Rows is the pure-Go 2×2 stride-2 pool of planes h×w into oh×ow,
// for output columns from col0 on.
func pool2x2Rows(isMax bool, dst, src []float32, planes, h, w, oh, ow, col0 int) {
	for pl := range planes {
		for oy := range oh {
			r0 := src[(pl*h+2*oy)*w:]
			r1 := src[(pl*h+2*oy+1)*w:]
			pool2x2Go(isMax, dst[(pl*oh+oy)*ow+col0:(pl*oh+oy+1)*ow], r0[2*col0:2*ow], r1[2*col0:2*ow])
		}
	}
}

// maxNaN is max that returns NaN when either operand is NaN.
func maxNaN(a, b float32) float32 {
	if a != a || b > a || b != b {
		if a != a {
			return a
		}
		return b
	}
	return a
}

// pool2x2Go is the pure-Go twin of the 2×2 stride-2 vector kernels:
// out[i] = reduce(r0[2i], r0[2i+1], r1[2i], r1[2i+1]).
func pool2x2Go(isMax bool, out, r0, r1 []float32) {
	for i := range out {
		a, b, c, d := r0[2*i], r0[2*i+1], r1[2*i], r1[2*i+1]
		if isMax {
			out[i] = maxNaN(maxNaN(a, c), maxNaN(b, d))
		} else {
			out[i] = ((a + c) + (b + d)) * 0.25
		}
	}
}

// GlobalAvgPool computes dst[b, c] = the mean of src's hw pixels of plane
// (b, c).
func GlobalAvgPool(dst, src []float32, b, c, hw int) {
	if b < 1 || c < 1 || hw < 1 || len(dst) < b*c || len(src) < b*c*hw {
		panic(fmt.Sprintf("kernels: GlobalAvgPool: bad arguments: b %d c %d hw %d len(dst) %d len(src) %d",
			b, c, hw, len(dst), len(src)))
	}
	p := selected()
	n := float32(hw)
	if hw < 16 {
		globalAvgSmall(dst[:b*c], src[:b*c*hw], hw, n)
		return
	}
	for i := range b * c {
		dst[i] = sumVec(p, src[i*hw:(i+1)*hw]) / n
	}
}

// globalAvgSmall is GlobalAvgPool of planes of fewer than 16 pixels (maps
// of 3×3 and below, common before a genome's dense head), where every
// path's sum is a vector's worth of nothing and then the pixels in order,
// ((+0 + x0) + x1) + …: four planes at a time, so that their chains of
// dependent additions overlap, instead of one call per plane.
func globalAvgSmall(dst, src []float32, hw int, n float32) {
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		x := src[i*hw : (i+4)*hw]
		x0, x1, x2, x3 := x[:hw], x[hw:2*hw], x[2*hw:3*hw], x[3*hw:4*hw]
		var s0, s1, s2, s3 float32
		for j := range x0 {
			s0 += x0[j]
			s1 += x1[j]
			s2 += x2[j]
			s3 += x3[j]
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0/n, s1/n, s2/n, s3/n
	}
	for ; i < len(dst); i++ {
		var s float32
		for _, v := range src[i*hw : (i+1)*hw] {
			s += v
		}
		dst[i] = s / n
	}
}

// sumGo is the pure-Go twin of the vector sums: 16 interleaved partial sums,
// added pairwise, then the tail.
func sumGo(x []float32) float32 {
	var acc [16]float32
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		for j, v := range x[i : i+16] {
			acc[j] += v
		}
	}
	for w := 8; w >= 1; w /= 2 {
		for j := range w {
			acc[j] += acc[j+w]
		}
	}
	s := acc[0]
	for _, v := range x[n:] {
		s += v
	}
	return s
}
