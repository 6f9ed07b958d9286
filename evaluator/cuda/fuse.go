//go:build cuda || cudaemu

package cuda

import (
	"os"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
)

// fuseEnv set to "off" schedules every pool as a launch of its own, after
// its convolution has written the full-resolution activation: the
// per-layer path before the fused pools (sched.FusedPools), to compare
// the two on a card. The stats are the same bit for bit either way
// (TestFusedPools).
const fuseEnv = "NEATEVAL_CUDA_FUSE"

func fuseOff() bool { return os.Getenv(fuseEnv) == "off" }

// schedOptions are how this backend's forwards are scheduled.
func (b *Backend) schedOptions() sched.Options {
	return sched.Options{Precision: b.prec, Unfused: b.unfused}
}
