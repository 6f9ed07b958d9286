package tfevents_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/neateval/neateval/tfevents"
)

// FuzzRead feeds Read arbitrary bytes: it never panics; what it accepts,
// less the tail, reads back to the same events with no tail.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	w, err := tfevents.Create(dir, tfevents.Options{Now: fixedClock(), Hostname: "fuzz", NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	w.Generation(wantGen)
	w.Scalar("x", 1, 2)
	w.Close()
	full, err := os.ReadFile(w.Path())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add(full[:len(full)-3])
	f.Add(full[:20])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := tfevents.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if l.Tail < 0 || l.Tail > len(data) {
			t.Fatalf("Tail %d of %d bytes", l.Tail, len(data))
		}
		again, err := tfevents.Read(bytes.NewReader(data[:len(data)-l.Tail]))
		if err != nil || again.Tail != 0 || len(again.Events) != len(l.Events) {
			t.Fatalf("without its tail: %v, tail %d, %d events; want no error, tail 0, %d events", err, again.Tail, len(again.Events), len(l.Events))
		}
	})
}
