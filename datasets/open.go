package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The kinds of data set that Open knows.
const (
	KindMNIST        = "mnist"         // MNIST, from Spec.Path or LocateMNIST
	KindFashionMNIST = "fashion-mnist" // Fashion-MNIST, from Spec.Path
	KindIDX          = "idx"           // any IDX images and labels files
	KindCIFAR10      = "cifar10"       // CIFAR-10 binary batches, from Spec.Path
	KindSynthetic    = "synthetic"     // Synthetic, from Spec.Synthetic
)

// Kinds lists the kinds Open knows, in a fixed order.
var Kinds = []string{KindMNIST, KindFashionMNIST, KindIDX, KindCIFAR10, KindSynthetic}

// The splits of MNIST, Fashion-MNIST and CIFAR-10.
const (
	SplitTest  = "test"
	SplitTrain = "train"
)

// Spec says which data set to open and how. Fields that its Kind does not
// use are ignored; left zero, the others mean the whole test split as plain
// x/255.
type Spec struct {
	Kind string // one of Kinds

	// Path is the folder of the files: for mnist (empty: LocateMNIST),
	// fashion-mnist, cifar10 (its files, or a cifar-10-batches-bin folder
	// in it) and idx (empty: Images and Labels are paths as they are).
	Path string

	// Split is "test" (the default when empty) or "train", for mnist,
	// fashion-mnist and cifar10.
	Split string

	// Images and Labels are, for kind idx, the names of the files in Path.
	Images, Labels string

	// Classes is, for kind idx, the number of classes (0: 10).
	Classes int

	// Limit keeps the first Limit images (0: all).
	Limit int

	// Mean and Std, one per channel when set, normalise the images as
	// (x - mean) / std after x/255; both nil (or empty) for none.
	Mean, Std []float32

	// Synthetic sizes the set of kind synthetic.
	Synthetic SyntheticSpec
}

// SyntheticSpec gives the arguments of Synthetic.
type SyntheticSpec struct {
	N, Channels, Height, Width, Classes int
	Seed                                int64
}

// Open loads the data set spec describes, keeps its first spec.Limit images
// and normalises them if spec asks; only the images kept are converted to
// float32. Errors name the spec field or the file at fault.
func Open(spec Spec) (*Dataset, error) {
	split := spec.Split
	if split == "" {
		split = SplitTest
	}
	if split != SplitTest && split != SplitTrain {
		return nil, fmt.Errorf("datasets: split %q, want %q or %q", spec.Split, SplitTest, SplitTrain)
	}
	if spec.Limit < 0 {
		return nil, fmt.Errorf("datasets: limit %d, want 0 (all images) or more", spec.Limit)
	}
	var mean, std []float32 // nil: no normalisation
	if len(spec.Mean) > 0 || len(spec.Std) > 0 {
		mean, std = spec.Mean, spec.Std
	}
	channels := 1
	switch spec.Kind {
	case KindCIFAR10:
		channels = 3
	case KindSynthetic:
		s := spec.Synthetic
		if err := checkSynthetic(s.N, s.Channels, s.Height, s.Width, s.Classes); err != nil {
			return nil, fmt.Errorf("datasets: synthetic: %w", err)
		}
		channels = s.Channels
	}
	if mean != nil || std != nil {
		if err := checkNorm(mean, std, channels); err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", spec.Kind, err)
		}
	}

	switch spec.Kind {
	case KindMNIST, KindFashionMNIST:
		dir := spec.Path
		if dir == "" {
			if spec.Kind == KindFashionMNIST {
				return nil, fmt.Errorf("datasets: fashion-mnist needs the path of a folder holding its IDX files")
			}
			var err error
			if dir, err = LocateMNIST(); err != nil {
				return nil, err
			}
		}
		prefix := "t10k"
		if split == SplitTrain {
			prefix = "train"
		}
		images, err := findFile(dir, idxNames(prefix+"-images-idx3-ubyte"))
		if err != nil {
			return nil, err
		}
		labels, err := findFile(dir, idxNames(prefix+"-labels-idx1-ubyte"))
		if err != nil {
			return nil, err
		}
		return loadIDX(spec.Kind+"-"+split, images, labels, mnistClasses, mnistRows, mnistCols, spec.Limit, mean, std)

	case KindIDX:
		if spec.Images == "" || spec.Labels == "" {
			return nil, fmt.Errorf("datasets: idx needs the images and labels file names")
		}
		classes := spec.Classes
		if classes == 0 {
			classes = mnistClasses
		}
		if classes < 1 || classes > 256 {
			return nil, fmt.Errorf("datasets: idx: %d classes, want 1 to 256", classes)
		}
		name := "idx-" + strings.TrimSuffix(filepath.Base(spec.Images), ".gz")
		return loadIDX(name, inDir(spec.Path, spec.Images), inDir(spec.Path, spec.Labels),
			classes, 0, 0, spec.Limit, mean, std)

	case KindCIFAR10:
		if spec.Path == "" {
			return nil, fmt.Errorf("datasets: cifar10 needs the path of a folder holding its binary batches")
		}
		bases := []string{"test_batch.bin"}
		if split == SplitTrain {
			bases = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
		}
		dir := spec.Path
		if _, err := findFile(dir, []string{bases[0], bases[0] + ".gz"}); err != nil {
			sub := filepath.Join(dir, "cifar-10-batches-bin")
			if _, err2 := findFile(sub, []string{bases[0], bases[0] + ".gz"}); err2 != nil {
				return nil, err
			}
			dir = sub
		}
		paths := make([]string, len(bases))
		for i, b := range bases {
			p, err := findFile(dir, []string{b, b + ".gz"})
			if err != nil {
				return nil, err
			}
			paths[i] = p
		}
		return loadCIFAR10("cifar10-"+split, paths, spec.Limit, mean, std)

	case KindSynthetic:
		s := spec.Synthetic // checked above
		pixels, labels := synthesize(s.N, s.Channels, s.Height, s.Width, s.Classes, s.Seed)
		n := s.N
		if spec.Limit > 0 {
			n = min(n, spec.Limit)
		}
		return newDataset(syntheticName(s.N, s.Channels, s.Height, s.Width, s.Classes, s.Seed),
			s.Channels, s.Height, s.Width, s.Classes, pixels, labels, n, mean, std), nil

	default:
		return nil, fmt.Errorf("datasets: unknown kind %q, want one of %s", spec.Kind, strings.Join(Kinds, ", "))
	}
}

// inDir joins dir and name unless dir is empty or name absolute.
func inDir(dir, name string) string {
	if dir == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// idxNames lists the names under which an MNIST-style file base may be
// stored: raw or gzipped, with "-idx" or ".idx" before its type.
func idxNames(base string) []string {
	dotted := strings.Replace(base, "-idx", ".idx", 1)
	return []string{base, base + ".gz", dotted, dotted + ".gz"}
}

// findFile returns the path of the first of names that is a regular file in
// dir, or an error wrapping ErrNotFound.
func findFile(dir string, names []string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("datasets: %w: %s holds none of %s", ErrNotFound, dir, strings.Join(names, ", "))
}
