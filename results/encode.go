package results

import (
	"bytes"
	"io"
)

// EncodeLine writes r as one line of run's results file: the JSON object
// (the run id first, then r's fields) and a newline, exactly as a Writer
// writes it, for programs that send results elsewhere (a stream, a
// message).
func EncodeLine(w io.Writer, run string, r *Result) error {
	var buf bytes.Buffer
	if err := encodeLine(&buf, run, r); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
