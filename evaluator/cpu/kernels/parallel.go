package kernels

import (
	"sync"
	"unsafe"
)

// runner is one parallel step of a kernel: run(w) does worker w's share.
type runner interface{ run(w int) }

// fanOut runs r.run(w) for w in [0, n), the caller doing w = 0. Callers call
// r.run(0) directly when n is 1, so that the single-threaded path allocates
// nothing; the goroutines of a parallel call cost a closure each.
func fanOut(n int, r runner) {
	var wg sync.WaitGroup
	wg.Add(n - 1)
	for w := 1; w < n; w++ {
		go func() {
			defer wg.Done()
			r.run(w)
		}()
	}
	r.run(0)
	wg.Wait()
}

// share returns worker w's part [lo, hi) of n items split over k workers.
func share(n, k, w int) (lo, hi int) { return n * w / k, n * (w + 1) / k }

// asInt32 views n float32 slots of ws as int32s (scratch shares the arena).
func asInt32(ws []float32, n int) []int32 {
	if n == 0 {
		return nil
	}
	ws = ws[:n]
	return unsafe.Slice((*int32)(unsafe.Pointer(&ws[0])), n)
}

// segWords is the size of a seg in float32 slots.
const segWords = int(unsafe.Sizeof(seg{})) / 4

// asSegs views n segs' worth of ws as segs.
func asSegs(ws []float32, n int) []seg {
	if n == 0 {
		return nil
	}
	ws = ws[:n*segWords]
	return unsafe.Slice((*seg)(unsafe.Pointer(&ws[0])), n)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// asWgRuns views n wgRuns in ws.
func asWgRuns(ws []float32, n int) []wgRun {
	if len(ws) < n*wgRunWords {
		panic("kernels: workspace too short for runs")
	}
	return unsafe.Slice((*wgRun)(unsafe.Pointer(&ws[0])), n)
}
