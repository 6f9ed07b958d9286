package vram_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/neateval/neateval/vram"
)

// forward stands in for a CNN forward: it allocates its activations from
// the device the way an evaluator does (a workspace, then three activation
// buffers, one freed before the last is made), touches them, and frees
// everything, also when an allocation fails. Its peak is ws + b × max(p1+p2,
// p2+p3) in three live blocks, which is what need says.
type forward struct {
	ws         int64
	p1, p2, p3 int64
}

func (f forward) need(model int64) vram.Need {
	return vram.Need{Model: model, ActPerImage: max(f.p1+f.p2, f.p2+f.p3), ActFixed: f.ws, Buffers: 3}
}

// run does images [lo, hi), counting each in seen (when not nil).
func (f forward) run(d *vram.CPUDevice, lo, hi int, seen []atomic.Int32) (err error) {
	n := int64(hi - lo)
	var held []*vram.Block
	defer func() {
		for _, b := range held {
			if b != nil {
				d.Free(b)
			}
		}
	}()
	alloc := func(size int64) int {
		if err != nil {
			return -1
		}
		var b *vram.Block
		if b, err = d.Alloc(size); err != nil {
			return -1
		}
		held = append(held, b)
		return len(held) - 1
	}
	alloc(f.ws)
	x := alloc(n * f.p1)
	y := alloc(n * f.p2)
	if err != nil {
		return err
	}
	d.Free(held[x])
	held[x] = nil
	z := alloc(n * f.p3)
	if err != nil {
		return err
	}
	out, in := d.Bytes(held[z]), d.Bytes(held[y])
	out[0], out[len(out)-1] = in[0], in[len(in)-1]
	for i := lo; i < hi && seen != nil; i++ {
		seen[i].Add(1)
	}
	return nil
}

// feasible is the largest batch in [1, limit] whose forward fits on d in a
// steady state: three forwards in a row from an empty cache, each after the
// cache the one before left, as the controller runs them (and each keeps the
// peak reserved memory within threshold × total when threshold < 1); 0 if
// none. The steady state can hold less than an empty cache: a cached
// segment reused for a smaller buffer pins it, as in PyTorch.
func feasible(t testing.TB, d *vram.CPUDevice, f forward, limit int, threshold float64) int {
	t.Helper()
	fits := func(b int) bool {
		d.EmptyCache()
		for range 3 {
			d.ResetPeak()
			err := f.run(d, 0, b, nil)
			if err != nil && !errors.Is(err, vram.ErrOutOfMemory) {
				t.Fatal(err)
			}
			st := d.Stats()
			if err != nil || (threshold < 1 && float64(st.PeakReserved) > threshold*float64(st.Total)) {
				return false
			}
		}
		return true
	}
	lo, hi := 0, limit+1 // fits(lo), !fits(hi)
	if fits(limit) {
		return limit
	}
	hi = limit
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	d.EmptyCache()
	return lo
}

// logEvent is a controller log line.
type logEvent struct {
	Event     string `json:"event"`
	Genome    int64  `json:"genome"`
	OldBatch  int    `json:"old_batch"`
	NewBatch  int    `json:"new_batch"`
	Requested int64  `json:"bytes_requested"`
	Free      int64  `json:"bytes_free"`
	Reason    string `json:"reason"`
}

func parseLog(t testing.TB, buf *bytes.Buffer) []logEvent {
	t.Helper()
	var evs []logEvent
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e logEvent
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

func count(evs []logEvent, event string) int {
	n := 0
	for _, e := range evs {
		if e.Event == event {
			n++
		}
	}
	return n
}

// checkCoverage fails unless every image was done exactly once.
func checkCoverage(t testing.TB, seen []atomic.Int32) {
	t.Helper()
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("image %d done %d times", i, c)
		}
	}
}

func ceilLog2(x float64) int {
	n := 0
	for v := 1.0; v < x; v *= 2 {
		n++
	}
	return n
}
