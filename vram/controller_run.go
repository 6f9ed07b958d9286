package vram

// run is one genome's walk: the batch now, and what the walk has learned.
// Sizes are counts of images; "bytes" are a forward's own allocation, and
// est turns sizes into bytes by the Need, calibrated by measurement.
type run struct {
	cfg   ControllerConfig
	need  Need
	start int // min(Start, n)
	b     int // the batch now

	fit   int     // largest slice that succeeded (0: none yet)
	fail  int     // smallest slice that ran out of memory or passed the threshold (0: none)
	short int64   // bytes the forward at fail lacked, by its error (0: unknown)
	kappa float64 // measured ÷ predicted forward bytes (0: not measured)
	base  int64   // device bytes allocated outside this forward, at the last slice
	total int64   // device capacity

	streak   int  // slices in a row that succeeded at b
	minFails int  // out-of-memory errors in a row at Min
	flushed  bool // a threshold excursion of the cache alone was forgiven
}

// margin is how far below a failed size, in bytes, the controller lands
// when the error does not say how much was missing: under half of Settle,
// so that landing there settles.
func (r *run) margin() float64 { return 0.4 * r.cfg.Settle }

func (r *run) modelled() bool { return r.need.ActPerImage > 0 }

func (r *run) k() float64 {
	if r.kappa > 0 {
		return r.kappa
	}
	return 1
}

// est is the forward's predicted bytes for a batch of b.
func (r *run) est(b int) int64 { return int64(r.k() * float64(r.need.Act(b))) }

// maxFit is the largest batch whose forward is predicted to fit in avail
// bytes (0 if none).
func (r *run) maxFit(avail int64) int {
	if avail <= 0 {
		return 0
	}
	act := r.need
	act.Model = 0
	return FitBatch(act, int64(float64(avail)/r.k()))
}

// capacity is the most a forward may take, by what the run knows: what is
// not live on the device, under the threshold, and under what failed.
func (r *run) capacity() int64 {
	a := r.room()
	if r.fail > 0 {
		e := r.est(r.fail)
		a = min(a, e-max(r.short, int64(r.margin()*float64(e))))
	}
	return a
}

// room is what the device leaves a forward: what is not live on it, and
// under the threshold.
func (r *run) room() int64 {
	a := r.total - r.base
	if r.cfg.Threshold < 1 {
		a = min(a, int64(r.cfg.Threshold*float64(r.total))-r.base)
	}
	return a
}

// recall starts the run from its bucket's memory, when the bucket has met a
// limit: at the share of the level that fit that this genome's need gives,
// below the level that failed.
func (r *run) recall(m bucketMemory) {
	if m.kappa > 0 {
		r.kappa = m.kappa
	}
	if r.modelled() {
		if m.failLevel <= 0 {
			return
		}
		if f := r.maxFit(m.failLevel-r.base-1) + 1; f <= r.start {
			r.fail, r.short = max(f, 1), m.short
		}
		b := r.maxFit(r.capacity())
		if m.fitLevel > 0 {
			b = r.maxFit(m.fitLevel - r.base)
		}
		r.b = r.clampStart(max(b, r.cfg.Min)) // nothing fits at that level now: start small
		return
	}
	if m.failBatch <= 0 {
		return
	}
	if m.failBatch <= r.start {
		r.fail = m.failBatch
	}
	r.b = r.clampStart(m.fitBatch)
}

// clampStart keeps a remembered size within [Min, start] and below fail;
// an unknown one (0) is start.
func (r *run) clampStart(b int) int {
	if b < 1 {
		b = r.start
	}
	if r.fail > 0 {
		b = min(b, r.fail-1)
	}
	return max(min(b, r.start), min(r.cfg.Min, r.start))
}

