package datasets

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Identity names the data set and its size, "mnist-test 10000": what a
// results file's run id records of it (two sets with the same identity are
// the same images, as far as a run can tell).
func (d *Dataset) Identity() string { return fmt.Sprintf("%s %d", d.Name, d.N) }

// Sample draws n of d's N images by seed, without replacement, and returns
// the indexes drawn and those left, each in increasing order. The same
// seed draws the same images from a set of the same size. n is capped at N.
func (d *Dataset) Sample(n int, seed int64) (drawn, rest []int) {
	n = min(max(n, 0), d.N)
	perm := rand.New(rand.NewPCG(uint64(seed), 0x76616c)).Perm(d.N) // "val"
	return slices.Sorted(slices.Values(perm[:n])), slices.Sorted(slices.Values(perm[n:]))
}

// Subset copies the images of d at the given indexes, in that order, into a
// data set of its own named name.
func (d *Dataset) Subset(idx []int, name string) *Dataset {
	s := *d
	s.Name, s.N = name, len(idx)
	s.Images = make([]float32, 0, len(idx)*d.ImageSize())
	s.Labels = make([]uint8, 0, len(idx))
	for _, i := range idx {
		s.Images = append(s.Images, d.Image(i)...)
		s.Labels = append(s.Labels, d.Labels[i])
	}
	return &s
}
