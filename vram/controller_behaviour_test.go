package vram_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/vram"
)

var small = forward{ws: 64 * kib, p1: 3 * kib, p2: 3 * kib, p3: 2 * kib}

func TestControllerPassesOtherErrors(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 32 * mib})
	c := vram.NewBatchController(vram.ControllerConfig{Start: 100}, d, zerolog.Nop())
	sentinel := errors.New("logits are not finite")
	wrapped := fmt.Errorf("genome 3, node 7: %w", sentinel)
	calls := 0
	st, err := c.Run(context.Background(), vram.Job{Genome: 3}, 1000, func(lo, hi int) error {
		calls++
		if lo >= 300 {
			return wrapped
		}
		return nil
	})
	if err != wrapped || !errors.Is(err, sentinel) || errors.Is(err, vram.ErrOutOfMemory) {
		t.Fatalf("got %v, want the same error back", err)
	}
	if calls != 4 || st.Slices != 3 || st.Shrinks != 0 || st.OOMs != 0 {
		t.Fatalf("%d calls, stats %+v", calls, st)
	}
}

func TestControllerExhausted(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 16 * mib})
	var buf bytes.Buffer
	c := vram.NewBatchController(vram.ControllerConfig{Start: 64}, d, zerolog.New(&buf))
	// One image needs 40 MiB: it never fits.
	huge := forward{ws: 1 * mib, p1: 20 * mib, p2: 20 * mib, p3: 1 * mib}
	need := huge.need(0)
	attempts := map[int]int{}
	st, err := c.Run(context.Background(), vram.Job{Genome: 17, Need: need}, 500, func(lo, hi int) error {
		attempts[hi-lo]++
		return huge.run(d, lo, hi, nil)
	})
	var be *vram.BatchOOMError
	if !errors.As(err, &be) || !errors.Is(err, vram.ErrOutOfMemory) {
		t.Fatalf("got %v, want a *BatchOOMError", err)
	}
	if be.Genome != 17 || be.Batch != 1 || be.Needed != need.Peak(1) || be.Total != 16*mib ||
		be.Free <= 0 || be.Free >= 16*mib || be.Requested != 20*mib {
		t.Fatalf("error %+v", be)
	}
	var oe *vram.OOMError
	if !errors.As(err, &oe) || oe.Requested != 20*mib {
		t.Fatalf("the device's error is not wrapped: %v", err)
	}
	if attempts[1] != 3 || st.Slices != 0 {
		t.Fatalf("attempts by size %v, stats %+v", attempts, st)
	}
	evs := parseLog(t, &buf)
	if count(evs, vram.EventBatchExhausted) != 1 || count(evs, vram.EventBatchShrink) != st.Shrinks ||
		count(evs, vram.EventBatchRetry) != 2 {
		t.Fatalf("log %+v, stats %+v", evs, st)
	}
	last := evs[len(evs)-1]
	if last.Genome != 17 || last.Reason != vram.ReasonOOM || last.Requested != 20*mib || last.Free != be.Free {
		t.Fatalf("exhausted line %+v", last)
	}
	if st := d.Stats(); st.Allocated != 0 {
		t.Fatalf("%d bytes left allocated", st.Allocated)
	}
	// The controller goes on with the next genome.
	seen := make([]atomic.Int32, 500)
	if _, err := c.Run(context.Background(), vram.Job{Genome: 18, Need: small.need(0)}, 500,
		func(lo, hi int) error { return small.run(d, lo, hi, seen) }); err != nil {
		t.Fatal(err)
	}
	checkCoverage(t, seen)
}

// TestControllerBuckets: a giant genome does not shrink the batch of the
// small genomes after it, and a genome of like need starts where the giant
// settled.
func TestControllerBuckets(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 96 * mib})
	c := vram.NewBatchController(vram.ControllerConfig{Start: 2000, Threshold: 1}, d, zerolog.Nop())
	giant := forward{ws: 1 * mib, p1: 72 * kib, p2: 72 * kib, p3: 72 * kib}
	run := func(genome int64, f forward, n int) vram.RunStats {
		t.Helper()
		seen := make([]atomic.Int32, n)
		st, err := c.Run(context.Background(), vram.Job{Genome: genome, Need: f.need(0)}, n,
			func(lo, hi int) error { return f.run(d, lo, hi, seen) })
		if err != nil {
			t.Fatal(err)
		}
		checkCoverage(t, seen)
		return st
	}
	g := run(1, giant, 20000)
	if g.OOMs == 0 || g.FinalBatch >= 2000 {
		t.Fatalf("the giant should not fit 2000 images: %+v", g)
	}
	s := run(2, small, 20000)
	if s.OOMs != 0 || s.Shrinks != 0 || s.FinalBatch != 2000 {
		t.Fatalf("small genome after the giant: %+v", s)
	}
	// A genome of the giant's bucket (a power of two of the per-image
	// bytes), a little smaller, starts at the giant's level scaled to its
	// need: no OOM, and a larger batch.
	like := forward{ws: 1 * mib, p1: 64 * kib, p2: 64 * kib, p3: 64 * kib}
	l := run(3, like, 20000)
	if l.OOMs != 0 || l.FinalBatch <= g.FinalBatch || l.FinalBatch > g.FinalBatch*72/64+1 {
		t.Fatalf("genome like the giant: %+v (giant %+v)", l, g)
	}
}

