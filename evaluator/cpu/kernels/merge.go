package kernels

import "fmt"

// SumMerge adds src [b, srcC, hw] into dst [b, dstC, hw] channel by channel:
// dst[i, :srcC, :] += src[i]. The channels srcC..dstC−1 of dst are left as
// they are, which is the format's zero-padding of the narrower input.
func SumMerge(dst []float32, dstC int, src []float32, srcC int, b, hw int) {
	if b < 1 || hw < 1 || srcC < 1 || srcC > dstC || len(dst) < b*dstC*hw || len(src) < b*srcC*hw {
		panic(fmt.Sprintf("kernels: SumMerge: bad arguments: dstC %d srcC %d b %d hw %d len(dst) %d len(src) %d",
			dstC, srcC, b, hw, len(dst), len(src)))
	}
	p, n := selected(), srcC*hw
	for i := range b {
		addVec(p, dst[i*dstC*hw:i*dstC*hw+n], src[i*n:(i+1)*n])
	}
}

// CopyChannels writes src [b, srcC, hw] into channels off..off+srcC−1 of dst
// [b, dstC, hw]: the concat merge.
func CopyChannels(dst []float32, dstC, off int, src []float32, srcC int, b, hw int) {
	if b < 1 || hw < 1 || srcC < 1 || off < 0 || off+srcC > dstC || len(dst) < b*dstC*hw || len(src) < b*srcC*hw {
		panic(fmt.Sprintf("kernels: CopyChannels: bad arguments: dstC %d off %d srcC %d b %d hw %d len(dst) %d len(src) %d",
			dstC, off, srcC, b, hw, len(dst), len(src)))
	}
	n := srcC * hw
	for i := range b {
		copy(dst[(i*dstC+off)*hw:(i*dstC+off)*hw+n], src[i*n:(i+1)*n])
	}
}

// addGo is the pure-Go twin of the vector add: dst[i] += src[i].
func addGo(dst, src []float32) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}
