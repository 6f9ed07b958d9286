package vram_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/neateval/neateval/vram"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

func newCPU(t testing.TB, opts vram.CPUOptions) *vram.CPUDevice {
	t.Helper()
	d, err := vram.NewCPUDevice(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

func TestCPUArenaRunsOut(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 8 * mib})
	var held []*vram.Block
	var err error
	for range 100 {
		var b *vram.Block
		if b, err = d.Alloc(1536 * kib); err != nil {
			break
		}
		held = append(held, b)
	}
	// 1.5 MiB requests take 2 MiB segments on a device this small (no shared
	// 20 MiB segments): four fit in 8 MiB.
	if len(held) != 4 {
		t.Fatalf("%d allocations of 1.5 MiB fit in 8 MiB, want 4", len(held))
	}
	var oe *vram.OOMError
	if !errors.Is(err, vram.ErrOutOfMemory) || !errors.As(err, &oe) {
		t.Fatalf("got %v, want an *OOMError", err)
	}
	if oe.Device != "cpu" || oe.Requested != 1536*kib || oe.Free != 0 || oe.Total != 8*mib ||
		oe.Allocated != 4*1536*kib || oe.Cached != 4*512*kib || oe.Injected {
		t.Fatalf("error fields %+v", oe)
	}
	if msg := err.Error(); !strings.Contains(msg, "1.50 MiB") || !strings.Contains(msg, "8.00 MiB") {
		t.Errorf("message %q", msg)
	}
	st := d.Stats()
	if st.OOMs != 1 || st.Total != 8*mib || st.Reserved != 8*mib || st.Allocs != 4 {
		t.Fatalf("stats %+v", st)
	}
	// The cached tails are in the large pool: a small request needs a 2 MiB
	// segment of its own, and the arena has none left.
	if _, err := d.Alloc(100); !errors.Is(err, vram.ErrOutOfMemory) {
		t.Fatalf("small request on a full arena: %v", err)
	}
	// Freeing one block and emptying the cache makes room again.
	d.Free(held[0])
	d.EmptyCache()
	if total, free := d.MemInfo(); total != 8*mib || free != 2*mib {
		t.Fatalf("MemInfo %d/%d", free, total)
	}
	b, err := d.Alloc(100)
	if err != nil {
		t.Fatal(err)
	}
	held[0] = b
	for _, b := range held {
		d.Free(b)
	}
}

func TestCPUViews(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 32 * mib})
	f, err := d.Alloc(1000 * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(f)
	u, err := d.Alloc(10)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(u)
	fs := d.Float32s(f)
	if len(fs) != 1000 {
		t.Fatalf("len %d", len(fs))
	}
	for i := range fs {
		fs[i] = float32(i) / 2
	}
	// The views alias the same memory.
	raw := d.Bytes(f)
	out := make([]byte, 4)
	if err := d.CopyOut(out, f, 4*999); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 4000 || string(out) != string(raw[4*999:]) {
		t.Fatal("Bytes and CopyOut disagree")
	}
	if got := d.Float32s(f)[999]; got != 499.5 {
		t.Fatalf("read back %v", got)
	}
	us := d.Uint16s(u)
	if len(us) != 5 {
		t.Fatalf("len %d", len(us))
	}
	us[4] = 0xbeef
	if err := d.CopyIn(u, 0, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if us[0] != 0x0201 || us[4] != 0xbeef {
		t.Fatalf("uint16 view %x", us)
	}
	// The other block is untouched.
	if fs[0] != 0 || fs[1] != 0.5 {
		t.Fatal("writes crossed blocks")
	}
}

func TestCPUCopyBounds(t *testing.T) {
	d := newCPU(t, vram.CPUOptions{MemoryBytes: 8 * mib})
	b, err := d.Alloc(100)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		off  int64
		n    int
		ok   bool
	}{
		{"whole block", 0, 100, true},
		{"tail", 99, 1, true},
		{"empty at end", 100, 0, true},
		{"one past the end", 1, 100, false},
		{"offset past the end", 101, 0, false},
		{"negative offset", -1, 1, false},
		{"the rounding is not the caller's", 0, 101, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, tt.n)
			errIn := d.CopyIn(b, tt.off, buf)
			errOut := d.CopyOut(buf, b, tt.off)
			if (errIn == nil) != tt.ok || (errOut == nil) != tt.ok {
				t.Fatalf("CopyIn: %v, CopyOut: %v; want ok=%v", errIn, errOut, tt.ok)
			}
		})
	}
	d.Free(b)
	if err := d.CopyIn(b, 0, []byte{1}); err == nil {
		t.Fatal("CopyIn into a freed block succeeded")
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.HasPrefix(p.(string), "vram: ") {
				t.Fatalf("view of a freed block: panic %v", p)
			}
		}()
		d.Bytes(b)
	}()
}

