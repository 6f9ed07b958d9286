package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/neateval/neateval/datasets"
)

// openEvolveData opens the validation set the fitness is measured on and
// the test set the best genome is scored on at the end.
//
// For the kinds with a train and a test split (mnist, fashion-mnist,
// cifar10), the validation set is evolve.val_size images of the training
// split, drawn by evolve.seed, and the test set is the test split (its
// first dataset.limit images, when set); dataset.split is not used. The
// kinds made of one set (idx, synthetic) are cut in two: val_size images
// drawn by the seed for validation, the rest (up to dataset.limit) for the
// test.
func openEvolveData(cfg *Config) (val, test *datasets.Dataset, err error) {
	c := *cfg
	c.Dataset.Limit = 0
	split := c.Dataset.Kind == datasets.KindMNIST || c.Dataset.Kind == datasets.KindFashionMNIST || c.Dataset.Kind == datasets.KindCIFAR10
	if split {
		c.Dataset.Split = datasets.SplitTrain
	}
	all, err := openDataset(&c)
	if err != nil {
		return nil, nil, err
	}
	n := cfg.Evolve.ValSize
	if !split && n >= all.N {
		return nil, nil, &ValueError{Key: "evolve.val_size", Value: tomlValue(n),
			Rule: fmt.Sprintf("must be below the %d images of %s (the rest is the test set)", all.N, all.Name)}
	}
	n = min(n, all.N)
	perm := rand.New(rand.NewPCG(uint64(cfg.Evolve.Seed), 0x76616c)).Perm(all.N) // "val"
	valIdx := slices.Sorted(slices.Values(perm[:n]))
	val = subset(all, valIdx, fmt.Sprintf("%s-val%d-seed%d", all.Name, n, cfg.Evolve.Seed))
	if !split {
		rest := slices.Sorted(slices.Values(perm[n:]))
		if l := cfg.Dataset.Limit; l > 0 && l < len(rest) {
			rest = rest[:l]
		}
		return val, subset(all, rest, fmt.Sprintf("%s-test%d", all.Name, len(rest))), nil
	}
	c.Dataset.Split, c.Dataset.Limit = datasets.SplitTest, cfg.Dataset.Limit
	if test, err = openDataset(&c); err != nil {
		return nil, nil, err
	}
	return val, test, nil
}

// subset copies the images of d at the given indexes into a set of its own.
func subset(d *datasets.Dataset, idx []int, name string) *datasets.Dataset {
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
