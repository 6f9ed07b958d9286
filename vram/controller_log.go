package vram

// Field keys of the controller's events. They are part of the log
// schema: stable, lowercase.
const (
	KeyEvent          = "event"
	KeyGenome         = "genome"
	KeyOldBatch       = "old_batch"
	KeyNewBatch       = "new_batch"
	KeyBytesRequested = "bytes_requested"
	KeyBytesFree      = "bytes_free"
	KeyReason         = "reason"
	KeyAttempt        = "attempt"
)

// The controller's events (the "event" field).
const (
	// EventBatchShrink: the batch got smaller. One per RunStats.Shrinks.
	EventBatchShrink = "batch_shrink"
	// EventBatchGrow: the batch got larger (a probe). One per
	// RunStats.Grows.
	EventBatchGrow = "batch_grow"
	// EventBatchExhausted: out of memory at the smallest batch; the genome
	// gets a *BatchOOMError.
	EventBatchExhausted = "batch_exhausted"
	// EventBatchRetry: out of memory at the smallest batch, tried again
	// (see ControllerConfig.MinAttempts).
	EventBatchRetry = "batch_retry"
)

// Reasons of a change (the "reason" field). For ReasonOOM, bytes_requested
// and bytes_free are the failed allocation and the device's free memory;
// for ReasonThreshold, the peak reserved memory and the total less it; for
// ReasonProbe, the forward's predicted bytes at the new size (0 without a
// memory model) and the memory not held by live blocks.
const (
	ReasonOOM       = "oom"
	ReasonThreshold = "threshold"
	ReasonProbe     = "probe"
)

func (c *BatchController) logChange(event, reason string, genome int64, old, next int, req, free int64) {
	if c.cfg.OnChange != nil {
		c.cfg.OnChange(old, next, reason)
	}
	c.log.Info().Str(KeyEvent, event).Int64(KeyGenome, genome).
		Int(KeyOldBatch, old).Int(KeyNewBatch, next).
		Int64(KeyBytesRequested, req).Int64(KeyBytesFree, free).Str(KeyReason, reason).
		Msgf("VRAM | genome %d | batch %d → %d (%s: %s requested, %s free)",
			genome, old, next, reason, FormatBytes(req), FormatBytes(free))
}

func (c *BatchController) logRetry(genome int64, batch int, req, free int64, attempt int) {
	c.log.Info().Str(KeyEvent, EventBatchRetry).Int64(KeyGenome, genome).
		Int(KeyOldBatch, batch).Int(KeyNewBatch, batch).
		Int64(KeyBytesRequested, req).Int64(KeyBytesFree, free).Str(KeyReason, ReasonOOM).
		Int(KeyAttempt, attempt).
		Msgf("VRAM | genome %d | out of memory at batch %d, trying again (%s requested, %s free)",
			genome, batch, FormatBytes(req), FormatBytes(free))
}

func (c *BatchController) logExhausted(genome int64, batch int, req, free int64) {
	c.log.Warn().Str(KeyEvent, EventBatchExhausted).Int64(KeyGenome, genome).
		Int(KeyOldBatch, batch).Int(KeyNewBatch, 0).
		Int64(KeyBytesRequested, req).Int64(KeyBytesFree, free).Str(KeyReason, ReasonOOM).
		Msgf("VRAM | genome %d | out of memory at batch %d (%s requested, %s free): giving up",
			genome, batch, FormatBytes(req), FormatBytes(free))
}
