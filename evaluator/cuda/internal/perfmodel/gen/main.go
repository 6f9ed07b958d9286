// Command gen writes the GPU performance model's report
// (docs/gpu-performance-model.md, make perf-model) to stdout: the two
// populations scripts/gpu-prepare.sh generates, on an H200, at the full
// MNIST test set and at gpu-check.sh's images and batch.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/neateval/neateval/evaluator/cuda/internal/perfmodel"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	if err := perfmodel.Write(w); err != nil {
		fmt.Fprintln(os.Stderr, "perfmodel:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "perfmodel:", err)
		os.Exit(1)
	}
}
