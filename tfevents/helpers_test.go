package tfevents_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/neateval/neateval/tfevents"
)

// fixedClock returns a clock that starts at a fixed time and ticks one
// second per call.
func fixedClock() func() time.Time {
	t := time.Unix(1_700_000_000, 250_000_000)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func create(t *testing.T, dir string) *tfevents.Writer {
	t.Helper()
	w, err := tfevents.Create(dir, tfevents.Options{Now: fixedClock(), Hostname: "testhost", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// pyEvent is an event as testdata/read_events.py prints it.
type pyEvent struct {
	WallTime    float64 `json:"wall_time"`
	Step        int64   `json:"step"`
	FileVersion string  `json:"file_version"`
	Values      []struct {
		Tag   string  `json:"tag"`
		Value float64 `json:"value"`
	} `json:"values"`
}

type pyLog struct {
	Events []pyEvent `json:"events"`
	Tail   int       `json:"tail"`
}

// pyRead reads files with the independent Python reader, skipping the test
// when python3 is absent.
func pyRead(t *testing.T, files ...string) []pyLog {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the independent reader of testdata/read_events.py is not run")
	}
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "read_events.py")}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read_events.py: %v\n%s", err, stderr.Bytes())
	}
	var logs []pyLog
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l pyLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("read_events.py output: %v: %q", err, sc.Bytes())
		}
		logs = append(logs, l)
	}
	if len(logs) != len(files) {
		t.Fatalf("read_events.py printed %d results for %d files", len(logs), len(files))
	}
	return logs
}

func readFile(t *testing.T, path string) *tfevents.Log {
	t.Helper()
	l, err := tfevents.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
