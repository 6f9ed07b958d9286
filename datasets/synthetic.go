package datasets

import "fmt"

// Synthetic returns a labelled set of n images of channels×height×width
// pixels in numClasses classes, the same for the same arguments on every
// machine (integer arithmetic only), for tests and benchmarks.
//
// It is learnable: each class has a prototype per channel, a coarse grid of
// up to 4×4 cells of random intensity, and each image is its class's
// prototype shifted by up to a pixel each way, brightened or darkened a
// little, plus pixel noise (standard deviation about 19 of 255), then
// clamped to 0..255 and converted as x/255 like real images. Images of at
// least 4×4 pixels separate well (a nearest-prototype rule is near perfect);
// tinier ones may not. Labels are balanced (class counts differ by at most
// one) and shuffled.
//
// Synthetic panics, with a message starting "datasets: Synthetic:", if a
// size is below 1, numClasses is above 256 or the set would hold more than
// 2^30 values; [Open] checks them and returns an error instead.
func Synthetic(n, channels, height, width, numClasses int, seed int64) *Dataset {
	if err := checkSynthetic(n, channels, height, width, numClasses); err != nil {
		panic("datasets: Synthetic: " + err.Error())
	}
	pixels, labels := synthesize(n, channels, height, width, numClasses, seed)
	return newDataset(syntheticName(n, channels, height, width, numClasses, seed),
		channels, height, width, numClasses, pixels, labels, n, nil, nil)
}

// maxSynthetic caps the values of a synthetic set (4 GiB of float32).
const maxSynthetic = 1 << 30

func checkSynthetic(n, channels, height, width, classes int) error {
	if n < 1 || channels < 1 || height < 1 || width < 1 {
		return fmt.Errorf("sizes must be at least 1: %d images of %d×%d×%d", n, channels, height, width)
	}
	if classes < 1 || classes > 256 {
		return fmt.Errorf("%d classes, want 1 to 256", classes)
	}
	if size, ok := mul(uint64(n), uint64(channels), uint64(height), uint64(width)); !ok || size > maxSynthetic {
		return fmt.Errorf("%d images of %d×%d×%d is more than %d values", n, channels, height, width, maxSynthetic)
	}
	return nil
}

func syntheticName(n, channels, height, width, classes int, seed int64) string {
	return fmt.Sprintf("synthetic-%dx%dx%dx%d-%dclasses-seed%d", n, channels, height, width, classes, seed)
}

// splitMix64 is a small, fast generator (Steele, Lea and Flood's SplitMix64),
// written here so the synthetic set never changes with the Go release.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n) (n > 0; the tiny modulo bias is harmless).
func (s *splitMix64) intn(n int) int { return int(s.next() % uint64(n)) }

// synthesize makes the pixels and labels of Synthetic.
func synthesize(n, channels, height, width, classes int, seed int64) (pixels, labels []byte) {
	rng := splitMix64(seed)
	gh, gw := min(4, height), min(4, width)
	protos := make([]byte, classes*channels*gh*gw)
	for i := range protos {
		protos[i] = byte(rng.next())
	}
	labels = make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % classes)
	}
	for i := n - 1; i > 0; i-- { // Fisher–Yates
		j := rng.intn(i + 1)
		labels[i], labels[j] = labels[j], labels[i]
	}
	hw := height * width
	pixels = make([]byte, n*channels*hw)
	for i, label := range labels {
		dy, dx := rng.intn(3)-1, rng.intn(3)-1
		bright := rng.intn(41) - 20
		for c := range channels {
			proto := protos[(int(label)*channels+c)*gh*gw:][:gh*gw]
			plane := pixels[(i*channels+c)*hw:][:hw]
			var bits uint64
			for y := range height {
				py := min(max(y+dy, 0), height-1) * gh / height
				for x := range width {
					px := min(max(x+dx, 0), width-1) * gw / width
					if (y*width+x)%2 == 0 {
						bits = rng.next()
					}
					// Four 5-bit uniforms: mean 62, standard deviation 18.5.
					noise := int(bits&31+bits>>8&31+bits>>16&31+bits>>24&31) - 62
					bits >>= 32
					v := int(proto[py*gw+px]) + bright + noise
					plane[y*width+x] = byte(min(max(v, 0), 255))
				}
			}
		}
	}
	return pixels, labels
}
