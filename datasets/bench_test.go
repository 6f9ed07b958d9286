package datasets_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/neateval/neateval/datasets"
)

// BenchmarkLoadMNISTTrain loads the 60,000 gzipped MNIST training images.
func BenchmarkLoadMNISTTrain(b *testing.B) {
	dir := mnistDir(b)
	for b.Loop() {
		d, err := datasets.LoadIDX(filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
		if err != nil || d.N != 60000 {
			b.Fatal(d, err)
		}
	}
}

// BenchmarkLoadMNISTTrainRaw loads them from raw copies.
func BenchmarkLoadMNISTTrainRaw(b *testing.B) {
	dir, tmp := mnistDir(b), b.TempDir()
	var paths [2]string
	for i, n := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"} {
		data, err := os.ReadFile(filepath.Join(dir, n+".gz"))
		if err != nil {
			b.Fatal(err)
		}
		paths[i] = write(b, tmp, n, gunzip(b, data))
	}
	b.ResetTimer()
	for b.Loop() {
		d, err := datasets.LoadIDX(paths[0], paths[1])
		if err != nil || d.N != 60000 {
			b.Fatal(d, err)
		}
	}
}

// BenchmarkNormalize normalises 10,000 MNIST-sized images.
func BenchmarkNormalize(b *testing.B) {
	d := datasets.Synthetic(10000, 1, 28, 28, 10, 1)
	b.SetBytes(int64(len(d.Images)) * 4)
	for b.Loop() {
		d.Mean, d.Std = nil, nil
		if err := d.Normalize([]float32{0.1307}, []float32{0.3081}); err != nil {
			b.Fatal(err)
		}
	}
}
