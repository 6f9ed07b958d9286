package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestWorkspaceCoversSmallerBatches checks what the workspace functions
// promise: scratch sized for a batch of b serves every call of a batch up to
// b, whichever path, tile width (packed weights) and algorithm the call
// picks. A forward sizes its scratch for a full tile and computes the last,
// partial tile in it.
func TestWorkspaceCoversSmallerBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var shapes []ConvShape
	for len(shapes) < 60 {
		s := ConvShape{C: 1 + r.IntN(40), H: 1 + r.IntN(28), OC: 1 + r.IntN(80), K: 1 + r.IntN(5), Stride: 1 + r.IntN(3)}
		s.W, s.Pad = s.H, r.IntN(s.K)
		s.OH, s.OW = OutSize(s.H, s.K, s.Stride, s.Pad), OutSize(s.W, s.K, s.Stride, s.Pad)
		if s.OH >= 1 {
			shapes = append(shapes, s)
		}
	}
	for _, s := range shapes {
		for threads := 1; threads <= 3; threads++ {
			for _, b := range []int{1, 5, 8, 33} {
				ws, pws := ConvWorkspace(s, b, threads), ConvPackedWorkspace(s, b, threads)
				for small := 1; small <= b; small++ {
					for p := range numPaths {
						if n := planConv(p, s, small, threads, 0, modeAuto, false, false).wsLen; n > ws {
							t.Fatalf("%+v threads %d: Conv2D of %d on %v needs %d floats, ConvWorkspace(%d) = %d", s, threads, small, p, n, b, ws)
						}
						for nv := 1; nv <= maxNV; nv++ {
							if n := planConv(p, s, small, threads, nv, modeAuto, true, false).wsLen; n > pws {
								t.Fatalf("%+v threads %d: Conv2DPacked of %d (nv %d) on %v needs %d floats, ConvPackedWorkspace(%d) = %d", s, threads, small, nv, p, n, b, pws)
							}
						}
					}
				}
			}
		}
	}
	for range 60 {
		in, out := 1+r.IntN(300), 1+r.IntN(130)
		for threads := 1; threads <= 3; threads++ {
			for _, b := range []int{1, 7, 40} {
				ws, pws := DenseWorkspace(in, out, b, threads), DensePackedWorkspace(in, out, b, threads)
				for small := 1; small <= b; small++ {
					for p := range numPaths {
						if n := planDense(p, in, out, small, threads, 0, false).wsLen; n > ws {
							t.Fatalf("dense %d→%d threads %d: %d rows on %v need %d floats, DenseWorkspace(%d) = %d", in, out, threads, small, p, n, b, ws)
						}
						for nv := 1; nv <= maxNV; nv++ {
							if n := planDense(p, in, out, small, threads, nv, true).wsLen; n > pws {
								t.Fatalf("dense %d→%d threads %d: %d rows (nv %d) on %v need %d floats, DensePackedWorkspace(%d) = %d", in, out, threads, small, nv, p, n, b, pws)
							}
						}
					}
				}
			}
		}
	}
}
