package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

// Exit codes of neateval. This is the one place that maps errors to them;
// the usage text (usage.go) documents them for users.
const (
	exitOK          = 0   // the command did what was asked
	exitFailed      = 1   // the run failed (a broken population or dataset file, an I/O error, ...)
	exitUsage       = 2   // bad usage or a bad config: the message says what to change
	exitGenomeErrs  = 3   // the run completed, every genome has a result, but some results are errors
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; results written so far are kept (--resume continues)
)

// usageError is a mistake on the command line: unknown command or flag, a
// missing or bad argument.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

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

// exitCode maps the error a command returned to the process exit code.
func exitCode(err error) int {
	var ue *usageError
	var ge *GenomeErrors
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue), isConfigError(err):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ge):
		return exitGenomeErrs
	}
	return exitFailed
}

// interruptedError is the error of a run stopped by a signal. It matches
// context.Canceled, so exitCode maps it to exitInterrupted.
type interruptedError struct {
	results string // the results file that keeps what was done
	err     error  // the context's error
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted; the results written so far are kept in %s (run again with --resume to finish)", e.results)
}

func (e *interruptedError) Unwrap() error { return e.err }