// succeeded takes in a slice of s images that worked, and returns the next
// batch and why it changed ("" when it did not).
func (r *run) succeeded(s int, o observation) (int, string) {
	r.minFails = 0
	r.base, r.total = o.base, o.total
	if o.measured > 0 && r.modelled() {
		r.kappa = float64(o.measured) / float64(r.need.Act(s))
	}
	if o.exceeded && o.cacheOnly && !r.flushed {
		// The cache, not this forward, passed the threshold, and end has
		// emptied it: once a walk, that is the cure instead of a smaller
		// batch.
		o.exceeded, r.flushed = false, true
	}
	if o.exceeded && r.b > r.cfg.Min {
		// It fit, but took more than the threshold allows: treat it as too
		// large, like an out-of-memory, without the cost of one.
		if r.fail == 0 || s <= r.fail {
			r.fail, r.short = s, o.excess
		}
		r.fit = min(r.fit, s-1)
		r.streak = 0
		var next int
		switch {
		case r.modelled():
			next = r.maxFit(r.capacity())
		case o.measured > o.excess:
			next = int(float64(s) * float64(o.measured-o.excess) / float64(o.measured))
		default:
			next = s / 2
		}
		return max(r.cfg.Min, min(next, s-1, r.b-1)), ReasonThreshold
	}
	r.fit = max(r.fit, s)
	if r.fail > 0 && r.fail <= r.fit { // the device has changed since
		r.fail, r.short = 0, 0
	}
	if s < r.b { // a short last slice says nothing about b
		return r.b, ""
	}
	r.streak++
	if r.streak < r.cfg.ProbeAfter || r.b >= r.start {
		return r.b, ""
	}
	if r.fail > 0 && r.b >= r.fit && float64(r.fail-r.fit) <= r.cfg.Settle*float64(r.fit) {
		return r.b, "" // settled
	}
	t := r.probeTarget()
	if t <= r.b {
		return r.b, ""
	}
	r.streak = 0
	return t, ReasonProbe
}

// probeTarget is the size to try next on the way up: what the calibrated
// model expects to fit, or the midpoint between fit and fail when there is
// no model or it expects nothing above fit; below the size that failed and
// at most start.
func (r *run) probeTarget() int {
	hi := r.start
	if r.fail > 0 {
		hi = min(hi, r.fail-1)
	}
	var t int
	if r.modelled() {
		t = r.maxFit(r.capacity())
	} else if r.fail == 0 {
		t = hi
	}
	if t <= r.fit && r.fail > 0 && (!r.modelled() || r.est(r.fit) < int64((1-r.cfg.Settle)*float64(r.room()))) {
		// No model, or the model sees no room above fit although the
		// forward at fit leaves the device well short of full: the bytes
		// the failure lacked do not scale with the batch (a segment's
		// waste). Bisect.
		t = r.fit + (r.fail-r.fit)/2
	}
	return min(max(t, r.fit), hi)
}

// failed takes in a slice of s images (s > Min) that ran out of memory and
// returns the smaller batch to retry it with.
func (r *run) failed(s int, oe *OOMError, o observation) int {
	r.base, r.total = o.base, o.total
	r.streak = 0
	if !explained(oe) {
		// The device had the memory: the failure is passing (an injected
		// fault, a race with a concurrent forward that has since freed
		// its memory). Halve, as the seed does, but learn nothing from it,
		// so that probing returns to what fit.
		return max(r.cfg.Min, s/2)
	}
	stale := s <= r.fit // it fit before, but the device has less room now
	if r.fail == 0 || s <= r.fail {
		r.fail, r.short = s, 0
		if oe != nil {
			r.short = max(0, minSegment(oe.Requested)-oe.Free)
		}
	}
	var g int // the model's guess
	if r.modelled() {
		g = r.maxFit(r.capacity())
	}
	switch {
	case stale:
		r.fit = 0
		if !r.modelled() {
			g = s / 2
		}
		return max(r.cfg.Min, s/2, min(g, s-1))
	case r.fit > 0:
		// Above a size that fit: land between the two.
		return min(max(g, r.fit), s-1)
	}
	next := s / 2
	if r.modelled() {
		next = min(next, g)
	}
	return max(r.cfg.Min, next)
}

// explained says whether an out-of-memory error is accounted for by its
// figures: the device had less free than the smallest segment the request
// needs. An allocator's real out-of-memory always is (it released its cache
// and the device still lacked a segment), on a GPU and on the Linux arena;
// one with memory to spare is passing, like an injected fault. (On the
// exact-size arena of other systems, fragmentation can fail a segment with
// memory to spare: there such failures are taken as passing too, and cost
// a halving each.) Without figures, a failure counts as real.
func explained(oe *OOMError) bool {
	return oe == nil || minSegment(oe.Requested) > oe.Free
}
