package tfevents

import (
	"encoding/json"
	"io"

	"github.com/neateval/neateval/vram"
)

// LogSink returns an io.Writer to give a zerolog logger, beside its usual
// output (zerolog.MultiLevelWriter), that records each change of the
// evaluation batch size as a run/batch_size scalar (BatchSize): the new
// batch of the batch controller's lines, vram's batch_shrink, batch_grow,
// batch_retry and batch_exhausted. zerolog writes one JSON line per Write.
//
// Other lines pass unseen, and Write never fails: a broken event file must
// not stop a run's log. Close reports the first error writing the file.
func (w *Writer) LogSink() io.Writer { return logSink{w} }

type logSink struct{ w *Writer }

type batchLine struct {
	Event    string `json:"event"`
	NewBatch *int   `json:"new_batch"`
}

// Write implements io.Writer.
func (s logSink) Write(p []byte) (int, error) {
	var l batchLine
	if json.Unmarshal(p, &l) != nil || l.NewBatch == nil {
		return len(p), nil
	}
	switch l.Event {
	case vram.EventBatchShrink, vram.EventBatchGrow, vram.EventBatchRetry, vram.EventBatchExhausted:
		s.w.BatchSize(*l.NewBatch) // an error stays in the Writer, for Close
	}
	return len(p), nil
}
