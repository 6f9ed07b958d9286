package vram_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/vram"
)

// TestControllerSettles: on a real arena whose largest feasible batch is
// known, the controller covers every image once and settles within 10% of
// the feasible batch after at most ⌈log2(start/feasible)⌉ + 2 OOMs.
func TestControllerSettles(t *testing.T) {
	fwdSmall := forward{ws: 64 * kib, p1: 3 * kib, p2: 3 * kib, p3: 2 * kib}
	fwdWide := forward{ws: 1 * mib, p1: 40 * kib, p2: 16 * kib, p3: 64 * kib}
	// The threshold trigger is off here: feasible means "does not run out".
	tests := []struct {
		capacity int64
		fwd      forward
		start    int
	}{
		{24 * mib, fwdSmall, 45000},
		{48 * mib, fwdSmall, 45000},
		{96 * mib, fwdSmall, 45000},
		{256 * mib, fwdSmall, 45000},
		{96 * mib, fwdSmall, 12000},
		{96 * mib, fwdSmall, 16000},
		{48 * mib, fwdWide, 45000},
		{256 * mib, fwdWide, 45000},
		{256 * mib, fwdWide, 3000},
		{24 * mib, fwdWide, 45000},
		{96 * mib, fwdWide, 700},
		{1 << 30, fwdWide, 45000},
		{3 << 30, fwdWide, 45000},
	}
	t.Logf("%-10s %-8s %-6s %-9s %-6s %-5s %-8s", "capacity", "per-img", "start", "feasible", "final", "OOMs", "OOM max")
	for _, tt := range tests {
		name := fmt.Sprintf("%s/%d/%d", vram.FormatBytes(tt.capacity), tt.fwd.need(0).ActPerImage, tt.start)
		t.Run(name, func(t *testing.T) {
			d := newCPU(t, vram.CPUOptions{MemoryBytes: tt.capacity})
			weights, err := d.Alloc(300 * kib)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(weights)
			feas := feasible(t, d, tt.fwd, tt.start, 1)
			if feas < 8 {
				t.Fatalf("test case too tight: feasible %d", feas)
			}
			n := 25 * feas
			seen := make([]atomic.Int32, n)
			var buf bytes.Buffer
			c := vram.NewBatchController(vram.ControllerConfig{Start: tt.start, Threshold: 1}, d, zerolog.New(&buf))
			d.ResetPeak()
			job := vram.Job{Genome: 1, Need: tt.fwd.need(300 * kib)}
			st, err := c.Run(context.Background(), job, n, func(lo, hi int) error { return tt.fwd.run(d, lo, hi, seen) })
			if err != nil {
				t.Fatal(err)
			}
			checkCoverage(t, seen)
			limit := ceilLog2(float64(tt.start)/float64(feas)) + 2
			t.Logf("%-10s %-8d %-6d %-9d %-6d %-5d %-8d", vram.FormatBytes(tt.capacity), job.Need.ActPerImage,
				tt.start, feas, st.FinalBatch, st.OOMs, limit)
			if st.OOMs > limit {
				t.Errorf("%d OOMs, want at most %d", st.OOMs, limit)
			}
			if math.Abs(float64(st.FinalBatch-feas)) > 0.1*float64(feas) {
				t.Errorf("settled at %d, feasible %d", st.FinalBatch, feas)
			}
			evs := parseLog(t, &buf)
			if count(evs, vram.EventBatchShrink) != st.Shrinks || count(evs, vram.EventBatchGrow) != st.Grows {
				t.Errorf("stats %+v, log %d shrinks %d grows", st, count(evs, vram.EventBatchShrink), count(evs, vram.EventBatchGrow))
			}
			if st.OOMs == 0 && feas < tt.start {
				t.Errorf("no OOM but feasible %d < start %d", feas, tt.start)
			}
			// A second genome of the same need starts where the first settled.
			seen2 := make([]atomic.Int32, n)
			job.Genome = 2
			st2, err := c.Run(context.Background(), job, n, func(lo, hi int) error { return tt.fwd.run(d, lo, hi, seen2) })
			if err != nil {
				t.Fatal(err)
			}
			checkCoverage(t, seen2)
			if st2.OOMs > 1 || math.Abs(float64(st2.FinalBatch-feas)) > 0.1*float64(feas) {
				t.Errorf("second genome: %+v, feasible %d", st2, feas)
			}
		})
	}
}

// TestControllerSettlesRandom checks the same bound over random forwards,
// weights, devices and starts (a fixed seed, so the cases are the same on
// every run).
func TestControllerSettlesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 11))
	var ratios []float64
	for i := range 150 {
		f := forward{ws: rng.Int64N(4 * mib), p1: 256 + rng.Int64N(64*kib), p2: 256 + rng.Int64N(64*kib), p3: 256 + rng.Int64N(64*kib)}
		capacity := (32 + rng.Int64N(480)) * mib
		model := rng.Int64N(2 * mib)
		start := 45000
		if rng.IntN(2) == 0 {
			start = 100 + rng.IntN(20000)
		}
		d := newCPU(t, vram.CPUOptions{MemoryBytes: capacity})
		w, err := d.Alloc(model)
		if err != nil {
			t.Fatal(err)
		}
		feas := feasible(t, d, f, start, 1)
		if feas < 8 {
			d.Free(w)
			continue
		}
		n := 25 * feas
		seen := make([]atomic.Int32, n)
		c := vram.NewBatchController(vram.ControllerConfig{Start: start, Threshold: 1}, d, zerolog.Nop())
		st, err := c.Run(context.Background(), vram.Job{Genome: int64(i), Need: f.need(model)}, n,
			func(lo, hi int) error { return f.run(d, lo, hi, seen) })
		if err != nil {
			t.Fatal(err)
		}
		checkCoverage(t, seen)
		limit := ceilLog2(float64(start)/float64(feas)) + 2
		ratio := float64(st.FinalBatch) / float64(feas)
		ratios = append(ratios, ratio)
		if st.OOMs > limit || math.Abs(ratio-1) > 0.1 {
			t.Errorf("case %d: %s device, %+v, weights %d, start %d: feasible %d, settled at %d after %d OOMs (at most %d)",
				i, vram.FormatBytes(capacity), f, model, start, feas, st.FinalBatch, st.OOMs, limit)
		}
		d.Free(w)
	}
	slices.Sort(ratios)
	t.Logf("%d cases: final/feasible min %.3f, p10 %.3f, median %.3f, max %.3f", len(ratios),
		ratios[0], ratios[len(ratios)/10], ratios[len(ratios)/2], ratios[len(ratios)-1])
}
