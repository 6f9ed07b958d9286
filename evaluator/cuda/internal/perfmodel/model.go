package perfmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
)

// Cost is the prediction for one launch, or a sum of them.
type Cost struct {
	Launches int
	// FLOPs are the useful operations (2 × multiply-adds of the product);
	// Issued those the kernel's tiles compute, padding included (a 16-row
	// tile for 4 output channels, a 16-deep k-step for 9 taps).
	FLOPs, Issued float64
	Bytes         float64 // device memory read plus written, each input once per row tile
	Compute, Mem  time.Duration
	Time          time.Duration // the larger, scaled by the grid's fill, at least MinBlock
	// Full is the larger term at a full grid: the time if the streams
	// packed this launch's work with others' perfectly.
	Full time.Duration
}

func (c *Cost) add(o Cost) {
	c.Launches += o.Launches
	c.FLOPs += o.FLOPs
	c.Issued += o.Issued
	c.Bytes += o.Bytes
	c.Compute += o.Compute
	c.Mem += o.Mem
	c.Time += o.Time
	c.Full += o.Full
}

// Bound is "compute" or "memory", whichever term is larger, or "launch"
// when the shortest launch is.
func (c Cost) Bound(min time.Duration) string {
	switch {
	case c.Time <= time.Duration(c.Launches)*min:
		return "launch"
	case c.Compute >= c.Mem:
		return "compute"
	default:
		return "memory"
	}
}

// work is what one launch does, read off its arguments.
type work struct {
	flops, issued, bytes float64
	tensor               bool // on the tensor cores (gemmtc_…)
}

// elem is the bytes of the storage type a kernel name ends in (f, h) at
// position i of its type suffix.
func elem(name string, i int) float64 {
	suf := name[strings.LastIndexByte(name, '_')+1:]
	if i < len(suf) && suf[i] == 'h' {
		return 2
	}
	return 4
}

// lit is argument i of a launch as an integer.
func lit(l *sched.Launch, i int) float64 { return float64(l.Args[i].V) }

// launchWork reads a launch's operations and bytes from its kernel and
// arguments (the argument order of kernels/*.cu).
func launchWork(name string, l *sched.Launch) (work, error) {
	switch {
	case strings.HasPrefix(name, "gemm_"), strings.HasPrefix(name, "gemmtc_"):
		// x, w, bias, y, cols, M, Kd, C, H, W, K, S, P, OH, OW, act, PK, PS,
		// POH, POW, pool (zero but in …_convpool_…)
		cols, m, kd := lit(l, 4), lit(l, 5), lit(l, 6)
		c, h, w, oh, ow := lit(l, 7), lit(l, 8), lit(l, 9), lit(l, 13), lit(l, 14)
		// gemm_m16_conv_fff, gemmtc_m64_dense_hhf: the tile's rows.
		tile := strings.Split(name, "_")[1]
		bm, err := strconv.ParseFloat(strings.TrimPrefix(tile, "m"), 64)
		if err != nil {
			return work{}, fmt.Errorf("perfmodel: kernel %s: no tile rows in its name", name)
		}
		rowTiles := math.Ceil(m / bm)
		imgs := cols / (oh * ow)
		// The columns computed (pixels of the convolution) and the tiles.
		pixels, tiles := cols, math.Ceil(cols/sched.GEMMColumns)
		if strings.Contains(name, "_convpool_") {
			// …, PK, PS, POH, POW, kind: cols counts the pool's windows,
			// GEMMColumns / PK² of them a tile.
			pk, poh, pow := lit(l, 16), lit(l, 18), lit(l, 19)
			imgs = cols / (poh * pow)
			pixels, tiles = cols*pk*pk, math.Ceil(cols/math.Floor(sched.GEMMColumns/(pk*pk)))
		}
		in := imgs * c * h * w * elem(name, 1)
		return work{
			flops:  2 * pixels * m * kd,
			issued: 2 * tiles * sched.GEMMColumns * rowTiles * bm * math.Ceil(kd/16) * 16,
			bytes:  in*rowTiles + m*(kd+1)*elem(name, 0) + cols*m*elem(name, 2),
			tensor: strings.HasPrefix(name, "gemmtc_"),
		}, nil
	case strings.HasPrefix(name, "pool_"):
		// x, y, planes, H, W, K, S, OH, OW
		planes, h, w, oh, ow := lit(l, 2), lit(l, 3), lit(l, 4), lit(l, 7), lit(l, 8)
		return work{bytes: planes * (h*w*elem(name, 0) + oh*ow*elem(name, 1))}, nil
	case strings.HasPrefix(name, "gap_"):
		// x, y, planes, HW
		planes, hw := lit(l, 2), lit(l, 3)
		return work{bytes: planes * (hw*elem(name, 0) + elem(name, 1))}, nil
	case strings.HasPrefix(name, "merge_"):
		// dst (float32), x, n, dstC, srcC, HW, off
		n, dstC, srcC, hw := lit(l, 2), lit(l, 3), lit(l, 4), lit(l, 5)
		src := n * srcC * hw * elem(name, 0)
		switch {
		case strings.HasPrefix(name, "merge_pad"):
			return work{bytes: src + n*dstC*hw*4}, nil
		case strings.HasPrefix(name, "merge_add"):
			return work{bytes: src + 2*n*srcC*hw*4}, nil
		default:
			return work{bytes: src + n*srcC*hw*4}, nil
		}
	case name == "reduce_logits":
		// logits, labels, n, classes, stats
		n, classes := lit(l, 2), lit(l, 3)
		return work{bytes: n*classes*4 + n}, nil
	}
	return work{}, fmt.Errorf("perfmodel: no model of kernel %s", name)
}

// Predict is the cost of one launch on c: a gemmtc_ kernel's products at
// the TF32 rate, every other's at the FP32 rate. The kernel must have resources
// in res (the report shows its occupancy; the rates do not depend on it).
func Predict(c Ceilings, res map[string]kernels.Resource, l *sched.Launch) (Cost, error) {
	name := sched.Kernels[l.Kernel]
	if _, ok := res[name]; !ok {
		return Cost{}, fmt.Errorf("perfmodel: no resources for kernel %s", name)
	}
	w, err := launchWork(name, l)
	if err != nil {
		return Cost{}, err
	}
	blocks := float64(l.Grid[0]) * float64(l.Grid[1])
	sms := float64(c.SMs)
	// A multiprocessor works through its blocks at its full rate (the
	// product tiles' 16 to 64 accumulators a thread keep the FMA units
	// busy at any occupancy); a grid of fewer blocks than multiprocessors,
	// or a last round on only some of them, leaves the rest idle: the
	// rates scale by the share used.
	fill := blocks / (math.Ceil(blocks/sms) * sms)
	sec := func(x float64) time.Duration { return time.Duration(x * 1e9) }
	rate := c.FP32
	if w.tensor {
		rate = c.TF32
	}
	out := Cost{
		Launches: 1, FLOPs: w.flops, Issued: w.issued, Bytes: w.bytes,
		Compute: sec(w.issued / (rate * fill)),
		Mem:     sec(w.bytes / (c.BW * fill)),
	}
	out.Time = max(out.Compute, out.Mem, c.MinBlock)
	out.Full = max(sec(w.issued/rate), sec(w.bytes/c.BW))
	return out, nil
}
