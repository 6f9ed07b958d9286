package onnxexport_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/onnxexport"
)

// envFull, set to 1, runs the full checks: 160 small and 24 wide generated
// genomes besides the edge cases, logits on 256 images (64 for the wide
// preset, whose float64 reference takes seconds per genome). By default the
// tests take seconds: 12 small, 2 wide, logits on 64 images; with -short,
// 4 small, 1 wide, logits on 16 images (4 wide).
const envFull = "NEATEVAL_ONNX_FULL"

// testSet is the genomes a test checks, and how many images the float64
// reference computes logits for.
type testSet struct {
	name     string
	genomes  []*neat.Genome
	refSmall int // images for small-preset and edge-case genomes
	refWide  int // images for wide-preset genomes
}

func testSets(t testing.TB) []testSet {
	if os.Getenv(envFull) == "1" {
		return []testSet{
			{"small", generated(1, 160, 0), 256, 0},
			{"wide", generated(1, 0, 24), 0, 64},
			{"edge", edgeCases(t), 256, 0},
		}
	}
	if testing.Short() {
		return []testSet{
			{"generated", generated(1, 4, 1), 16, 4},
			{"edge", edgeCases(t), 16, 0},
		}
	}
	return []testSet{
		{"generated", generated(1, 12, 2), 64, 16},
		{"edge", edgeCases(t), 64, 0},
	}
}

// onnxPython is a Python that can import onnx (Debian: python3-onnx), from
// $NEATEVAL_PYTHON or /usr/bin/python3; the test skips without one.
func onnxPython(t *testing.T) string {
	py := os.Getenv("NEATEVAL_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if out, err := exec.Command(py, "-c", "import onnx").CombinedOutput(); err != nil {
		t.Skipf("python3-onnx is not installed (%s -c 'import onnx': %s); apt-get install python3-onnx", py, lastLine(out, err))
	}
	return py
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// writeSet exports the genomes of s into a fresh folder and returns it; every
// genome must export.
func writeSet(t *testing.T, s testSet) (string, *onnxexport.Manifest) {
	t.Helper()
	dir := t.TempDir()
	pop := &neat.Population{Input: mnist, NumClasses: classes, Genomes: s.genomes}
	m, err := onnxexport.WritePopulation(dir, pop, onnxexport.Options{ProducerVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Genomes {
		if e.Error != nil {
			t.Fatalf("genome %d not exported: %s", e.GenomeID, *e.Error)
		}
	}
	return dir, m
}

// TestChecker runs the onnx package's checker (full check, strict shape
// inference) on every model, and checks the names and shapes of the graph's
// input and output and that every node's output gets a shape.
func TestChecker(t *testing.T) {
	py := onnxPython(t)
	for _, s := range testSets(t) {
		t.Run(s.name, func(t *testing.T) {
			dir, m := writeSet(t, s)
			args := []string{filepath.Join("testdata", "check_models.py"), strconv.Itoa(classes)}
			for _, e := range m.Genomes {
				args = append(args, filepath.Join(dir, e.File))
			}
			out, err := exec.Command(py, args...).CombinedOutput()
			ok := 0
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				switch l := sc.Text(); {
				case strings.HasPrefix(l, "ok "):
					ok++
				default:
					t.Error(l)
				}
			}
			if ok != len(m.Genomes) || err != nil {
				t.Errorf("%d of %d models pass the checker (%v)", ok, len(m.Genomes), err)
			}
			t.Logf("%d models pass onnx.checker (full check) and strict shape inference", ok)
		})
	}
}
