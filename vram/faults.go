package vram

import (
	"fmt"
	"math"
)

// FaultOptions make a device fail chosen allocations with an injected
// *OOMError (Injected set), for tests and drills of the recovery paths. The
// zero value injects nothing. An injected failure behaves as a real one
// would, short of the device being full: the allocator releases its cache
// first, and the error reports the memory as it then is.
//
// Calls are numbered from 1 in the order the allocator serves them; whether
// call k fails depends only on k and the options, so a sequence of calls
// fails the same way on every run, and concurrent callers see the same set
// of failing call numbers (which goroutine gets which number is up to the
// scheduler).
type FaultOptions struct {
	// Rate is the probability, in [0, 1], that an allocation fails.
	Rate float64
	// Seed picks which calls fail at Rate.
	Seed uint64
	// At lists calls that fail (1-based), besides those Rate picks.
	At []int64
}

// Validate reports options out of range.
func (f FaultOptions) Validate() error {
	if math.IsNaN(f.Rate) || f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("fault rate %v is outside [0, 1]", f.Rate)
	}
	for _, k := range f.At {
		if k < 1 {
			return fmt.Errorf("fault at allocation %d: allocations are numbered from 1", k)
		}
	}
	return nil
}

// Enabled says whether any allocation can fail by injection.
func (f FaultOptions) Enabled() bool { return f.Rate > 0 || len(f.At) > 0 }

// Injects reports whether allocation call k (1-based) fails by injection.
func (f FaultOptions) Injects(k int64) bool {
	fs := newFaults(f)
	return fs.fail(k)
}

type faults struct {
	threshold uint64 // a call fails when its hash is below this
	all       bool   // Rate == 1
	seed      uint64
	at        map[int64]struct{}
}

func newFaults(f FaultOptions) faults {
	fs := faults{seed: f.Seed, all: f.Rate >= 1}
	if f.Rate > 0 && f.Rate < 1 {
		fs.threshold = uint64(f.Rate * (1 << 63) * 2)
	}
	if len(f.At) > 0 {
		fs.at = make(map[int64]struct{}, len(f.At))
		for _, k := range f.At {
			fs.at[k] = struct{}{}
		}
	}
	return fs
}

func (f *faults) fail(k int64) bool {
	if f.all {
		return true
	}
	if _, ok := f.at[k]; ok {
		return true
	}
	return f.threshold > 0 && splitmix64(f.seed+uint64(k)*0x9e3779b97f4a7c15) < f.threshold
}

// splitmix64 is the finaliser of Steele, Lea and Flood's SplitMix64: a good
// 64-bit hash of a counter.
func splitmix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
