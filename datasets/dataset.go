package datasets

import (
	"fmt"
	"math"
)

// Dataset is a labelled set of images held in memory.
//
// Images holds N*Channels*Height*Width values, image after image, each in
// C, H, W order: x/255 of the uint8 pixel x, then (x-mean)/std per channel if
// [Dataset.Normalize] was applied. Labels holds N class indices in
// [0, NumClasses).
type Dataset struct {
	Name                    string // e.g. "mnist-test"
	Channels, Height, Width int
	NumClasses              int
	N                       int       // number of images
	Images                  []float32 // N*Channels*Height*Width values
	Labels                  []uint8   // N labels in [0, NumClasses)

	// Mean and Std are the per-channel normalisation applied to Images, or
	// nil when the images are plain x/255.
	Mean, Std []float32
}

// ImageSize returns the number of values of one image, Channels*Height*Width.
func (d *Dataset) ImageSize() int { return d.Channels * d.Height * d.Width }

// Image returns image i (0 <= i < N) as a slice of Images, without a copy.
func (d *Dataset) Image(i int) []float32 {
	s := d.ImageSize()
	return d.Images[i*s : (i+1)*s : (i+1)*s]
}

// Batch returns images [start, end) and their labels as slices of Images
// and Labels, without a copy. It panics if the range is not within [0, N].
func (d *Dataset) Batch(start, end int) ([]float32, []uint8) {
	if start < 0 || end < start || end > d.N {
		panic(fmt.Sprintf("datasets: Batch(%d, %d) out of range [0, %d]", start, end, d.N))
	}
	s := d.ImageSize()
	return d.Images[start*s : end*s : end*s], d.Labels[start:end:end]
}

// Limit returns the first n images of d: all of them when n <= 0 or n >= N.
// The result shares Images and Labels with d (capacities are cut, so an
// append to one never writes into the other).
func (d *Dataset) Limit(n int) *Dataset {
	if n <= 0 || n >= d.N {
		return d
	}
	l := *d
	l.N = n
	l.Images, l.Labels = d.Batch(0, n)
	return &l
}

// Normalize applies (x - mean[c]) / std[c] to every value of channel c, in
// place, and records mean and std in d. It needs one mean and one std per
// channel, every std finite and > 0, every mean finite, and images that are
// not normalised yet. A Dataset returned by Limit shares its images with its
// parent, so normalising one changes the values of the other.
func (d *Dataset) Normalize(mean, std []float32) error {
	if err := checkNorm(mean, std, d.Channels); err != nil {
		return fmt.Errorf("datasets: %s: %w", d.Name, err)
	}
	if d.Mean != nil {
		return fmt.Errorf("datasets: %s: already normalised (mean %v, std %v)", d.Name, d.Mean, d.Std)
	}
	hw := d.Height * d.Width
	for i := 0; i < d.N; i++ {
		img := d.Image(i)
		for c := range d.Channels {
			m, s := mean[c], std[c]
			plane := img[c*hw : (c+1)*hw]
			for j, x := range plane {
				plane[j] = (x - m) / s
			}
		}
	}
	d.Mean = append([]float32(nil), mean...)
	d.Std = append([]float32(nil), std...)
	return nil
}

// checkNorm checks a per-channel normalisation for channels channels.
func checkNorm(mean, std []float32, channels int) error {
	if len(mean) != channels || len(std) != channels {
		return fmt.Errorf("normalisation needs one mean and one std per channel: %d channels, %d means, %d stds",
			channels, len(mean), len(std))
	}
	for c := range channels {
		m, s := float64(mean[c]), float64(std[c])
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("mean of channel %d is %v, want a finite number", c, m)
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("std of channel %d is %v, want a finite number > 0", c, s)
		}
	}
	return nil
}

// unit maps a uint8 pixel x to x/255, correctly rounded in float32.
var unit = func() (t [256]float32) {
	for x := range t {
		t[x] = float32(x) / 255
	}
	return t
}()

// newDataset builds a Dataset from the first n images of pixels (uint8, in
// C, H, W order, image after image) and labels, converting through a lookup
// table per channel that folds in the normalisation when mean is not nil.
// The caller has checked the sizes, the labels and the normalisation.
func newDataset(name string, c, h, w, classes int, pixels, labels []byte, n int, mean, std []float32) *Dataset {
	d := &Dataset{Name: name, Channels: c, Height: h, Width: w, NumClasses: classes, N: n}
	luts := make([][256]float32, c)
	for ch := range luts {
		luts[ch] = unit
		if mean != nil {
			m, s := mean[ch], std[ch]
			for x, v := range luts[ch] {
				luts[ch][x] = (v - m) / s // the same arithmetic as Normalize
			}
		}
	}
	if mean != nil {
		d.Mean = append([]float32(nil), mean...)
		d.Std = append([]float32(nil), std...)
	}
	hw := h * w
	d.Images = make([]float32, n*c*hw)
	for i := range n {
		for ch := range c {
			lut := &luts[ch]
			off := (i*c + ch) * hw
			src := pixels[off : off+hw]
			dst := d.Images[off : off+hw]
			for j, x := range src {
				dst[j] = lut[x]
			}
		}
	}
	d.Labels = append([]uint8(nil), labels[:n]...)
	return d
}