// TestControllerThreshold: with the peak reserved memory above the
// threshold but no allocation failing, the controller shrinks anyway.
func TestControllerThreshold(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 128 * mib})
	var buf bytes.Buffer
	c := vram.NewBatchController(vram.ControllerConfig{Start: 16000, Threshold: 0.5}, d, zerolog.New(&buf))
	// 16000 images take ~94 MiB: they fit in 128 MiB, above half of it.
	n := 100000
	seen := make([]atomic.Int32, n)
	var peaks []int64
	st, err := c.Run(context.Background(), vram.Job{Genome: 5, Need: small.need(0)}, n, func(lo, hi int) error {
		d.ResetPeak() // this test's own measure; the controller's resets come before fn
		err := small.run(d, lo, hi, seen)
		peaks = append(peaks, d.Stats().PeakReserved)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkCoverage(t, seen)
	if st.OOMs != 0 || st.Shrinks == 0 || st.FinalBatch >= 16000 {
		t.Fatalf("stats %+v", st)
	}
	evs := parseLog(t, &buf)
	for _, e := range evs {
		if e.Event == vram.EventBatchShrink && (e.Reason != vram.ReasonThreshold || e.Requested <= 64*mib) {
			t.Fatalf("shrink %+v", e)
		}
	}
	if count(evs, vram.EventBatchShrink) != st.Shrinks {
		t.Fatalf("%d shrink lines, %d shrinks", count(evs, vram.EventBatchShrink), st.Shrinks)
	}
	// The last slices stay under the threshold, and not far under it.
	last := peaks[len(peaks)-2] // the very last slice may be short
	if last > 64*mib || last < 48*mib {
		t.Fatalf("peak reserved of the settled slices %s, want just under 64 MiB (final batch %d)", vram.FormatBytes(last), st.FinalBatch)
	}
	t.Logf("settled at batch %d, peak reserved %s of 128 MiB, %d shrinks", st.FinalBatch, vram.FormatBytes(last), st.Shrinks)
}

// TestControllerThresholdCache: free blocks that earlier forwards of other
// sizes left in the cache push the peak reserved memory past the
// threshold, though the forward itself fits well under it. The controller
// empties the cache and keeps the batch; a forward that itself passes the
// threshold still shrinks, cache or not.
func TestControllerThresholdCache(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 128 * mib})
	pile := func() {
		var bs []*vram.Block
		for _, size := range []int64{35 * mib, 37 * mib} {
			b, err := d.Alloc(size)
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		for _, b := range bs {
			d.Free(b)
		}
	}
	need := vram.Need{ActPerImage: kib, Buffers: 1}
	forward := func(lo, hi int) error {
		b, err := d.Alloc(need.Act(hi - lo))
		if err != nil {
			return err
		}
		d.Free(b)
		return nil
	}
	for _, tc := range []struct {
		images      int
		wantShrinks bool
	}{
		{20 << 10, false}, // 20 MiB: the cache's excursion is forgiven
		{70 << 10, true},  // 70 MiB: past 64 MiB on its own
	} {
		var buf bytes.Buffer
		c := vram.NewBatchController(vram.ControllerConfig{Start: tc.images, Threshold: 0.5}, d, zerolog.New(&buf))
		pile()
		if st := d.Stats(); st.Reserved < 64*mib {
			t.Fatalf("the pile reserved only %s", vram.FormatBytes(st.Reserved))
		}
		st, err := c.Run(context.Background(), vram.Job{Genome: 1, Need: need}, tc.images, forward)
		if err != nil {
			t.Fatal(err)
		}
		if (st.Shrinks > 0) != tc.wantShrinks {
			t.Errorf("%d images: stats %+v; log %s", tc.images, st, buf.String())
		}
		if r := d.Stats().Reserved; !tc.wantShrinks && r > 64*mib {
			t.Errorf("%d images: %s reserved after the walk: the cache was not emptied", tc.images, vram.FormatBytes(r))
		}
		d.EmptyCache()
	}
}

