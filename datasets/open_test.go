package datasets_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

func TestOpenSynthetic(t *testing.T) {
	syn := datasets.SyntheticSpec{N: 20, Channels: 2, Height: 5, Width: 3, Classes: 4, Seed: 8}
	want := datasets.Synthetic(20, 2, 5, 3, 4, 8)
	d, err := datasets.Open(datasets.Spec{Kind: datasets.KindSynthetic, Synthetic: syn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != want.Name || d.N != 20 || !slices.Equal(d.Images, want.Images) || !slices.Equal(d.Labels, want.Labels) {
		t.Errorf("Open differs from Synthetic")
	}
	// Normalising while converting gives exactly what Normalize gives.
	mean, std := []float32{0.3, 0.6}, []float32{0.2, 0.7}
	if err := want.Limit(6).Normalize(mean, std); err != nil {
		t.Fatal(err)
	}
	d, err = datasets.Open(datasets.Spec{Kind: datasets.KindSynthetic, Synthetic: syn, Limit: 6, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 6 || !slices.Equal(d.Images, want.Images[:6*30]) || !slices.Equal(d.Labels, want.Labels[:6]) ||
		!slices.Equal(d.Mean, mean) || !slices.Equal(d.Std, std) {
		t.Errorf("Open with limit and normalisation differs from Limit and Normalize")
	}
}

func TestOpenIDX(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.idx", idxImages(5, 4, 3, testPixel))
	write(t, dir, "y.idx.gz", gz(t, idxLabels(0, 11, 2, 3, 4)))
	d, err := datasets.Open(datasets.Spec{Kind: datasets.KindIDX, Path: dir, Images: "x.idx", Labels: "y.idx.gz", Classes: 12, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "idx-x.idx" || d.N != 2 || d.Height != 4 || d.Width != 3 || d.NumClasses != 12 || !slices.Equal(d.Labels, []uint8{0, 11}) {
		t.Errorf("%s: %d images of %d×%d, %d classes, labels %v", d.Name, d.N, d.Height, d.Width, d.NumClasses, d.Labels)
	}
	// Without Path, the names are paths; 10 classes by default.
	_, err = datasets.Open(datasets.Spec{Kind: datasets.KindIDX, Images: filepath.Join(dir, "x.idx"), Labels: filepath.Join(dir, "y.idx.gz")})
	if !errors.Is(err, datasets.ErrLabel) || !strings.Contains(err.Error(), "label 11 of image 1") {
		t.Errorf("10 classes: %v", err)
	}
	// MNIST must be 28×28.
	write(t, dir, "t10k-images-idx3-ubyte", idxImages(5, 4, 3, testPixel))
	write(t, dir, "t10k-labels.idx1-ubyte", idxLabels(0, 1, 2, 3, 4))
	_, err = datasets.Open(datasets.Spec{Kind: datasets.KindMNIST, Path: dir})
	if !errors.Is(err, datasets.ErrDims) || !strings.Contains(err.Error(), "images of 4×3 pixels, want 28×28 for mnist-test") {
		t.Errorf("MNIST of 4×3: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	empty := t.TempDir()
	syn := datasets.SyntheticSpec{N: 2, Channels: 3, Height: 2, Width: 2, Classes: 2}
	for _, tc := range []struct {
		name string
		spec datasets.Spec
		msg  string
	}{
		{"kind", datasets.Spec{Kind: "imagenet"}, `unknown kind "imagenet", want one of mnist, fashion-mnist, idx, cifar10, synthetic`},
		{"no kind", datasets.Spec{}, `unknown kind ""`},
		{"split", datasets.Spec{Kind: "mnist", Split: "validation"}, `split "validation", want "test" or "train"`},
		{"limit", datasets.Spec{Kind: "mnist", Limit: -1}, "limit -1, want 0 (all images) or more"},
		{"mean count", datasets.Spec{Kind: "mnist", Mean: []float32{0, 0, 0}, Std: []float32{1, 1, 1}}, "mnist: normalisation needs one mean and one std per channel: 1 channels, 3 means, 3 stds"},
		{"std only", datasets.Spec{Kind: "cifar10", Std: []float32{1, 1, 1}}, "3 channels, 0 means, 3 stds"},
		{"std 0", datasets.Spec{Kind: "synthetic", Synthetic: syn, Mean: []float32{0, 0, 0}, Std: []float32{1, 1, 0}}, "std of channel 2 is 0"},
		{"fashion no path", datasets.Spec{Kind: "fashion-mnist"}, "fashion-mnist needs the path"},
		{"fashion empty folder", datasets.Spec{Kind: "fashion-mnist", Path: empty}, "holds none of t10k-images-idx3-ubyte, t10k-images-idx3-ubyte.gz, t10k-images.idx3-ubyte, t10k-images.idx3-ubyte.gz"},
		{"cifar no path", datasets.Spec{Kind: "cifar10"}, "cifar10 needs the path"},
		{"cifar empty folder", datasets.Spec{Kind: "cifar10", Path: empty}, "holds none of test_batch.bin, test_batch.bin.gz"},
		{"idx no names", datasets.Spec{Kind: "idx", Path: empty, Images: "a"}, "idx needs the images and labels file names"},
		{"idx classes", datasets.Spec{Kind: "idx", Images: "a", Labels: "b", Classes: 300}, "idx: 300 classes, want 1 to 256"},
		{"idx missing", datasets.Spec{Kind: "idx", Path: empty, Images: "a", Labels: "b"}, filepath.Join(empty, "a")},
		{"synthetic zero", datasets.Spec{Kind: "synthetic"}, "synthetic: sizes must be at least 1: 0 images of 0×0×0"},
		{"synthetic classes", datasets.Spec{Kind: "synthetic", Synthetic: datasets.SyntheticSpec{N: 1, Channels: 1, Height: 1, Width: 1}}, "synthetic: 0 classes, want 1 to 256"},
		{"synthetic huge", datasets.Spec{Kind: "synthetic", Synthetic: datasets.SyntheticSpec{N: 1 << 40, Channels: 1 << 20, Height: 1 << 20, Width: 1 << 20, Classes: 2}}, "more than 1073741824 values"},
	} {
		d, err := datasets.Open(tc.spec)
		if err == nil || d != nil || !strings.HasPrefix(err.Error(), "datasets: ") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.msg)
		}
	}
}
