package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/neateval/neateval/bench/harness"
	"github.com/neateval/neateval/cluster"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
	"github.com/neateval/neateval/serve"
)

// Exit codes of neateval. This is the one place that maps errors to them,
// and adds to the libraries' messages what the user can do about them; the
// usage text (usage.go) documents the codes.
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

// exitCode maps the error a command returned to the process exit code.
func exitCode(err error) int {
	var ge *run.GenomeErrors
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case isUsage(err):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ge):
		return exitGenomeErrs
	}
	return exitFailed
}

// isUsage reports whether err is the user's mistake in flags, config or
// files to fix before running again (exit code 2).
func isUsage(err error) bool {
	var ue *usageError
	var fe *config.FileError
	var ve *config.ValueError
	var fle *config.FlagError
	var ce *run.CheckpointError
	var oe *harness.OptionError
	return errors.As(err, &oe) || errors.As(err, &ue) || errors.As(err, &fe) || errors.As(err, &ve) || errors.As(err, &fle) ||
		errors.As(err, &ce) || errors.Is(err, results.ErrOtherRun) || errors.Is(err, serve.ErrTokenRequired) ||
		errors.Is(err, cluster.ErrNoCredentials)
}

// isOutcome reports whether err is how a run ended rather than a failure:
// some genomes' error results, or an interruption.
func isOutcome(err error) bool {
	var ge *run.GenomeErrors
	return errors.As(err, &ge) || errors.Is(err, context.Canceled)
}

// advice is what the user can do about err, "" when nothing more than its
// message says.
func advice(err error) string {
	var nr *results.NotResumableError
	var ce *run.CheckpointError
	var nw *cluster.NoWorkersError
	var ie *run.InterruptedError
	var ei *run.EvolveInterruptedError
	switch {
	case errors.As(err, &nr):
		return "choose another output.results (--results) or run without --resume to start over"
	case errors.Is(err, run.ErrCheckpointExists):
		return "pass --resume to continue it, or remove the folder to start over"
	case errors.As(err, &ce):
		return "resume with the same configuration, or remove the folder to start over"
	case errors.As(err, &ie), errors.As(err, &ei):
		return "run again with --resume to continue"
	case errors.Is(err, serve.ErrTokenRequired):
		return "give one with --token-file FILE or $" + serve.TokenEnv + ", or listen on 127.0.0.1"
	case errors.Is(err, cluster.ErrNoCredentials):
		return "give one with --token-file FILE or $" + cluster.TokenEnv + ", or listen on 127.0.0.1"
	case errors.As(err, &nw):
		return "start workers (neateval worker --nats URL) and run again with --resume"
	}
	return ""
}
