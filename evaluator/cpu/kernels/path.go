package kernels

import (
	"fmt"
	"sync/atomic"
)

// Path is an implementation of the kernels: the pure-Go reference or one of
// the SIMD instruction sets.
type Path uint8

// The kernel paths. PureGo is always available; the others only on amd64
// processors that have the instructions (and not under the noasm build tag).
const (
	PureGo Path = iota // portable Go, the reference
	AVX2               // AVX2 + FMA, 8 lanes
	AVX512             // AVX-512 F/BW/DQ/VL, 16 lanes
	numPaths
)

func (p Path) String() string {
	switch p {
	case PureGo:
		return "purego"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("Path(%d)", uint8(p))
}

// lanes is the number of float32s in one vector register of the path. The
// pure-Go path mimics AVX-512's geometry, so that it drives the blocking code
// through the same tile shapes as the fastest path.
func (p Path) lanes() int {
	if p == AVX2 {
		return 8
	}
	return 16
}

var cur atomic.Uint32 // the selected Path

func init() { cur.Store(uint32(best())) }

func selected() Path { return Path(cur.Load()) }

// Selected returns the path the kernels use now: by default the fastest one
// this processor supports.
func Selected() Path { return selected() }

// Paths lists the paths available on this machine, PureGo first.
func Paths() []Path {
	ps := []Path{PureGo}
	for p := PureGo + 1; p < numPaths; p++ {
		if available(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// Select makes every later kernel call use p and returns the previous path.
// It is meant for tests and benchmarks, which compare the paths in one
// process; calls already running finish on the path they started with.
// Selecting a path this machine lacks is an error.
func Select(p Path) (Path, error) {
	if p >= numPaths || !available(p) {
		return selected(), fmt.Errorf("kernels: path %v is not available on this machine", p)
	}
	return Path(cur.Swap(uint32(p))), nil
}
