package cpu

import (
	"cmp"
	"slices"
)

// planAlign is the alignment of every buffer inside a forward's block: a
// cache line, and a multiple of every SIMD width the kernels use.
const planAlign = 64

// interval is one buffer of a forward: live from step first to step last
// (inclusive), size bytes.
type interval struct {
	first, last int
	size        int64
	off         int64
}

// memPlan places a forward's buffers in one block: each buffer gets an
// offset such that no two buffers live at the same step overlap. It is the
// greedy-by-size planner of TFLite and TVM: the largest buffer first, each
// at the lowest offset that fits between the buffers already placed that
// share a step with it. The block's size is the forward's memory; the
// liveness peak (neat.Graph.PeakActivationBytes) is its lower bound, and
// the greedy placement stays within a few percent of it on CNN graphs.
//
// One block per forward means one allocation per slice: no allocator
// traffic on the hot path, an exact memory model (the plan is the
// allocation), and an out-of-memory that hits before any work is done.
//
// idx, when not nil, is scratch of 3·len(bufs) ints.
func memPlan(bufs []interval, idx []int) int64 {
	n := len(bufs)
	if idx == nil {
		idx = make([]int, 3*n) // order, placed and clash, in one allocation
	}
	order, placed, clash := idx[:n], idx[n:n:2*n], idx[2*n:2*n]
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bufs[b].size, bufs[a].size) })
	var end int64
	for _, i := range order {
		b := &bufs[i]
		b.size = (b.size + planAlign - 1) / planAlign * planAlign
		// Placed buffers sharing a step with b, by offset.
		clash = clash[:0]
		for _, j := range placed {
			p := &bufs[j]
			if p.first <= b.last && b.first <= p.last {
				clash = append(clash, j)
			}
		}
		slices.SortFunc(clash, func(x, y int) int { return cmp.Compare(bufs[x].off, bufs[y].off) })
		var off int64
		for _, j := range clash {
			p := &bufs[j]
			if off+b.size <= p.off {
				break
			}
			off = max(off, p.off+p.size)
		}
		b.off = off
		end = max(end, off+b.size)
		placed = append(placed, i)
	}
	return end
}
