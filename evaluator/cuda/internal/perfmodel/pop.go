package perfmodel

import (
	"math"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
)

// PopIssueShare is the share of the FP32 rate pop_forward's products can
// issue at: each FMA of the interpreter loads its two operands (the
// activation from shared memory, the weight through L1), and the 128
// bytes a clock a multiprocessor's L1 and shared memory deliver feed 16 of
// its 128 FMA lanes. An assumption, not measured.
const PopIssueShare = 1.0 / 8

// stepWork is the FLOPs a step's outputs issue for one image (2 per
// multiply-add; a pool's or a merge's additions count one each) and the
// outputs it writes.
func stepWork(f []int64) (flopsPer float64, outputs int64) {
	c, k, oh, ow, m := f[3], f[6], f[9], f[10], f[11]
	outputs = m * oh * ow
	switch f[0] {
	case 0: // conv
		return float64(2 * c * k * k), outputs
	case 1: // dense
		return float64(2 * c), outputs
	case 2, 3: // pools
		return float64(k * k), outputs
	case 4: // global average pooling: a map's pixels
		return float64(f[4] * f[5]), outputs
	}
	return 1, outputs
}

// PredictPop is the cost of one pop_forward launch over the requests ps,
// slices of ns images: every block runs a tile of one request's images;
// each step's outputs are spread over the block's 256 threads, so a step
// of fewer outputs than threads leaves lanes idle (issued counts them).
// Bytes: the images, each request's weights once (every block re-reads
// them, from L2 after the first), the records.
func PredictPop(c Ceilings, ps []*sched.PopProgram, ns []int, useful []float64) Cost {
	var issued, bytes, flops, blocks float64
	for i, p := range ps {
		n := int64(ns[i])
		flops += useful[i] * float64(n)
		var weights float64
		for t0 := int64(0); t0 < n; t0 += p.Tile {
			nt := min(p.Tile, n-t0)
			for s := 0; s < p.NSteps(); s++ {
				f := p.Steps[s*sched.PopFields:][:sched.PopFields]
				per, out := stepWork(f)
				rounds := math.Ceil(float64(nt*out) / sched.Threads)
				issued += rounds * sched.Threads * per
				if t0 == 0 && (f[0] == 0 || f[0] == 1) {
					weights += float64(f[11]*(f[3]*f[6]*f[6]+1)) * 4
				}
			}
		}
		nb := float64(p.Blocks(ns[i]))
		blocks += nb
		bytes += float64(n)*(float64(p.InSize)*4+9) + weights
	}
	sms := float64(c.SMs)
	fill := blocks / (math.Ceil(blocks/sms) * sms)
	sec := func(x float64) time.Duration { return time.Duration(x * 1e9) }
	rate := c.FP32 * PopIssueShare
	out := Cost{
		Launches: 1, FLOPs: flops, Issued: issued, Bytes: bytes,
		Compute: sec(issued / (rate * fill)),
		Mem:     sec(bytes / (c.BW * fill)),
	}
	out.Time = max(out.Compute, out.Mem, c.MinBlock)
	out.Full = max(sec(issued/rate), sec(bytes/c.BW))
	return out
}

// PredictPopReduce is pop_reduce over requests of ns images: one block
// each, 9 bytes a record.
func PredictPopReduce(c Ceilings, ns []int) Cost {
	var bytes float64
	for _, n := range ns {
		bytes += 9 * float64(n)
	}
	blocks := float64(len(ns))
	fill := blocks / (math.Ceil(blocks/float64(c.SMs)) * float64(c.SMs))
	mem := time.Duration(bytes / (c.BW * fill) * 1e9)
	return Cost{Launches: 1, Bytes: bytes, Mem: mem, Time: max(mem, c.MinBlock), Full: time.Duration(bytes / c.BW * 1e9)}
}
