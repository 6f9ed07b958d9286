package run

import (
	"bytes"
	"testing"
	"time"

	"github.com/neateval/neateval/results"
)

func TestSummarize(t *testing.T) {
	rs := testResults() // fitness 0.5, 0.75, error, 0.125
	rs = append(rs, results.Result{GenomeID: 14, Index: 4, Fitness: f64(0.75), Accuracy: f64(0.75), Loss: f64(0.5), Images: 10000})
	s := Summarize(rs, map[int]results.Result{0: rs[0]}, 2*time.Second)
	if s.Genomes != 5 || s.Failed != 1 || s.Images != 30000 {
		t.Errorf("counts %+v", s)
	}
	// The best is the first of the tied best in population order.
	if !s.HaveFitness || s.BestFitness != 0.75 || s.BestGenomeID != 11 || s.MeanFitness != (0.5+0.75+0.125+0.75)/4 {
		t.Errorf("fitness %+v", s)
	}
	if s.Rate() != 15000 {
		t.Errorf("rate %v", s.Rate())
	}
	var buf bytes.Buffer
	l := NewLogger("json", "info", &buf)
	s.log(&l)
	objs := jsonLines(t, buf.String())
	checkSchema(t, objs)
	m := objs[0]
	if m[KeyEvent] != EventRunSummary || m[KeyGenomes] != 5.0 || m[KeyFailed] != 1.0 || m[KeyImagesGenomesPerS] != 15000.0 ||
		m[KeyBestFitness] != 0.75 || m[KeyBestGenome] != 11.0 || m[KeySeconds] != 2.0 {
		t.Errorf("run_summary %v", m)
	}

	// All failed: no fitness fields.
	none := Summarize(testResults()[2:3], nil, 0)
	buf.Reset()
	none.log(&l)
	m = jsonLines(t, buf.String())[0]
	if _, ok := m[KeyBestFitness]; ok || none.Rate() != 0 {
		t.Errorf("all failed: %v", m)
	}
}

func f64(x float64) *float64 { return &x }
func str(s string) *string   { return &s }

// testResults are four genomes' results; genome 12 is invalid.
func testResults() []results.Result {
	return []results.Result{
		{GenomeID: 10, Index: 0, Fitness: f64(0.5), Accuracy: f64(0.5), Loss: f64(1.25), Images: 10000, Params: 100, FLOPs: 2000, Seconds: 0.5},
		{GenomeID: 11, Index: 1, Fitness: f64(0.75), Accuracy: f64(0.75), Loss: f64(0.5), Images: 10000},
		{GenomeID: 12, Index: 2, Images: 0, Error: str("genome 12, node 4: conv2d weight shape [8 1 3 3], want [8 2 3 3]")},
		{GenomeID: 13, Index: 3, Fitness: f64(0.125), Accuracy: f64(0.125), Loss: f64(2.5), Images: 10000},
	}
}
