package datasets_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

func TestLimit(t *testing.T) {
	d := datasets.Synthetic(10, 2, 3, 4, 5, 1)
	for _, tc := range []struct{ n, want int }{{0, 10}, {-3, 10}, {10, 10}, {11, 10}, {1, 1}, {7, 7}} {
		l := d.Limit(tc.n)
		if l.N != tc.want || len(l.Images) != tc.want*24 || len(l.Labels) != tc.want {
			t.Errorf("Limit(%d): N %d, %d values, %d labels, want %d images", tc.n, l.N, len(l.Images), len(l.Labels), tc.want)
		}
		if !slices.Equal(l.Images, d.Images[:tc.want*24]) || !slices.Equal(l.Labels, d.Labels[:tc.want]) {
			t.Errorf("Limit(%d): not the first images", tc.n)
		}
	}
	l := d.Limit(3)
	if d.N != 10 || l.Name != d.Name || l.ImageSize() != 24 {
		t.Errorf("Limit changed its receiver (N %d) or lost the shape", d.N)
	}
	_ = append(l.Images, -1) // capacity is cut: image 3 is untouched
	_ = append(l.Labels, 99)
	if d.Images[3*24] == -1 || d.Labels[3] == 99 {
		t.Error("an append to a limited set wrote into its parent")
	}
}

func TestImageBatch(t *testing.T) {
	d := datasets.Synthetic(6, 1, 2, 2, 3, 2)
	img := d.Image(4)
	if len(img) != 4 || &img[0] != &d.Images[16] {
		t.Errorf("Image(4) is not values 16..19 of Images")
	}
	x, y := d.Batch(2, 5)
	if len(x) != 12 || len(y) != 3 || &x[0] != &d.Images[8] || &y[0] != &d.Labels[2] {
		t.Errorf("Batch(2, 5): %d values, %d labels", len(x), len(y))
	}
	if x, y := d.Batch(6, 6); len(x) != 0 || len(y) != 0 {
		t.Errorf("Batch(6, 6) not empty")
	}
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "datasets: Batch(5, 7)") {
			t.Errorf("Batch(5, 7) recovered %v", r)
		}
	}()
	d.Batch(5, 7)
}

func TestNormalize(t *testing.T) {
	d := datasets.Synthetic(4, 3, 2, 2, 2, 3)
	plain := slices.Clone(d.Images)
	mean, std := []float32{0.5, 0.25, 0}, []float32{0.5, 2, 0.1}
	if err := d.Normalize(mean, std); err != nil {
		t.Fatal(err)
	}
	for i, x := range plain {
		c := i / 4 % 3
		want := (x - mean[c]) / std[c]
		if d.Images[i] != want {
			t.Fatalf("value %d (channel %d): %v, want (%v - %v) / %v = %v", i, c, d.Images[i], x, mean[c], std[c], want)
		}
	}
	if !slices.Equal(d.Mean, mean) || !slices.Equal(d.Std, std) {
		t.Errorf("recorded mean %v std %v", d.Mean, d.Std)
	}
	// Hand-checked values: pixel 0 is 0, pixel 255 is 1.
	e := datasets.Synthetic(1, 1, 1, 1, 1, 0)
	e.Images[0] = 1
	if err := e.Normalize([]float32{0.1307}, []float32{0.3081}); err != nil {
		t.Fatal(err)
	}
	if got := e.Images[0]; math.Abs(float64(got)-2.821487) > 1e-6 {
		t.Errorf("(1 - 0.1307) / 0.3081 = %v, want 2.821487", got)
	}

	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name      string
		mean, std []float32
		msg       string
	}{
		{"too few", []float32{0}, []float32{1}, "3 channels, 1 means, 1 stds"},
		{"std missing", []float32{0, 0, 0}, nil, "3 channels, 3 means, 0 stds"},
		{"std 0", []float32{0, 0, 0}, []float32{1, 0, 1}, "std of channel 1 is 0, want a finite number > 0"},
		{"std < 0", []float32{0, 0, 0}, []float32{1, 1, -1}, "std of channel 2 is -1"},
		{"std NaN", []float32{0, 0, 0}, []float32{nan, 1, 1}, "std of channel 0 is NaN"},
		{"std Inf", []float32{0, 0, 0}, []float32{1, inf, 1}, "std of channel 1 is +Inf"},
		{"mean NaN", []float32{0, nan, 0}, []float32{1, 1, 1}, "mean of channel 1 is NaN"},
	} {
		f := datasets.Synthetic(2, 3, 2, 2, 2, 3)
		before := slices.Clone(f.Images)
		err := f.Normalize(tc.mean, tc.std)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), f.Name) {
			t.Errorf("%s: error %v, want it to name the set and say %q", tc.name, err, tc.msg)
		}
		if !slices.Equal(f.Images, before) || f.Mean != nil {
			t.Errorf("%s: a failed Normalize changed the set", tc.name)
		}
	}
	if err := d.Normalize(mean, std); err == nil || !strings.Contains(err.Error(), "already normalised") {
		t.Errorf("second Normalize: %v", err)
	}
}
