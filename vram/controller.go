package vram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/rs/zerolog"
)

// ControllerConfig configures a BatchController. Zero values take the
// defaults.
type ControllerConfig struct {
	// Start is the batch a genome starts with (eval_batch_size; 45000).
	// The controller never goes above it.
	Start int
	// Threshold is the share of the device's memory that its peak reserved
	// memory may reach before the batch is shrunk without waiting for an
	// out-of-memory (vram_usage_threshold; 0.80). 1 or more turns this
	// trigger off.
	Threshold float64
	// Min is the smallest batch (1); an out-of-memory there is the genome's
	// error.
	Min int
	// ProbeAfter is how many slices must succeed at a size before the
	// controller tries a larger one (2).
	ProbeAfter int
	// Settle is the hysteresis: once the smallest size that failed is
	// within Settle × the largest that fit, the controller stops probing
	// (0.10).
	Settle float64
	// MinAttempts is how many out-of-memory errors in a row at batch Min
	// end the genome (3): one at Min can be passing (a concurrent forward
	// holding memory, an injected fault).
	MinAttempts int
	// OnChange, when set, is told every change of the batch size as it is
	// logged (the batch_shrink and batch_grow events): for a tracker that
	// records the size over a run. It is called from the forwards'
	// goroutines and must not block.
	OnChange func(old, next int, reason string)
}

// Defaults of ControllerConfig.
const (
	DefaultEvalBatchSize = 45000
	DefaultThreshold     = 0.80
)

func (c ControllerConfig) withDefaults() ControllerConfig {
	if c.Start == 0 {
		c.Start = DefaultEvalBatchSize
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Min == 0 {
		c.Min = 1
	}
	if c.ProbeAfter == 0 {
		c.ProbeAfter = 2
	}
	if c.Settle == 0 {
		c.Settle = 0.10
	}
	if c.MinAttempts == 0 {
		c.MinAttempts = 3
	}
	return c
}

// Validate reports settings out of range (zero values are defaults, and
// valid).
func (c ControllerConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Start < 1:
		return fmt.Errorf("eval_batch_size %d: want at least 1", c.Start)
	case math.IsNaN(c.Threshold) || c.Threshold <= 0:
		return fmt.Errorf("vram_usage_threshold %v: want a share in (0, 1]", c.Threshold)
	case c.Min < 1 || c.Min > c.Start:
		return fmt.Errorf("smallest batch %d: want 1 to eval_batch_size (%d)", c.Min, c.Start)
	case c.ProbeAfter < 1:
		return fmt.Errorf("probe after %d slices: want at least 1", c.ProbeAfter)
	case math.IsNaN(c.Settle) || c.Settle <= 0 || c.Settle > 1:
		return fmt.Errorf("settle %v: want a share in (0, 1]", c.Settle)
	case c.MinAttempts < 1:
		return fmt.Errorf("attempts at the smallest batch %d: want at least 1", c.MinAttempts)
	}
	return nil
}

// BatchController is the VRAMBatchController: it walks a genome's images in
// slices of an adaptive batch size and survives out-of-memory errors.
//
// A genome starts at the configured size (or at what worked for genomes of
// similar memory need). When a slice fails with ErrOutOfMemory the slice is
// retried at a smaller size: halved, or lower when the memory model (the
// Job's Need, calibrated by what the allocator measured) says so; once a
// size has fit, a failure above it steps back toward that size instead.
// When the device's peak reserved memory passes Threshold of its total
// after a slice, the batch shrinks before an out-of-memory can happen —
// unless neither the allocations at the peak nor the peak less the cache
// the slice began with passed it: then the excursion was free blocks that
// forwards of other sizes left in the cache (a varied population piles
// them up), and the cache is emptied without shrinking, once a walk.
// Whenever the slice size changes, the device's cache is emptied first: a
// cache cut for one size, reused for another, pins segments and wastes
// memory (the fragmentation PyTorch's expandable segments address), so each
// size starts from the device itself.
// After ProbeAfter slices succeed, the controller probes upward, to the
// largest size the calibrated model expects to fit between the last size
// that fit and the last that failed (bisection where there is no model),
// never above Start, and stops once those two are within Settle of each
// other. What a genome learned is remembered per memory-need bucket (a
// power of two of Need.ActPerImage) as device memory levels, so the next
// genome of similar need starts at its own share of them, and a giant
// genome does not shrink the batch of small ones.
//
// Every change is logged with a stable event (see EventBatchShrink and the
// Field constants). A BatchController is safe for concurrent use by the
// Runs of parallel forwards on one device; a device should have one
// controller, since it resets the device's peak figures.
type BatchController struct {
	cfg ControllerConfig
	dev Device
	log zerolog.Logger

	mu       sync.Mutex
	buckets  map[int]bucketMemory
	inFlight int    // slices running now
	epoch    uint64 // bumped by every ResetPeak this controller makes
}

