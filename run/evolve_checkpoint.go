package run

import (
	"fmt"
	"time"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
)

// checkpointer writes an evolution's checkpoints: after a generation
// once evolve.checkpoint_seconds have passed since the last one (0: after
// every generation), after the last generation, and when the run stops on
// an error or an interrupt. Each is taken at once (neat.Snapshot) and
// written in the background while the next generation is scored, one
// write at a time, in order: written in line, the files' syncs were a
// third of a default run's wall time on a loaded 2-core machine. A
// process killed meanwhile resumes from the last checkpoint written, to
// the same results; the generation lines' resume_at says which.
type checkpointer struct {
	evo   *neat.Evolution
	dir   string
	meta  string
	every time.Duration
	last  time.Time // when the last checkpoint was taken
	taken int       // the generation it resumes at; -1: none taken

	done    chan error // the write in flight; nil: none
	pending int        // the generation it resumes at
	written int        // the generation the last one written resumes at
	failed  bool       // a write failed: take no more
}

func newCheckpointer(evo *neat.Evolution, ec *config.Evolve, meta string) *checkpointer {
	return &checkpointer{evo: evo, dir: ec.CheckpointDir, meta: meta, every: time.Duration(ec.CheckpointSeconds * float64(time.Second)),
		last: time.Now(), taken: -1, written: evo.Generation()}
}

// generation checkpoints the generation just stepped when one is due.
func (c *checkpointer) generation() error {
	if c.every > 0 && time.Since(c.last) < c.every {
		return nil
	}
	return c.take()
}

// close, when the run returns err, checkpoints the state it stopped in
// (the last generation, or the one before a failed step, which a failed
// step leaves as it was) unless that is the last checkpoint taken, and
// waits for the writes. It returns err, or else the write's error.
func (c *checkpointer) close(err error) error {
	var werr error
	if c.taken != c.evo.Generation() && !c.failed {
		werr = c.take()
	}
	if e := c.wait(); werr == nil {
		werr = e
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("evolve: %w", werr)
	}
	return nil
}

// take snapshots the run and starts writing it once the write in flight
// is done.
func (c *checkpointer) take() error {
	snap, err := c.evo.Snapshot(c.dir, c.meta)
	if err != nil {
		return err
	}
	c.last, c.taken = time.Now(), c.evo.Generation()
	if err := c.wait(); err != nil {
		return err
	}
	done := make(chan error, 1)
	c.done, c.pending = done, c.taken
	go func() { done <- snap.Write() }()
	return nil
}

// wait waits for the write in flight, if any, and returns its error.
func (c *checkpointer) wait() error {
	if c.done == nil {
		return nil
	}
	err := <-c.done
	c.done = nil
	if err != nil {
		c.failed = true
		return err
	}
	c.written = c.pending
	return nil
}
