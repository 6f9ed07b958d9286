package tfevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A Log is what Read found in an event file.
type Log struct {
	Events []Event
	// Tail is the number of bytes after the last whole record: the part of
	// a record a writer had begun when it was killed. 0 for a file closed
	// cleanly.
	Tail int
}

// ErrCorrupt is the error (tested with errors.Is) of a whole record whose
// checksum does not match, or whose data is not an Event.
var ErrCorrupt = errors.New("corrupt record")

// Read reads an event file: every whole record in order, up to the last.
// A record cut short at the end of the file (a writer killed while writing
// it) is not an error: Read returns the records before it and the cut
// record's length in Log.Tail. A record whose checksums do not match is an
// error wrapping ErrCorrupt, naming the record's byte offset.
func Read(r io.Reader) (*Log, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	log := &Log{}
	off := 0
	for off < len(data) {
		rec, n, err := nextRecord(data[off:])
		if err != nil {
			return log, fmt.Errorf("record at byte %d: %w", off, err)
		}
		if n == 0 { // cut short
			log.Tail = len(data) - off
			break
		}
		e, err := parseEvent(rec)
		if err != nil {
			return log, fmt.Errorf("record at byte %d: %w: %w", off, ErrCorrupt, err)
		}
		log.Events = append(log.Events, e)
		off += n
	}
	return log, nil
}

// ReadFile reads the event file at path with Read; errors name the path.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	log, err := Read(f)
	if err != nil {
		return log, fmt.Errorf("%s: %w", path, err)
	}
	return log, nil
}

// nextRecord returns the data of the record at the start of b and the
// record's whole length, or n == 0 when b ends before the record does.
func nextRecord(b []byte) (data []byte, n int, err error) {
	if len(b) < headerLen {
		return nil, 0, nil
	}
	if got, want := binary.LittleEndian.Uint32(b[8:12]), maskedCRC(b[:8]); got != want {
		return nil, 0, fmt.Errorf("%w: length checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	size := binary.LittleEndian.Uint64(b[:8])
	if size > maxRecord {
		return nil, 0, fmt.Errorf("%w: length %d over the limit of %d", ErrCorrupt, size, maxRecord)
	}
	end := headerLen + int(size)
	if len(b) < end+footerLen {
		return nil, 0, nil
	}
	data = b[headerLen:end]
	if got, want := binary.LittleEndian.Uint32(b[end:]), maskedCRC(data); got != want {
		return nil, 0, fmt.Errorf("%w: data checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	return data, end + footerLen, nil
}

// Scalars returns the values of tag in the log's events, in order.
func (l *Log) Scalars(tag string) []Point {
	var ps []Point
	for _, e := range l.Events {
		for _, v := range e.Values {
			if v.Tag == tag {
				ps = append(ps, Point{Step: e.Step, WallTime: e.WallTime, Value: v.Scalar})
			}
		}
	}
	return ps
}

// A Point is one value of a tag: what TensorBoard draws at Step.
type Point struct {
	Step     int64
	WallTime float64
	Value    float32
}
