package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/run"
)

// A run scores a population into a results file; a run stopped part way
// (cancelled here, killed in real life) is resumed and ends with the same
// file as a run that never stopped.
func Example_resume() {
	dir, _ := os.MkdirTemp("", "neateval-example-")
	defer os.RemoveAll(dir)
	cfg := config.Default()
	cfg.Dataset.Kind, cfg.Dataset.SyntheticSize = "synthetic", 500
	cfg.Population.GenerateSize = 16
	cfg.VRAM.AdaptivePopulationVRAM = false    // staged in chunks,
	cfg.VRAM.PopulationGPUChunkBytes = 8 << 10 // a few genomes each
	cfg.Output.Results = filepath.Join(dir, "results.jsonl")
	cfg.Eval.FitnessEvalParallel = 1 // one genome at a time: none in flight at the stop

	// Stop after 8 genomes, as a killed run would.
	ctx, stop := context.WithCancel(context.Background())
	_, err := run.Run(ctx, run.Spec{Config: cfg, Progress: &stopAfter{n: 8, stop: stop}})
	fmt.Println("interrupted:", errors.Is(err, context.Canceled))
	kept, _ := os.ReadFile(cfg.Output.Results)
	fmt.Println("results kept:", strings.Count(string(kept), "\n"))

	// Resume: only the genomes missing from the file are scored.
	s, err := run.Run(context.Background(), run.Spec{Config: cfg, Resume: true})
	fmt.Println(s.Genomes, "genomes, error:", err)
	resumed := withoutSeconds(cfg.Output.Results)

	cfg.Output.Results = filepath.Join(dir, "whole.jsonl")
	run.Run(context.Background(), run.Spec{Config: cfg})
	fmt.Println("same results:", resumed == withoutSeconds(cfg.Output.Results))
	// Output:
	// interrupted: true
	// results kept: 8
	// 16 genomes, error: <nil>
	// same results: true
}

// stopAfter is a run.Progress that cancels the run after n genomes.
type stopAfter struct {
	n    int
	stop context.CancelFunc
}

func (p *stopAfter) Start(total, done int) {}

func (p *stopAfter) Add(genomes int, images int64) {
	if p.n -= genomes; p.n <= 0 {
		p.stop()
	}
}

// withoutSeconds is a results file without its wall times.
func withoutSeconds(path string) string {
	data, _ := os.ReadFile(path)
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.Index(l, `,"seconds":`); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
