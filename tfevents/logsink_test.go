package tfevents_test

import (
	"bytes"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/tfevents"
	"github.com/neateval/neateval/vram"
)

func TestLogSink(t *testing.T) {
	w := create(t, t.TempDir())
	var console bytes.Buffer
	log := zerolog.New(zerolog.MultiLevelWriter(&console, w.LogSink()))
	change := func(event string, old, next int) {
		log.Info().Str(vram.KeyEvent, event).Int64(vram.KeyGenome, 3).
			Int(vram.KeyOldBatch, old).Int(vram.KeyNewBatch, next).Msg("VRAM")
	}
	change(vram.EventBatchShrink, 10000, 113)
	log.Info().Str("event", "chunk_done").Int("chunks", 2).Msg("")
	change(vram.EventBatchGrow, 113, 120)
	log.Info().Str("event", "something").Int("new_batch", 7).Msg("") // not the controller's
	change(vram.EventBatchExhausted, 1, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ps := readFile(t, w.Path()).Scalars(tfevents.TagBatchSize)
	var got []float32
	for i, p := range ps {
		if p.Step != int64(i) {
			t.Errorf("change %d at step %d", i, p.Step)
		}
		got = append(got, p.Value)
	}
	if len(got) != 3 || got[0] != 113 || got[1] != 120 || got[2] != 0 {
		t.Errorf("batch sizes %v, want [113 120 0]", got)
	}
	if bytes.Count(console.Bytes(), []byte("\n")) != 5 {
		t.Errorf("the usual output got %q, want all 5 lines", console.Bytes())
	}
}
