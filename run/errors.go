package run

import (
	"errors"
	"fmt"
)

// GenomeErrors is the error of a run that scored the whole population but
// gave some genomes an error result (a malformed genome, non-finite logits,
// a genome too large for the device). The results file holds every line.
type GenomeErrors struct {
	Failed, Total int
	Results       string // the results file
}

func (e *GenomeErrors) Error() string {
	return fmt.Sprintf("%d of %d genomes got an error result (see the \"error\" field in %s)", e.Failed, e.Total, e.Results)
}

// InterruptedError is the error of a run whose context was cancelled: what
// was scored is in the results file, which a resumed run continues. It
// matches the context's error (errors.Is(err, context.Canceled)).
type InterruptedError struct {
	Results string // the results file that keeps what was done
	Err     error  // the context's error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted; the results written so far are kept in %s", e.Results)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// EvolveInterruptedError is the error of an evolve run whose context was
// cancelled: the checkpoint resumes it at Generation. It matches the
// context's error.
type EvolveInterruptedError struct {
	Dir        string // the checkpoint folder
	Generation int    // the generation the checkpoint resumes at
	Err        error
}

func (e *EvolveInterruptedError) Error() string {
	return fmt.Sprintf("interrupted; the checkpoint in %s resumes at generation %d", e.Dir, e.Generation)
}

func (e *EvolveInterruptedError) Unwrap() error { return e.Err }

// ErrCheckpointExists is matched by the error of an evolve run, not asked
// to resume, whose checkpoint folder already holds a checkpoint.
var ErrCheckpointExists = errors.New("holds a checkpoint")

// CheckpointError is a checkpoint that an evolve run will not use: one
// already there for a new run (ErrCheckpointExists), or one made under
// another configuration (Diff says which keys differ).
type CheckpointError struct {
	Dir  string
	Diff string // "" for ErrCheckpointExists
}

func (e *CheckpointError) Error() string {
	if e.Diff == "" {
		return fmt.Sprintf("evolve: %s %s", e.Dir, ErrCheckpointExists)
	}
	return fmt.Sprintf("%s: the checkpoint was made under another configuration: %s", e.Dir, e.Diff)
}

func (e *CheckpointError) Is(target error) bool { return target == ErrCheckpointExists && e.Diff == "" }
