package tfevents_test

import (
	"fmt"
	"os"
	"time"

	"github.com/neateval/neateval/tfevents"
)

func Example() {
	dir, _ := os.MkdirTemp("", "tb")
	defer os.RemoveAll(dir)

	w, err := tfevents.Create(dir, tfevents.Options{Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for gen, best := range []float64{0.25, 0.5, 0.75} {
		w.Scalar(tfevents.TagBestFitness, int64(gen), best)
	}
	w.Close()

	log, err := tfevents.ReadFile(w.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(log.Events[0].FileVersion)
	for _, p := range log.Scalars(tfevents.TagBestFitness) {
		fmt.Println(p.Step, p.Value)
	}
	// Output:
	// brain.Event:2
	// 0 0.25
	// 1 0.5
	// 2 0.75
}
