package main

import (
	"bytes"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	rs := testResults() // fitness 0.5, 0.75, error, 0.125
	rs = append(rs, Result{GenomeID: 14, Index: 4, Fitness: f64(0.75), Accuracy: f64(0.75), Loss: f64(0.5), Images: 10000})
	s := summarize(rs, map[int]Result{0: rs[0]}, 2*time.Second)
	if s.Genomes != 5 || s.Failed != 1 || s.Images != 30000 {
		t.Errorf("counts %+v", s)
	}
	// The best is the first of the tied best in population order.
	if !s.HaveFitness || s.BestFitness != 0.75 || s.BestGenomeID != 11 || s.MeanFitness != (0.5+0.75+0.125+0.75)/4 {
		t.Errorf("fitness %+v", s)
	}
	if s.rate() != 15000 {
		t.Errorf("rate %v", s.rate())
	}
	var buf bytes.Buffer
	l := newLogger("json", "info", &buf)
	s.log(&l)
	objs := jsonLines(t, buf.String())
	checkSchema(t, objs)
	m := objs[0]
	if m[KeyEvent] != EvRunSummary || m[KeyGenomes] != 5.0 || m[KeyFailed] != 1.0 || m[KeyImagesGenomesPerS] != 15000.0 ||
		m[KeyBestFitness] != 0.75 || m[KeyBestGenome] != 11.0 || m[KeySeconds] != 2.0 {
		t.Errorf("run_summary %v", m)
	}

	// All failed: no fitness fields.
	none := summarize(testResults()[2:3], nil, 0)
	buf.Reset()
	none.log(&l)
	m = jsonLines(t, buf.String())[0]
	if _, ok := m[KeyBestFitness]; ok || none.rate() != 0 {
		t.Errorf("all failed: %v", m)
	}
}
