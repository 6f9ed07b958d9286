package tfevents_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/neateval/neateval/tfevents"
)

const childEnv = "TFEVENTS_TEST_CHILD_DIR"

// TestKilledMidway runs a writer in a child process (this test binary
// again), kills it with SIGKILL while it writes, and reads what it left
// with both readers: every whole record, in order, and no error.
func TestKilledMidway(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		writeForever(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledMidway$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	path := waitForEvents(t, dir, 50)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	l := readFile(t, path)
	if len(l.Events) < 50 || l.Events[0].FileVersion != tfevents.FileVersion {
		t.Fatalf("read %d events after the kill (first %+v), want ≥ 50 starting with the file version", len(l.Events), l.Events[0])
	}
	for i, e := range l.Events[1:] {
		if e.Step != int64(i) || len(e.Values) != 8 || e.Values[0].Scalar != float32(i) {
			t.Fatalf("event %d: step %d, %d values; want step %d, 8 values", i+1, e.Step, len(e.Values), i)
		}
	}
	py := pyRead(t, path)[0]
	if len(py.Events) != len(l.Events) || py.Tail != l.Tail {
		t.Errorf("python read %d events, tail %d; Go %d, tail %d", len(py.Events), py.Tail, len(l.Events), l.Tail)
	}
	t.Logf("killed after %d events, %d bytes of a record cut", len(l.Events), l.Tail)
}

// writeForever is the child: it writes generations until it is killed.
func writeForever(dir string) {
	w, err := tfevents.Create(dir, tfevents.Options{})
	if err != nil {
		os.Exit(2)
	}
	for i := 0; ; i++ {
		g := tfevents.Generation{Gen: i, Best: float64(i), Mean: 1, Median: 2, Species: 3, BestParams: 4, BestFLOPs: 5, Evaluated: 6, Failed: 7}
		if err := w.Generation(g); err != nil {
			os.Exit(3)
		}
	}
}

// waitForEvents waits until the one event file in dir holds n events and
// returns its path.
func waitForEvents(t *testing.T, dir string, n int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
		if len(files) == 1 {
			if l, err := tfevents.ReadFile(files[0]); err == nil && len(l.Events) >= n {
				return files[0]
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the child wrote no %d events in 30 s", n)
	return ""
}
