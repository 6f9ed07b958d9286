//go:build !amd64 || noasm

package kernels

// Without assembly every path but PureGo is unavailable and the dispatchers
// call the pure-Go twins.

func best() Path                            { return PureGo }
func available(p Path) bool                 { return p == PureGo }
func gemm(_ Path, nv int, t *tileArgs)      { gemmGo(t, nv) }
func gemmRows(*tileArgs)                    { panic("kernels: no AVX-512") }
func applyVec(_ Path, act Act, x []float32) { applyGo(act, x) }
func pool2x2(_ Path, isMax bool, dst, src []float32, planes, h, w, oh, ow int) {
	pool2x2Rows(isMax, dst, src, planes, h, w, oh, ow, 0)
}
func sumVec(_ Path, x []float32) float32        { return sumGo(x) }
func addVec(_ Path, dst, src []float32)         { addGo(dst, src) }
func toBF16Vec(Path, []uint16, []float32) int   { return 0 }
func fromBF16Vec(Path, []float32, []uint16) int { return 0 }

func packRuns(_ Path, dst, src []float32, koff []int32, runs []run, stride int) {
	packRunsGo(dst, src, koff, runs, stride)
}

func packVec(Path, []float32, []float32, []int32, []vecPieces, int) bool { return false }

func poolVec(Path, bool, []float32, []float32, int, int, int, int, int, int, int, float32) bool {
	return false
}

func deint(_ Path, even, odd, row []float32) { deintGo(even, odd, row) }

func copyRows(_ Path, dst, src []float32, rows, w, srcStride, dstStride int) {
	copyRowsGo(dst, src, rows, w, srcStride, dstStride)
}

func evenRows(_ Path, dst, src []float32, rows, n, srcStride, dstStride int) {
	evenRowsGo(dst, src, rows, n, srcStride, dstStride)
}

func deintPlane(Path, []float32, []float32, int, int, int, int, int) { panic("kernels: no assembly") }

func wgIn(_ Path, n int, t *wgArgs)  { wgInGo(n, t) }
func wgOut(_ Path, n int, t *wgArgs) { wgOutGo(n, t) }
func wgStore(_ Path, t *wgArgs)      { wgStoreGo(t) }
