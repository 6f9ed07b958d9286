package plot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// An InputError is a problem with an input file, located by its name and
// line (line 0: the file as a whole).
type InputError struct {
	File string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// maxLine is the longest line of a JSON Lines input: a results line or
// log line is far shorter.
const maxLine = 1 << 20

// eachLine calls fn with each non-blank line of r and its number from 1.
// Errors are *InputError naming the file and line.
func eachLine(r io.Reader, name string, fn func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(b); err != nil {
			return &InputError{File: name, Line: n, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxLine)
		}
		return &InputError{File: name, Line: n + 1, Err: err}
	}
	return nil
}

// decodeJSON decodes data into v; an error is an *InputError naming the
// line of the offending byte.
func decodeJSON(data []byte, name string, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 {
		return &InputError{File: name, Err: err}
	}
	line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte{'\n'})
	return &InputError{File: name, Line: line, Err: err}
}

// jsonObject decodes one JSON Lines line into v, refusing anything but an
// object.
func jsonObject(line []byte, v any) error {
	if line[0] != '{' {
		return fmt.Errorf("not a JSON object: %.40q", line)
	}
	return json.Unmarshal(line, v)
}
