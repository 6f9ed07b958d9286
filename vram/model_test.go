package vram_test

import (
	"math"
	"testing"

	"github.com/neateval/neateval/vram"
)

func TestNeed(t *testing.T) {
	n := vram.Need{Model: 1000, ActPerImage: 300, ActFixed: 50, Buffers: 2}
	tests := []struct {
		b         int
		act, peak int64
	}{
		{0, 0, 1000},
		{-3, 0, 1000},
		{1, 300 + 50 + 2*511, 1000 + 300 + 50 + 2*511},
		{10, 3000 + 50 + 2*511, 1000 + 3000 + 50 + 2*511},
	}
	for _, tt := range tests {
		if got := n.Act(tt.b); got != tt.act {
			t.Errorf("Act(%d) = %d, want %d", tt.b, got, tt.act)
		}
		if got := n.Peak(tt.b); got != tt.peak {
			t.Errorf("Peak(%d) = %d, want %d", tt.b, got, tt.peak)
		}
	}
}

func TestFitBatch(t *testing.T) {
	needs := []vram.Need{
		{Model: 1000, ActPerImage: 300, ActFixed: 50, Buffers: 2},
		{ActPerImage: 1},
		{Model: 1 << 30, ActPerImage: 3 << 20, ActFixed: 7, Buffers: 40},
	}
	for _, n := range needs {
		for _, avail := range []int64{0, 1, n.Peak(1) - 1, n.Peak(1), n.Peak(1) + 1, n.Peak(17), n.Peak(17) + n.ActPerImage - 1, 1 << 40} {
			b := vram.FitBatch(n, avail)
			if b > 0 && n.Peak(b) > avail {
				t.Errorf("%+v, %d bytes: batch %d needs %d", n, avail, b, n.Peak(b))
			}
			if b < math.MaxInt32 && n.Peak(b+1) <= avail {
				t.Errorf("%+v, %d bytes: batch %d, but %d fits too", n, avail, b, b+1)
			}
		}
	}
	flat := vram.Need{Model: 10, ActFixed: 10}
	if got := vram.FitBatch(flat, 20); got != math.MaxInt32 {
		t.Errorf("a need that does not grow with the batch: %d", got)
	}
	if got := vram.FitBatch(flat, 19); got != 0 {
		t.Errorf("a need that does not fit: %d", got)
	}
}

// TestNeedMatchesAllocator: a Need built from a forward's buffers predicts
// the allocator's measured peak to within its rounding, never below it.
func TestNeedMatchesAllocator(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 256 * mib})
	for _, f := range []forward{small, {ws: 1000, p1: 333, p2: 777, p3: 5}, {ws: 3 * mib, p1: 40 * kib, p2: 16 * kib, p3: 64 * kib}} {
		for _, b := range []int{1, 7, 100, 999} {
			d.EmptyCache()
			d.ResetPeak()
			if err := f.run(d, 0, b, nil); err != nil {
				t.Fatal(err)
			}
			measured := d.Stats().PeakAllocated
			predicted := f.need(0).Act(b)
			if predicted < measured || predicted-measured >= 3*vram.MinBlockSize {
				t.Errorf("%+v, batch %d: predicted %d, measured %d", f, b, predicted, measured)
			}
		}
	}
}
