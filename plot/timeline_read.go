package plot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Events of the log schema that ParseTimeline reads. The packages that log
// them own them (cmd/neateval, staging, vram, evaluator), but not all
// export them, and cmd/neateval cannot be imported: a reader of the schema
// names them here, as any reader of the log would.
const (
	evRunStart   = "run_start"
	evDevice     = "device"
	evPlan       = "plan"
	evGenomeDone = "genome_done"
	evGenomeErr  = "genome_error"
	evShrink     = "batch_shrink"
	evGrow       = "batch_grow"
	evRetry      = "batch_retry"
	evExhausted  = "batch_exhausted"
	evLoadOOM    = "load_oom"
	reasonOOM    = "oom"
)

// A Timeline is what a run's JSON log says about its batch sizes and
// device memory over time. Times are seconds since the log's first line.
type Timeline struct {
	ConfigBatch   int    // eval_batch_size of run_start; 0 if absent
	DeviceBytes   int64  // the device's memory; 0 if unknown
	PeakPredicted int64  // the staging plan's predicted peak; 0 if absent
	Mode          string // the staging plan's mode
	Changes       []BatchChange
	Genomes       []GenomeBatch // from genome_done lines (logged at debug level)
	LoadOOMs      []float64     // times a genome's weights did not fit on the device
	End           float64       // time of the last line
}

// A BatchChange is one line of the batch controller: a shrink, a grow, a
// retry or giving up.
type BatchChange struct {
	T               float64
	Event           string // batch_shrink, batch_grow, batch_retry or batch_exhausted
	Genome          int64
	Old, New        int
	Requested, Free int64
	Reason          string // oom, threshold or probe
}

// OOM reports whether the change answered an out-of-memory.
func (c BatchChange) OOM() bool { return c.Reason == reasonOOM }

// A GenomeBatch is the batch size a genome's forwards ended with.
type GenomeBatch struct {
	T      float64
	Genome int64
	Batch  int
}

type logLine struct {
	Time   *string `json:"time"`
	Event  *string `json:"event"`
	Batch0 int     `json:"eval_batch_size"`
	Memory int64   `json:"memory_bytes"`
	Peak   int64   `json:"peak_predicted_bytes"`
	Mode   string  `json:"mode"`
	Genome int64   `json:"genome"`
	Batch  int     `json:"batch"`
	Old    *int    `json:"old_batch"`
	New    *int    `json:"new_batch"`
	Req    int64   `json:"bytes_requested"`
	Free   int64   `json:"bytes_free"`
	Reason string  `json:"reason"`
}

// ReadTimeline reads a run's log, written with --log-format json.
func ReadTimeline(path string) (*Timeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTimeline(f, path)
}

// cliErrorPrefix starts the one line neateval prints on failure, after the
// log; ParseTimeline skips it so that a failed run's log still plots.
var cliErrorPrefix = []byte("neateval: ")

// ParseTimeline reads a JSON log (one object a line, each with "time"
// and "event") from r; name names it in errors, which give the line.
// Events it does not use are skipped.
func ParseTimeline(r io.Reader, name string) (*Timeline, error) {
	tl := &Timeline{}
	var start time.Time
	err := eachLine(r, name, func(b []byte) error {
		if bytes.HasPrefix(b, cliErrorPrefix) {
			return nil
		}
		var l logLine
		if err := jsonObject(b, &l); err != nil {
			return fmt.Errorf("%w (the log must be JSON, one object a line)", err)
		}
		if l.Time == nil || l.Event == nil {
			return errors.New(`a log line without "time" or "event"`)
		}
		t, err := time.Parse(time.RFC3339Nano, *l.Time)
		if err != nil {
			return fmt.Errorf(`"time": %w`, err)
		}
		if start.IsZero() {
			start = t
		}
		sec := t.Sub(start).Seconds()
		tl.End = max(tl.End, sec)
		return tl.add(*l.Event, sec, &l)
	})
	if err != nil {
		return nil, err
	}
	if start.IsZero() {
		return nil, &InputError{File: name, Err: errors.New("no log lines")}
	}
	return tl, nil
}

// add records one line's event.
func (tl *Timeline) add(event string, t float64, l *logLine) error {
	switch event {
	case evRunStart:
		tl.ConfigBatch = l.Batch0
	case evDevice:
		tl.DeviceBytes = l.Memory
	case evPlan:
		tl.PeakPredicted, tl.Mode = l.Peak, l.Mode
	case evGenomeDone, evGenomeErr:
		if l.Batch > 0 {
			tl.Genomes = append(tl.Genomes, GenomeBatch{T: t, Genome: l.Genome, Batch: l.Batch})
		}
	case evLoadOOM:
		tl.LoadOOMs = append(tl.LoadOOMs, t)
	case evShrink, evGrow, evRetry, evExhausted:
		if l.Old == nil || l.New == nil {
			return fmt.Errorf(`%s without "old_batch" or "new_batch"`, event)
		}
		if *l.Old < 1 || *l.New < 0 || l.Req < 0 || l.Free < 0 {
			return fmt.Errorf("%s: a negative size or an old_batch below 1", event)
		}
		tl.Changes = append(tl.Changes, BatchChange{T: t, Event: event, Genome: l.Genome,
			Old: *l.Old, New: *l.New, Requested: l.Req, Free: l.Free, Reason: l.Reason})
	}
	return nil
}
