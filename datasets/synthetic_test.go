package datasets_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neateval/neateval/datasets"
)

func TestSyntheticDeterministic(t *testing.T) {
	a := datasets.Synthetic(50, 3, 8, 6, 7, 42)
	b := datasets.Synthetic(50, 3, 8, 6, 7, 42)
	c := datasets.Synthetic(50, 3, 8, 6, 7, 43)
	if !slices.Equal(a.Images, b.Images) || !slices.Equal(a.Labels, b.Labels) || a.Name != b.Name {
		t.Error("same arguments, different sets")
	}
	if slices.Equal(a.Images, c.Images) || a.Name == c.Name {
		t.Error("seeds 42 and 43 give the same images")
	}
	// Pinned values: the set must never change with Go releases or machines.
	if got, want := fmt.Sprint(a.Labels[:10], a.Images[0]*255, a.Images[1000]*255), "[1 5 6 5 0 4 2 3 1 4] 91 135"; got != want {
		t.Errorf("first labels and pixels %s, want %s", got, want)
	}
	for i, v := range a.Images {
		if q := v * 255; v < 0 || v > 1 || q != float32(int(q+0.5)) {
			t.Fatalf("value %d is %v, not a pixel x/255", i, v)
		}
	}
}

func TestSyntheticBalanced(t *testing.T) {
	for _, tc := range []struct{ n, classes int }{{100, 10}, {103, 10}, {7, 10}, {1000, 3}, {5, 1}} {
		d := datasets.Synthetic(tc.n, 1, 4, 4, tc.classes, 9)
		count := make([]int, tc.classes)
		for _, l := range d.Labels {
			count[l]++
		}
		if lo, hi := slices.Min(count), slices.Max(count); hi-lo > 1 || d.N != tc.n || d.NumClasses != tc.classes {
			t.Errorf("n %d, %d classes: class counts %v", tc.n, tc.classes, count)
		}
	}
	d := datasets.Synthetic(30, 1, 4, 4, 3, 9)
	if slices.IsSorted(d.Labels) || slices.Equal(d.Labels[:3], []uint8{0, 1, 2}) && slices.Equal(d.Labels[3:6], []uint8{0, 1, 2}) {
		t.Errorf("labels not shuffled: %v", d.Labels)
	}
}

// TestSyntheticLearnable trains a nearest-centroid rule on half a set and
// scores it on the other half: the classes must be separable.
func TestSyntheticLearnable(t *testing.T) {
	for _, shape := range [][3]int{{1, 8, 8}, {3, 16, 16}, {1, 28, 28}} {
		const n, classes = 2000, 10
		d := datasets.Synthetic(n, shape[0], shape[1], shape[2], classes, 5)
		size := d.ImageSize()
		cent := make([][]float64, classes)
		count := make([]int, classes)
		for k := range cent {
			cent[k] = make([]float64, size)
		}
		for i := range n / 2 {
			l := d.Labels[i]
			count[l]++
			for j, v := range d.Image(i) {
				cent[l][j] += float64(v)
			}
		}
		for k := range cent {
			for j := range cent[k] {
				cent[k][j] /= float64(count[k])
			}
		}
		correct := 0
		for i := n / 2; i < n; i++ {
			best, bestDist := -1, 0.0
			for k := range cent {
				dist := 0.0
				for j, v := range d.Image(i) {
					e := float64(v) - cent[k][j]
					dist += e * e
				}
				if best < 0 || dist < bestDist {
					best, bestDist = k, dist
				}
			}
			if best == int(d.Labels[i]) {
				correct++
			}
		}
		acc := float64(correct) / (n / 2)
		t.Logf("%v: nearest-centroid accuracy %.3f", shape, acc)
		if acc < 0.95 {
			t.Errorf("%v: nearest-centroid accuracy %.3f, want ≥ 0.95", shape, acc)
		}
		// …and not trivially: the images of one class are not all alike.
		if slices.Equal(d.Image(0), d.Image(slices.Index(d.Labels[1:], d.Labels[0])+1)) {
			t.Errorf("%v: two images of class %d are equal", shape, d.Labels[0])
		}
	}
}

func TestSyntheticPanics(t *testing.T) {
	for _, args := range [][5]int{{0, 1, 1, 1, 1}, {1, 0, 1, 1, 1}, {1, 1, -1, 1, 1}, {1, 1, 1, 0, 1}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 257}, {1 << 20, 3, 1024, 1024, 10}} {
		func() {
			defer func() {
				if r, ok := recover().(string); !ok || !strings.HasPrefix(r, "datasets: Synthetic: ") {
					t.Errorf("Synthetic%v: recovered %v", args, r)
				}
			}()
			datasets.Synthetic(args[0], args[1], args[2], args[3], args[4], 0)
		}()
	}
}
