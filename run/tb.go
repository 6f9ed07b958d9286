package run

import (
	"fmt"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/tfevents"
)

// tracker writes a run's scalars to a TensorBoard event file
// (output.tb_logdir); a nil tracker writes nothing.
type tracker struct{ w *tfevents.Writer }

// openTracker opens the event file output.tb_logdir asks for, or returns a
// nil tracker.
func openTracker(cfg *config.Config) (*tracker, error) {
	if cfg.Output.TBLogdir == "" {
		return nil, nil
	}
	w, err := tfevents.Create(cfg.Output.TBLogdir, tfevents.Options{})
	if err != nil {
		return nil, fmt.Errorf("output.tb_logdir: %w", err)
	}
	return &tracker{w: w}, nil
}

// batchChanged records a change of the evaluation batch size.
func (t *tracker) batchChanged(old, next int, reason string) {
	if t != nil {
		t.w.BatchSize(next) // an error stays in the writer, for close
	}
}

// onBatch is the evaluator's OnBatchChange hook, nil without a tracker.
func (t *tracker) onBatch() func(old, next int, reason string) {
	if t == nil {
		return nil
	}
	return t.batchChanged
}

func (t *tracker) run(r tfevents.Run) error {
	if t == nil {
		return nil
	}
	return t.w.Run(r)
}

func (t *tracker) generation(g tfevents.Generation) error {
	if t == nil {
		return nil
	}
	return t.w.Generation(g)
}

// close closes the event file; its error is the first the file had.
func (t *tracker) close() error {
	if t == nil {
		return nil
	}
	return t.w.Close()
}
