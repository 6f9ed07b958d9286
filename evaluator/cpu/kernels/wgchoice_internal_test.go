package kernels

import "testing"

// TestWinogradChoice holds wgEligible to shapes whose faster variant was
// clear in BenchmarkWinogradShapes (AVX-512, one thread: the ratio of the
// classic time to Winograd's, ≥ 1.3 or ≤ 0.7), and to the rules that do
// not need a measurement: only 3×3 and 5×5 filters of stride 1 over maps
// of at least 2×2 outputs, and the test knob.
func TestWinogradChoice(t *testing.T) {
	shape := func(c, hw, oc, k, pad int) ConvShape {
		o := hw + 2*pad - k + 1
		return ConvShape{C: c, H: hw, W: hw, OC: oc, K: k, Stride: 1, Pad: pad, OH: o, OW: o}
	}
	for _, tc := range []struct {
		s    ConvShape
		want bool
	}{
		{shape(101, 13, 64, 5, 2), true}, // 1.91
		{shape(110, 14, 54, 5, 0), true}, // 2.09
		{shape(121, 14, 93, 3, 1), true}, // 1.87
		{shape(80, 6, 42, 3, 1), true},   // 1.51
		{shape(8, 14, 30, 5, 0), true},   // 1.32
		{shape(1, 28, 31, 5, 2), false},  // 0.50: one input channel
		{shape(1, 28, 104, 3, 0), false}, // 0.41
		{shape(32, 14, 4, 3, 1), false},  // 0.40: four output channels
		{shape(32, 14, 5, 5, 4), false},  // 0.35
		{shape(112, 2, 94, 5, 2), false}, // 0.60: one tile an image
		{shape(17, 2, 30, 5, 2), false},  // 0.47
		{shape(26, 3, 6, 3, 1), false},   // 0.37
		{shape(50, 1, 29, 5, 2), false},  // 1×1 map
		{shape(64, 14, 64, 1, 0), false}, // 1×1 filter
		{shape(64, 14, 64, 7, 3), false}, // 7×7 filter
	} {
		if got := wgEligible(tc.s); got != tc.want {
			t.Errorf("%+v: wgEligible %v (ratio %.2f), want %v", tc.s, got, wgRatio(tc.s), tc.want)
		}
	}
	s := shape(64, 14, 64, 3, 1)
	s.Stride = 2
	s.OH, s.OW = 7, 7
	if wgEligible(s) {
		t.Errorf("%+v: stride 2 took Winograd", s)
	}
	prev := wgAlways
	wgAlways = true
	defer func() { wgAlways = prev }()
	if !wgEligible(shape(1, 28, 4, 3, 1)) || wgEligible(shape(50, 1, 29, 5, 2)) {
		t.Error("wgAlways: every 3×3 or 5×5 stride-1 shape of ≥ 2×2 outputs takes Winograd, no other")
	}
}