// NewBatchController returns a controller for dev. It panics if cfg is
// invalid (check configuration with ControllerConfig.Validate first).
func NewBatchController(cfg ControllerConfig, dev Device, log zerolog.Logger) *BatchController {
	if err := cfg.Validate(); err != nil {
		panic("vram: NewBatchController: " + err.Error())
	}
	return &BatchController{cfg: cfg.withDefaults(), dev: dev, log: log, buckets: map[int]bucketMemory{}}
}

// Config is the controller's configuration with defaults filled in.
func (c *BatchController) Config() ControllerConfig { return c.cfg }

// Job is one genome's walk over the images.
type Job struct {
	// Genome is the genome's id, for logs and errors.
	Genome int64
	// Need is what the genome needs of the device (the memory model). The
	// controller uses it to guess sizes and to bucket what it remembers; a
	// zero Need works too, by halving and bisection alone.
	Need Need
}

// RunStats are what one Run did.
type RunStats struct {
	Slices     int // slices that succeeded
	OOMs       int // slices that failed with an out-of-memory error
	Shrinks    int // batch decreases (one "batch_shrink" line each)
	Grows      int // batch increases (one "batch_grow" line each)
	FinalBatch int // the batch size at the end
}

// BatchOOMError is a genome's out-of-memory at the smallest batch: it
// cannot be evaluated on this device. It matches ErrOutOfMemory.
type BatchOOMError struct {
	Genome int64
	// Batch is the batch that failed (the controller's Min, or the last
	// images when fewer are left).
	Batch int
	// Needed is what the genome needs for that batch: weights and
	// activations by its Need, or at least the allocation that failed.
	Needed int64
	// Requested is the allocation that failed; Free and Total are the
	// device's free and total memory at that moment.
	Requested, Free, Total int64
	// Err is the device's error.
	Err error
}

func (e *BatchOOMError) Error() string {
	return fmt.Sprintf("genome %d: out of memory even at batch %d: needs %s, %s free of %s",
		e.Genome, e.Batch, FormatBytes(e.Needed), FormatBytes(e.Free), FormatBytes(e.Total))
}

// Unwrap is the device's error.
func (e *BatchOOMError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrOutOfMemory) hold.
func (e *BatchOOMError) Is(target error) bool { return target == ErrOutOfMemory }

// Run walks images [0, n) in slices [lo, hi), calling fn for each, in order.
// fn must free everything it allocated before it returns an error. On an
// error matching ErrOutOfMemory the same slice is retried smaller, so no
// image is skipped or done twice; at batch Min, after MinAttempts such
// errors in a row, Run returns a *BatchOOMError. Any other error from fn is
// returned unchanged. Run checks ctx between slices and returns its error
// when it is done.
func (c *BatchController) Run(ctx context.Context, job Job, n int, fn func(lo, hi int) error) (st RunStats, err error) {
	r := c.newRun(job, n)
	defer func() {
		st.FinalBatch = r.b
		c.remember(r)
	}()
	last := 0 // the size of the slice before
	for lo := 0; lo < n; {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		hi := lo + min(r.b, n-lo)
		s := hi - lo
		if s != last && last != 0 {
			// Start a new size from the device, not from a cache cut for
			// the old one.
			c.dev.EmptyCache()
		}
		last = s
		at := c.begin()
		ferr := fn(lo, hi)
		o := c.end(at, ferr == nil, r.b > c.cfg.Min)
		if ferr == nil {
			lo = hi
			st.Slices++
			old := r.b
			next, reason := r.succeeded(s, o)
			if next != old {
				r.b = next
				if next < old {
					st.Shrinks++
					c.logChange(EventBatchShrink, reason, job.Genome, old, next, o.peakReserved, o.total-o.peakReserved)
				} else {
					st.Grows++
					c.logChange(EventBatchGrow, reason, job.Genome, old, next, r.est(next), o.total-o.base)
				}
			}
			continue
		}
		if !errors.Is(ferr, ErrOutOfMemory) {
			return st, ferr
		}
		st.OOMs++
		var oe *OOMError
		errors.As(ferr, &oe)
		req, free, total := oomFigures(oe, c.dev)
		if s <= c.cfg.Min {
			r.minFails++
			if r.minFails >= c.cfg.MinAttempts {
				c.logExhausted(job.Genome, s, req, free)
				return st, &BatchOOMError{Genome: job.Genome, Batch: s,
					Needed: max(job.Need.Peak(s), req), Requested: req, Free: free, Total: total, Err: ferr}
			}
			c.logRetry(job.Genome, s, req, free, r.minFails)
			continue
		}
		old := r.b
		r.b = r.failed(s, oe, o)
		st.Shrinks++
		c.logChange(EventBatchShrink, ReasonOOM, job.Genome, old, r.b, req, free)
	}
	return st, nil
}

func oomFigures(oe *OOMError, dev Device) (req, free, total int64) {
	if oe != nil {
		return oe.Requested, oe.Free, oe.Total
	}
	total, free = dev.MemInfo()
	return 0, free, total
}

