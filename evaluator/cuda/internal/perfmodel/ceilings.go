package perfmodel

import (
	"time"

	"github.com/neateval/neateval/evaluator/cuda/kernels"
)

// Ceilings are what bounds a kernel on one GPU.
type Ceilings struct {
	Name     string
	SMs      int
	FP32     float64 // FLOP/s of plain float32 FMA (2 FLOP each)
	TF32     float64 // FLOP/s of dense TF32 tensor-core MMA
	BW       float64 // bytes/s of device memory, read plus written
	L2       int64   // bytes
	Source   string  // where the figures come from
	Launch   time.Duration
	MinBlock time.Duration // the shortest a launch takes on the device

	RegsPerSM, SharedPerSM, ThreadsPerSM, MaxBlocksPerSM int
}

// H200 is an NVIDIA H200 SXM: the copy bandwidth measured on such a card of
// this workplace (4.3 TB/s, through PyTorch), the FP32 and TF32 rates of
// the datasheet (the H100 SXM's: 132 multiprocessors at 1.98 GHz), a host
// cost of 3 µs per cuLaunchKernel and 2 µs as the shortest launch on the
// device (leads, not measured here).
var H200 = Ceilings{
	Name: "NVIDIA H200 (SXM)", SMs: 132,
	FP32: 66.9e12, TF32: 494.7e12, BW: 4.3e12, L2: 60 << 20,
	Source:         "copy bandwidth measured on an H200 here (KINDS.md); FP32 and TF32 rates from the datasheet",
	Launch:         3 * time.Microsecond,
	MinBlock:       2 * time.Microsecond,
	RegsPerSM:      65536,
	SharedPerSM:    228 << 10,
	ThreadsPerSM:   2048,
	MaxBlocksPerSM: 32,
}

// BlocksPerSM is how many blocks of threads threads of a kernel with
// resources r one multiprocessor holds: the least of what its registers
// (allocated per warp in units of 256), its shared memory and its threads
// allow.
func (c Ceilings) BlocksPerSM(r kernels.Resource, threads int) int {
	warps := (threads + 31) / 32
	perWarp := (r.Registers*32 + 255) / 256 * 256
	n := min(c.MaxBlocksPerSM, c.ThreadsPerSM/threads)
	if perWarp > 0 {
		n = min(n, c.RegsPerSM/(perWarp*warps))
	}
	if r.Shared > 0 {
		n = min(n, c.SharedPerSM/r.Shared)
	}
	return n
}
