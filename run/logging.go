package run

import (
	"io"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// timeFormatMs is RFC 3339 with milliseconds, the "time" field of every line.
const timeFormatMs = "2006-01-02T15:04:05.000Z07:00"

// setGlobals sets what zerolog keeps globally for the log schema: times
// with milliseconds, durations in float seconds. NewLogger does it once.
var setGlobals = sync.OnceFunc(func() {
	zerolog.TimeFieldFormat = timeFormatMs
	zerolog.DurationFieldUnit = time.Second
	zerolog.DurationFieldInteger = false
})

// NewLogger returns a logger of neateval's log schema, writing to w. format is "json"
// (one JSON object per line), "console" (human-readable, coloured on a
// terminal) or "auto" (console when w is a terminal, json otherwise); level
// is one of logLevels (anything else means info: Validate refuses it first).
// Every line carries a "time" field and, from neateval's packages, an
// "event" field. It sets zerolog's global time and duration formats.
func NewLogger(format, level string, w io.Writer) zerolog.Logger {
	setGlobals()
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	tty := IsTerminal(w)
	out := w
	if format == "console" || (format == "auto" && tty) {
		out = zerolog.ConsoleWriter{
			Out:           w,
			NoColor:       !tty,
			TimeFormat:    "15:04:05.000",
			PartsOrder:    []string{zerolog.TimestampFieldName, zerolog.LevelFieldName, KeyEvent, zerolog.MessageFieldName},
			FieldsExclude: []string{KeyEvent},
		}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger()
}

// event starts a line of the given level for the named event (one of the
// Event* constants). It returns nil, which every zerolog.Event method
// accepts, when the level is disabled.
func event(l *zerolog.Logger, lvl zerolog.Level, name string) *zerolog.Event {
	return l.WithLevel(lvl).Str(KeyEvent, name)
}

// logger is l, or a logger that writes nothing when l is nil.
func logger(l *zerolog.Logger) *zerolog.Logger {
	if l == nil {
		nop := zerolog.Nop()
		return &nop
	}
	return l
}

// fder is what *os.File and a progress bar's log writer have.
type fder interface{ Fd() uintptr }

// IsTerminal reports whether w is a terminal (a character device): an
// *os.File, or a writer with its Fd method.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(fder)
	if !ok {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}
