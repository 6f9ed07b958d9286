package main

import (
	"io"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// timeFormatMs is RFC 3339 with milliseconds, the "time" field of every line.
const timeFormatMs = "2006-01-02T15:04:05.000Z07:00"

func init() {
	// zerolog keeps these globally; neateval sets them once, here.
	zerolog.TimeFieldFormat = timeFormatMs
	zerolog.DurationFieldUnit = time.Second
	zerolog.DurationFieldInteger = false
}

// newLogger returns the logger of a run, writing to w. format is "json"
// (one JSON object per line), "console" (human-readable, coloured on a
// terminal) or "auto" (console when w is a terminal, json otherwise); level
// is one of logLevels (anything else means info: Validate refuses it first).
// Every line carries a "time" field; callers add the "event" field through
// logEvent.
func newLogger(format, level string, w io.Writer) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	tty := isTerminal(w)
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

// logEvent starts a line of the given level for the named event (one of
// the Ev* constants). It returns nil, which every zerolog.Event method
// accepts, when the level is disabled.
func logEvent(l *zerolog.Logger, lvl zerolog.Level, name string) *zerolog.Event {
	return l.WithLevel(lvl).Str(KeyEvent, name)
}

// fder is what *os.File and the progress bar's log writer have.
type fder interface{ Fd() uintptr }

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(fder)
	if !ok {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}
