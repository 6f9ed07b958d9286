package results

import (
	"errors"
	"fmt"
)

// ErrOtherRun is matched (errors.Is) by the error of Resume on a file
// written for another run: another population, data set, genome count,
// fitness or results format.
var ErrOtherRun = errors.New("written for another population, data set or fitness")

// ErrDamaged is matched by the error of Resume on a file of this run whose
// lines do not fit it (an index outside the population, say).
var ErrDamaged = errors.New("damaged")

// OtherRunError is a results file's run id that is not the run's.
type OtherRunError struct {
	Run  string // the file's
	Want string // this run's
}

func (e *OtherRunError) Error() string {
	return fmt.Sprintf("was %s (run %s, this run %s)", ErrOtherRun, e.Run, e.Want)
}

func (e *OtherRunError) Is(target error) bool { return target == ErrOtherRun }

// NotResumableError is the error of Resume on a file it refuses to
// continue: the file is left as it is. Err says why: an *OtherRunError, a
// file that is not a results file (a *LineError), or ErrDamaged.
type NotResumableError struct {
	Path string
	Err  error
}

func (e *NotResumableError) Error() string {
	var le *LineError
	var oe *OtherRunError
	msg := e.Err.Error()
	switch {
	case errors.As(e.Err, &le): // names the file itself
	case errors.As(e.Err, &oe):
		msg = "results " + e.Path + " " + msg
	default:
		msg = "results " + e.Path + ": " + msg
	}
	return msg + "; refusing to resume it (the file is left as it is)"
}

func (e *NotResumableError) Unwrap() error { return e.Err }

// LineError is a line of a results file that cannot be read.
type LineError struct {
	File string
	Line int // from 1
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("results %s: line %d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }
