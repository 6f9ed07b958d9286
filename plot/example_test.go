package plot_test

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/neateval/neateval/plot"
)

func ExampleFitnessCurve() {
	gens := []plot.Generation{
		{Gen: 0, Best: 0.22, Mean: 0.10, Species: 1},
		{Gen: 1, Best: 0.27, Mean: 0.13, Species: 4},
		{Gen: 2, Best: 0.31, Mean: 0.15, Species: 3},
	}
	var b bytes.Buffer
	if err := plot.FitnessCurve(&b, gens, "Three generations"); err != nil {
		fmt.Println(err)
		return
	}
	cfg, _ := png.DecodeConfig(&b)
	fmt.Println(cfg.Width, "pixels wide")
	// Output: 800 pixels wide
}

func ExampleReadTimeline() {
	_, err := plot.ReadTimeline("testdata/results.jsonl") // not a log
	fmt.Println(err)
	// Output: testdata/results.jsonl:1: a log line without "time" or "event"
}
