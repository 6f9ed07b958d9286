package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neateval/neateval/ortrun"
)

// TestBenchORT runs onnxruntime for real beside neateval on a tiny
// synthetic set, where node and onnxruntime-node are installed
// (scripts/ort-deps.sh): the cross-check agrees and the table has its row.
func TestBenchORT(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node and onnxruntime")
	}
	dir, err := findBenchDir("")
	if err != nil {
		t.Skip(err)
	}
	if _, err := ortrun.Find(context.Background(), dir); errors.Is(err, ortrun.ErrUnavailable) {
		t.Skip(err)
	}
	var stdout, stderr bytes.Buffer
	res, err := Run(context.Background(), Options{Preset: "small", Dataset: "synthetic", Images: 64, Size: 3, Seed: 1, Batch: 32,
		Torch: "off", Ceiling: "off", ORT: "auto", Repeat: 1, Parallel: 1}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	res.WriteTable(&stdout)
	rep := filepath.Join(t.TempDir(), "r.json")
	if err := res.WriteJSON(rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "fitness small: ok: 3 of 3 genomes agree with onnxruntime") ||
		!strings.Contains(stdout.String(), "onnxruntime ") {
		t.Errorf("table:\n%s", stdout.String())
	}
	var r Report
	b, _ := os.ReadFile(rep)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	p := r.Populations[0]
	if p.ONNXRuntime == nil || p.ONNXRuntime.ImagesGenomes != 3*64 || p.ORTCheck == nil || !p.ORTCheck.OK {
		t.Errorf("onnxruntime results %+v, check %+v", p.ONNXRuntime, p.ORTCheck)
	}
}

func TestBenchORTOff(t *testing.T) {
	b := newBenchORT(context.Background(), "off", "", 2, 0, t.TempDir(), &bytes.Buffer{})
	if b.on() || b.note != "onnxruntime not run (--ort off)" {
		t.Errorf("--ort off: on %v, note %q", b.on(), b.note)
	}
	b = newBenchORT(context.Background(), "auto", "/nonexistent", 2, 0, t.TempDir(), &bytes.Buffer{})
	if b.on() || !strings.Contains(b.note, "no bench/ folder") {
		t.Errorf("no bench dir: on %v, note %q", b.on(), b.note)
	}
}