// TestControllerInjectedFaults: with allocations failing at random, every
// image is still done exactly once, no genome is lost, and the log has one
// batch_shrink line per shrink.
func TestControllerInjectedFaults(t *testing.T) {
	for _, rate := range []float64{0.05, 0.15, 0.3} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			d := newCPU(t, vram.CPUOptions{MemoryBytes: 48 * mib, Faults: vram.FaultOptions{Rate: rate, Seed: 7}})
			var buf bytes.Buffer
			c := vram.NewBatchController(vram.ControllerConfig{Threshold: 1}, d, zerolog.New(&buf))
			// A forward of one allocation per slice: the rate is the share
			// of slices that fail.
			one := forward{p2: 4 * kib}
			var total vram.RunStats
			for g := range 20 {
				n := 20000 + 1000*g
				seen := make([]atomic.Int32, n)
				st, err := c.Run(context.Background(), vram.Job{Genome: int64(g), Need: one.need(0)}, n,
					func(lo, hi int) error { return one.runSingle(d, lo, hi, seen) })
				if err != nil {
					t.Fatalf("genome %d lost: %v", g, err)
				}
				checkCoverage(t, seen)
				total.Shrinks += st.Shrinks
				total.OOMs += st.OOMs
				total.Slices += st.Slices
			}
			evs := parseLog(t, &buf)
			if count(evs, vram.EventBatchShrink) != total.Shrinks {
				t.Fatalf("%d shrinks, %d batch_shrink lines", total.Shrinks, count(evs, vram.EventBatchShrink))
			}
			ds := d.Stats()
			if ds.InjectedOOMs == 0 || ds.Allocated != 0 {
				t.Fatalf("device stats %+v", ds)
			}
			t.Logf("rate %.2f: %d slices, %d OOMs (%d injected), %d shrinks", rate, total.Slices, total.OOMs, ds.InjectedOOMs, total.Shrinks)
		})
	}
}

// runSingle is a forward of one buffer of b × p2 bytes.
func (f forward) runSingle(d *vram.CPUDevice, lo, hi int, seen []atomic.Int32) error {
	b, err := d.Alloc(int64(hi-lo) * f.p2)
	if err != nil {
		return err
	}
	defer d.Free(b)
	d.Bytes(b)[0] = 1
	for i := lo; i < hi; i++ {
		seen[i].Add(1)
	}
	return nil
}

func TestControllerCancel(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 32 * mib})
	c := vram.NewBatchController(vram.ControllerConfig{Start: 10}, d, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	st, err := c.Run(ctx, vram.Job{}, 100, func(lo, hi int) error {
		done = hi
		if hi == 30 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || done != 30 || st.Slices != 3 {
		t.Fatalf("err %v, done %d, stats %+v", err, done, st)
	}
}

// TestControllerConcurrent: parallel forwards share one device and one
// controller; each genome's images are all done once, none is lost.
func TestControllerConcurrent(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 64 * mib})
	var buf syncBuffer
	c := vram.NewBatchController(vram.ControllerConfig{Start: 20000}, d, zerolog.New(&buf))
	var wg sync.WaitGroup
	var shrinks atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for g := range 5 {
				f := small
				if g%2 == 1 {
					f = forward{ws: 256 * kib, p1: 12 * kib, p2: 8 * kib, p3: 12 * kib}
				}
				n := 30000
				seen := make([]atomic.Int32, n)
				st, err := c.Run(context.Background(), vram.Job{Genome: int64(10*w + g), Need: f.need(0)}, n,
					func(lo, hi int) error { return f.run(d, lo, hi, seen) })
				if err != nil {
					t.Errorf("genome %d: %v", 10*w+g, err)
					return
				}
				checkCoverage(t, seen)
				shrinks.Add(int64(st.Shrinks))
			}
		})
	}
	wg.Wait()
	if got := count(parseLog(t, &buf.Buffer), vram.EventBatchShrink); int64(got) != shrinks.Load() {
		t.Fatalf("%d shrinks, %d lines", shrinks.Load(), got)
	}
	if st := d.Stats(); st.Allocated != 0 {
		t.Fatalf("%d bytes left allocated", st.Allocated)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func TestControllerConfigValidate(t *testing.T) {
	tests := []struct {
		cfg vram.ControllerConfig
		ok  bool
	}{
		{vram.ControllerConfig{}, true},
		{vram.ControllerConfig{Start: 1, Threshold: 1, Min: 1}, true},
		{vram.ControllerConfig{Start: -5}, false},
		{vram.ControllerConfig{Threshold: -0.1}, false},
		{vram.ControllerConfig{Start: 10, Min: 11}, false},
		{vram.ControllerConfig{Settle: 2}, false},
		{vram.ControllerConfig{MinAttempts: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: %v", tt.cfg, err)
		}
	}
	c := vram.NewBatchController(vram.ControllerConfig{}, nil, zerolog.Nop()).Config()
	if c.Start != 45000 || c.Threshold != 0.8 || c.Min != 1 {
		t.Errorf("defaults %+v", c)
	}
}