func TestCPUOptions(t *testing.T) {
	if _, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: -1}); err == nil {
		t.Error("negative memory accepted")
	}
	if _, err := vram.NewCPUDevice(vram.CPUOptions{MemoryBytes: mib, Faults: vram.FaultOptions{Rate: 2}}); err == nil {
		t.Error("fault rate 2 accepted")
	}
	if def := vram.DefaultCPUMemory(); def < 256*mib {
		t.Errorf("default memory %d", def)
	}
	d, err := vram.NewCPUDevice(vram.CPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if total, _ := d.MemInfo(); total != vram.DefaultCPUMemory() {
		t.Errorf("default device has %d bytes", total)
	}
	b, err := d.Alloc(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err == nil || !strings.Contains(err.Error(), "1 live block") {
		t.Errorf("Close with a live block: %v", err)
	}
	_ = b
	if _, err := d.Alloc(1); !errors.Is(err, vram.ErrClosed) {
		t.Errorf("Alloc after Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestFaultInjection(t *testing.T) {
	const calls = 4000
	failures := func(opts vram.FaultOptions) []int64 {
		d := newCPU(t, vram.CPUOptions{MemoryBytes: 8 * mib, Faults: opts})
		var failed []int64
		for k := int64(1); k <= calls; k++ {
			b, err := d.Alloc(64)
			if err != nil {
				var oe *vram.OOMError
				if !errors.As(err, &oe) || !oe.Injected || !errors.Is(err, vram.ErrOutOfMemory) {
					t.Fatalf("call %d: %v", k, err)
				}
				failed = append(failed, k)
				continue
			}
			d.Free(b)
		}
		st := d.Stats()
		if st.OOMs != int64(len(failed)) || st.InjectedOOMs != st.OOMs {
			t.Fatalf("stats count %d OOMs (%d injected), saw %d", st.OOMs, st.InjectedOOMs, len(failed))
		}
		return failed
	}
	for _, rate := range []float64{0.05, 0.3} {
		opts := vram.FaultOptions{Rate: rate, Seed: 42}
		a, b := failures(opts), failures(opts)
		if !equal(a, b) {
			t.Fatalf("rate %v: same seed, different failures", rate)
		}
		if got := float64(len(a)) / calls; got < rate*0.85 || got > rate*1.15 {
			t.Errorf("rate %v: %d of %d calls failed (%.3f)", rate, len(a), calls, got)
		}
		for _, k := range a {
			if !opts.Injects(k) {
				t.Fatalf("call %d failed but Injects says no", k)
			}
		}
		if c := failures(vram.FaultOptions{Rate: rate, Seed: 43}); equal(a, c) {
			t.Errorf("rate %v: seeds 42 and 43 fail the same calls", rate)
		}
	}
	if got := failures(vram.FaultOptions{At: []int64{1, 7, 7, 4000}}); !equal(got, []int64{1, 7, 4000}) {
		t.Errorf("At: failed calls %v", got)
	}
	if got := failures(vram.FaultOptions{}); len(got) != 0 {
		t.Errorf("no faults asked, %d injected", len(got))
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFaultInjectionConcurrent: concurrent callers draw call numbers in some
// order, but the set of failing numbers, hence their count, is fixed.
func TestFaultInjectionConcurrent(t *testing.T) {
	opts := vram.FaultOptions{Rate: 0.3, Seed: 9}
	const per, workers = 500, 8
	want := 0
	for k := int64(1); k <= per*workers; k++ {
		if opts.Injects(k) {
			want++
		}
	}
	for range 3 {
		d := newCPU(t, vram.CPUOptions{MemoryBytes: 64 * mib, Faults: opts})
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range per {
					if b, err := d.Alloc(1000); err == nil {
						d.Free(b)
					}
				}
			})
		}
		wg.Wait()
		if st := d.Stats(); st.InjectedOOMs != int64(want) || st.OOMs != int64(want) {
			t.Fatalf("%d injected, want %d", st.InjectedOOMs, want)
		}
	}
}
