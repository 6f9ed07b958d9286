package datasets_test

import (
	"fmt"

	"github.com/neateval/neateval/datasets"
)

// Open the real MNIST test split (found through the Go module cache), keep
// its first 1,000 images and normalise them with MNIST's usual statistics.
func ExampleOpen() {
	d, err := datasets.Open(datasets.Spec{
		Kind:  datasets.KindMNIST,
		Limit: 1000,
		Mean:  []float32{0.1307},
		Std:   []float32{0.3081},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d images of %d×%d×%d, %d classes\n", d.Name, d.N, d.Channels, d.Height, d.Width, d.NumClasses)
	fmt.Printf("first labels %v, background pixel %.4f\n", d.Labels[:5], d.Images[0])
	// Output:
	// mnist-test: 1000 images of 1×28×28, 10 classes
	// first labels [7 2 1 0 4], background pixel -0.4242
}

// A synthetic set, sliced into batches as an evaluator reads it.
func ExampleSynthetic() {
	d := datasets.Synthetic(10, 3, 8, 8, 4, 1)
	fmt.Println(d.Name, d.ImageSize())
	for start := 0; start < d.N; start += 4 {
		images, labels := d.Batch(start, min(start+4, d.N))
		fmt.Println(len(images), labels)
	}
	// Output:
	// synthetic-10x3x8x8-4classes-seed1 192
	// 768 [1 0 3 2]
	// 768 [3 0 2 1]
	// 384 [1 0]
}

// Normalize works per channel: here channel 0 is the first two values of
// the image, channel 1 the last two.
func ExampleDataset_Normalize() {
	d := datasets.Synthetic(1, 2, 1, 2, 1, 0)
	fmt.Printf("%.3f\n", d.Images)
	if err := d.Normalize([]float32{0.5, 0.5}, []float32{0.25, 0.5}); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%.3f\n", d.Images)
	fmt.Println(d.Normalize([]float32{0.5}, []float32{0}))
	// Output:
	// [0.690 0.627 0.129 0.333]
	// [0.761 0.510 -0.741 -0.333]
	// datasets: synthetic-1x2x1x2-1classes-seed0: normalisation needs one mean and one std per channel: 2 channels, 1 means, 1 stds
}
