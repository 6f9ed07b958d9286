package tfevents_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/tfevents"
)

// wantGen is the generation every writing test writes.
var wantGen = tfevents.Generation{Gen: 7, Best: 0.9375, Mean: 0.5, Median: 0.625, Species: 3,
	BestParams: 12345, BestFLOPs: 987654, Evaluated: 40, Failed: 2}

func writeSample(t *testing.T, dir string) string {
	t.Helper()
	w := create(t, dir)
	if err := w.Generation(wantGen); err != nil {
		t.Fatal(err)
	}
	if err := w.Scalar("custom/neg", -3, -1.25); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{45000, 113, 64} {
		if err := w.BatchSize(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(tfevents.Run{Step: 1, ImagesGenomesPerS: 38896, PeakPredictedBytes: 1 << 30, PeakAllocatedBytes: 3 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Path()
}

func TestFileName(t *testing.T) {
	dir := t.TempDir()
	a, b := create(t, dir), create(t, dir)
	defer a.Close()
	defer b.Close()
	if got, want := filepath.Base(a.Path()), "events.out.tfevents.1700000001.testhost"; got != want {
		t.Errorf("first file %q, want %q", got, want)
	}
	if got, want := filepath.Base(b.Path()), "events.out.tfevents.1700000001.testhost.1"; got != want {
		t.Errorf("second file in the same second %q, want %q", got, want)
	}
}

// checkSample checks the scalars of writeSample as any reader returns them.
func checkSample(t *testing.T, get func(tag string) (step int64, v float64, n int)) {
	t.Helper()
	for _, c := range []struct {
		tag  string
		step int64
		v    float64
	}{
		{tfevents.TagBestFitness, 7, 0.9375}, {tfevents.TagMeanFitness, 7, 0.5},
		{tfevents.TagMedianFitness, 7, 0.625}, {tfevents.TagSpecies, 7, 3},
		{tfevents.TagBestParams, 7, 12345}, {tfevents.TagBestFLOPs, 7, 987654},
		{tfevents.TagEvaluated, 7, 40}, {tfevents.TagFailed, 7, 2},
		{"custom/neg", -3, -1.25}, {tfevents.TagThroughput, 1, 38896},
		{tfevents.TagPeakPredictedBytes, 1, 1 << 30}, {tfevents.TagPeakAllocatedBytes, 1, 3 << 20},
	} {
		step, v, n := get(c.tag)
		if n != 1 || step != c.step || v != c.v {
			t.Errorf("%s: %d values, last step %d value %g; want 1 at step %d value %g", c.tag, n, step, v, c.step, c.v)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	l := readFile(t, writeSample(t, t.TempDir()))
	if l.Tail != 0 {
		t.Errorf("Tail = %d after Close, want 0", l.Tail)
	}
	if len(l.Events) == 0 || l.Events[0].FileVersion != tfevents.FileVersion || l.Events[0].WallTime != 1700000001.25 {
		t.Fatalf("first event %+v, want file_version %q at 1700000001.25", l.Events, tfevents.FileVersion)
	}
	checkSample(t, func(tag string) (int64, float64, int) {
		ps := l.Scalars(tag)
		if len(ps) == 0 {
			return 0, math.NaN(), 0
		}
		return ps[len(ps)-1].Step, float64(ps[len(ps)-1].Value), len(ps)
	})
	bs := l.Scalars(tfevents.TagBatchSize)
	if len(bs) != 3 || bs[0].Step != 0 || bs[2].Step != 2 || bs[1].Value != 113 {
		t.Errorf("batch sizes %+v, want 45000, 113, 64 at steps 0, 1, 2", bs)
	}
}

// TestPythonReader reads the file with testdata/read_events.py, a reader
// written from the format (its own CRC32C table and protobuf decoder), not
// from this package.
func TestPythonReader(t *testing.T) {
	path := writeSample(t, t.TempDir())
	l := pyRead(t, path)[0]
	if l.Tail != 0 || len(l.Events) != 7 {
		t.Fatalf("python read %d events, tail %d; want 7, 0", len(l.Events), l.Tail)
	}
	if e := l.Events[0]; e.FileVersion != "brain.Event:2" || e.WallTime != 1700000001.25 || len(e.Values) != 0 {
		t.Errorf("first event %+v, want file_version brain.Event:2 at 1700000001.25", e)
	}
	checkSample(t, func(tag string) (step int64, v float64, n int) {
		for _, e := range l.Events {
			for _, val := range e.Values {
				if val.Tag == tag {
					step, v, n = e.Step, val.Value, n+1
				}
			}
		}
		return step, v, n
	})
}

// TestTruncated cuts the file at every byte of its last record: both
// readers return every record before it, and the cut part as the tail.
func TestTruncated(t *testing.T) {
	dir := t.TempDir()
	full, err := os.ReadFile(writeSample(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	whole := readFile(t, filepath.Join(dir, "events.out.tfevents.1700000001.testhost"))
	// The last record starts where the file without it ends.
	w := create(t, filepath.Join(dir, "short"))
	w.Generation(wantGen)
	w.Scalar("custom/neg", -3, -1.25)
	for _, b := range []int{45000, 113, 64} {
		w.BatchSize(b)
	}
	w.Close()
	prefix, _ := os.ReadFile(w.Path())
	if !bytes.HasPrefix(full, prefix) {
		t.Fatal("a writer's output is not deterministic")
	}
	start := len(prefix)
	cutDir := filepath.Join(dir, "cuts")
	os.Mkdir(cutDir, 0o755)
	var files []string
	for cut := start; cut < len(full); cut++ {
		l, err := tfevents.Read(bytes.NewReader(full[:cut]))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(l.Events) != len(whole.Events)-1 || l.Tail != cut-start {
			t.Fatalf("cut at %d: %d events, tail %d; want %d, %d", cut, len(l.Events), l.Tail, len(whole.Events)-1, cut-start)
		}
		f := filepath.Join(cutDir, fmt.Sprintf("cut%06d", cut))
		mustWrite(t, f, full[:cut])
		files = append(files, f)
	}
	for i, l := range pyRead(t, files...) {
		if len(l.Events) != len(whole.Events)-1 || l.Tail != i {
			t.Fatalf("python, cut at %d: %d events, tail %d; want %d, %d", start+i, len(l.Events), l.Tail, len(whole.Events)-1, i)
		}
	}
}

func TestCorrupt(t *testing.T) {
	full, err := os.ReadFile(writeSample(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{3, 9, 20, len(full) - 2} {
		b := bytes.Clone(full)
		b[off] ^= 0x40
		_, err := tfevents.Read(bytes.NewReader(b))
		if !errors.Is(err, tfevents.ErrCorrupt) || !strings.Contains(err.Error(), "record at byte") {
			t.Errorf("flipped byte %d: error %v, want ErrCorrupt naming the record's offset", off, err)
		}
	}
}

func TestWriteAfterClose(t *testing.T) {
	w := create(t, t.TempDir())
	w.Close()
	if err := w.Scalar("x", 1, 1); err == nil {
		t.Error("Scalar after Close: no error")
	}
}

func TestFitnessStats(t *testing.T) {
	for _, c := range []struct {
		in                 []float64
		best, mean, median float64
	}{
		{[]float64{0.5, math.NaN(), 0.1, 0.3}, 0.5, 0.3, 0.3},
		{[]float64{4, 1, 3, 2}, 4, 2.5, 2.5},
		{[]float64{7}, 7, 7, 7},
	} {
		b, m, med := tfevents.FitnessStats(c.in)
		if math.Abs(b-c.best) > 1e-12 || math.Abs(m-c.mean) > 1e-12 || math.Abs(med-c.median) > 1e-12 {
			t.Errorf("FitnessStats(%v) = %g, %g, %g; want %g, %g, %g", c.in, b, m, med, c.best, c.mean, c.median)
		}
	}
	if b, _, _ := tfevents.FitnessStats([]float64{math.NaN()}); !math.IsNaN(b) {
		t.Errorf("nothing scored: best %g, want NaN", b)
	}
}
