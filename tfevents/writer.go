package tfevents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Options configure a Writer. The zero value is usable.
type Options struct {
	// Now gives the wall time of each event; nil means time.Now. Tests set
	// it to get the same bytes every run.
	Now func() time.Time
	// Hostname goes into the file's name; empty means os.Hostname().
	Hostname string
	// NoSync skips the fsync after each event. Records are still written
	// whole, one write each, so a killed process loses none that Write
	// returned for; NoSync only gives up durability across a machine crash.
	NoSync bool
}

// A Writer appends events to one event file. It is safe for use by
// several goroutines. Each method writes its event with one write call
// and then syncs the file (unless Options.NoSync): once it returns nil the
// event is on disk, and a process killed at any moment leaves a file that
// Read returns whole up to the last event written.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	now    func() time.Time
	sync   bool
	buf    []byte
	err    error // the first write error; later writes return it
	closed bool
	batchN int64 // step of the next BatchSize event
}

// Create makes dir (if needed) and a new event file in it,
// events.out.tfevents.<unix seconds>.<hostname> (with a ".N" suffix if that
// name is taken), and writes the file_version event.
func Create(dir string, o Options) (*Writer, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			h = "localhost"
		}
		o.Hostname = h
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	start := o.Now()
	f, err := createUnique(filepath.Join(dir, "events.out.tfevents."+strconv.FormatInt(start.Unix(), 10)+"."+o.Hostname))
	if err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	w := &Writer{f: f, now: o.Now, sync: !o.NoSync}
	if err := w.write(&Event{WallTime: wallTime(start), FileVersion: FileVersion}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// createUnique creates name, or name.1, name.2, ... if it exists.
func createUnique(name string) (*os.File, error) {
	for i := 0; ; i++ {
		p := name
		if i > 0 {
			p += "." + strconv.Itoa(i)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if !errors.Is(err, os.ErrExist) || i == 100 {
			return f, err
		}
	}
}

// Path is the event file's path.
func (w *Writer) Path() string { return w.f.Name() }

// Scalar writes one event with one scalar value: tag's value v at step.
func (w *Writer) Scalar(tag string, step int64, v float64) error {
	return w.Scalars(step, Value{Tag: tag, Scalar: float32(v)})
}

// Scalars writes one event holding all of vals at step. TensorBoard shows
// each tag as its own chart.
func (w *Writer) Scalars(step int64, vals ...Value) error {
	return w.write(&Event{Step: step, Values: vals})
}

// wallTime is t in seconds since the Unix epoch, as exact as a float64 allows.
func wallTime(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// write stamps e with the wall time, unless it has one, and appends it as
// one record.
func (w *Writer) write(e *Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("tfevents: write after Close")
	}
	if w.err != nil {
		return w.err
	}
	if e.WallTime == 0 {
		e.WallTime = wallTime(w.now())
	}
	w.buf = appendRecord(w.buf[:0], appendEvent(nil, e))
	if _, err := w.f.Write(w.buf); err != nil {
		w.err = fmt.Errorf("tfevents: %w", err)
		return w.err
	}
	if w.sync {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("tfevents: %w", err)
			return w.err
		}
	}
	return nil
}

// Close closes the file. Every event was already written and synced, so
// Close only releases it; it returns the first write error, if any.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.f.Close()
	if w.err != nil {
		return w.err
	}
	if err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	return nil
}