// sliceStart is what the device held when a slice began.
type sliceStart struct {
	epoch  uint64 // the controller's peak epoch
	base   int64  // bytes allocated: weights, other forwards
	cached int64  // bytes reserved but free: the cache
}

// begin marks a slice as running. The device's peak figures are reset when
// no other slice runs, so that they cover exactly this slice when it runs
// alone, and everything that overlapped it otherwise.
func (c *BatchController) begin() sliceStart {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight == 0 {
		c.dev.ResetPeak()
		c.epoch++
	}
	c.inFlight++
	st := c.dev.Stats()
	return sliceStart{epoch: c.epoch, base: st.Allocated, cached: st.Reserved - st.Allocated}
}

// observation is what the device says after a slice.
type observation struct {
	base         int64 // allocated bytes when the slice began: weights, other forwards
	total        int64
	measured     int64 // the slice's peak allocation (an upper bound when others overlapped); 0 unknown
	peakReserved int64
	exceeded     bool  // the threshold trigger fired
	excess       int64 // bytes of peak reserved above the threshold
	// cacheOnly: the trigger fired, but neither the allocations at the
	// peak nor the peak reserved less the cache the slice began with
	// passed the threshold. The excursion was free blocks left by earlier
	// forwards (of other sizes: a varied population piles them up), which
	// end has returned to the device.
	cacheOnly bool
}

// end marks a slice as done and reads the figures. When the slice
// succeeded and the peak reserved memory passed the threshold, it fires the
// trigger for this slice: it empties the cache and resets the peak, so one
// excursion shrinks one Run, not every Run that sees it.
func (c *BatchController) end(at sliceStart, ok, canShrink bool) observation {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	st := c.dev.Stats()
	o := observation{base: at.base, total: st.Total, peakReserved: st.PeakReserved}
	if !ok || at.epoch != c.epoch {
		return o // the peak was reset while this slice ran: it no longer covers it
	}
	o.measured = max(0, st.PeakAllocated-at.base)
	limit := int64(c.cfg.Threshold * float64(st.Total))
	if c.cfg.Threshold < 1 && canShrink && st.PeakReserved > limit {
		o.exceeded, o.excess = true, st.PeakReserved-limit
		o.cacheOnly = st.PeakAllocated <= limit && st.PeakReserved-at.cached <= limit
		c.dev.EmptyCache()
		c.dev.ResetPeak()
		c.epoch++
	}
	return o
}

// bucketOf is the memory-need bucket of a need: the power of two of its
// per-image bytes (0 when it has none).
func bucketOf(n Need) int { return bits.Len64(uint64(max(n.ActPerImage, 0))) }

// bucketMemory is what worked for a bucket, as device memory levels (bytes
// allocated on the device at a forward's peak), so that it carries over to
// genomes of different need and weights.
type bucketMemory struct {
	kappa     float64 // measured ÷ predicted forward bytes
	fitLevel  int64   // a level at which a forward fit
	failLevel int64   // a level at which a forward failed or passed the threshold
	short     int64   // bytes the failing forward lacked, as its error said
	// Without a model: batch sizes.
	fitBatch, failBatch int
}

// newRun sets up a Run from what the genome's bucket remembers.
func (c *BatchController) newRun(job Job, n int) *run {
	r := &run{cfg: c.cfg, need: job.Need, start: max(1, min(c.cfg.Start, n))}
	r.b = r.start
	c.mu.Lock()
	m, ok := c.buckets[bucketOf(job.Need)]
	st := c.dev.Stats()
	c.mu.Unlock()
	r.base, r.total = st.Allocated, st.Total
	if ok {
		r.recall(m)
	}
	return r
}

// remember stores what a Run learned in its bucket: the newest failure wins,
// and a fit replaces a lower one; either discards a contradicting figure.
func (c *BatchController) remember(r *run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := bucketOf(r.need)
	m := c.buckets[key]
	if r.modelled() {
		if r.kappa > 0 {
			m.kappa = r.kappa
		}
		if r.fail > 0 {
			m.failLevel, m.short = r.base+r.est(r.fail), r.short
			if m.fitLevel >= m.failLevel {
				m.fitLevel = 0
			}
		}
		if r.fit > 0 {
			m.fitLevel = max(m.fitLevel, r.base+r.est(r.fit))
			if m.failLevel > 0 && m.failLevel <= m.fitLevel {
				m.failLevel, m.short = 0, 0
			}
		}
	} else {
		if r.fail > 0 {
			m.failBatch = r.fail
			if m.fitBatch >= m.failBatch {
				m.fitBatch = 0
			}
		}
		if r.fit > 0 {
			m.fitBatch = max(m.fitBatch, r.fit)
			if m.failBatch > 0 && m.failBatch <= m.fitBatch {
				m.failBatch = 0
			}
		}
	}
	c.buckets[key] = m
}
