package vram

import "math"

// Need is what one genome needs of a device, in bytes: the memory model.
// The evaluator fills it from neat's figures (weight bytes, the liveness
// schedule's peak activations) and its own workspace; vram only does the
// arithmetic.
type Need struct {
	// Model is the weights' memory (M_model), for the device dtype.
	Model int64
	// ActPerImage is the peak live activation and workspace memory that
	// grows with the batch, per image.
	ActPerImage int64
	// ActFixed is the part of the peak that does not depend on the batch.
	ActFixed int64
	// Buffers is how many blocks are live at the peak, when known: each is
	// rounded up to MinBlockSize by the allocator, so Act counts up to
	// MinBlockSize-1 bytes more per buffer. 0 leaves rounding out.
	Buffers int
}

// Act is the predicted peak activation memory (M_act) of a forward of b
// images; 0 for b < 1.
func (n Need) Act(b int) int64 {
	if b < 1 {
		return 0
	}
	return n.ActFixed + int64(b)*n.ActPerImage + int64(n.Buffers)*(MinBlockSize-1)
}

// Peak is the predicted peak memory of a forward of b images with the
// genome's weights on the device: Model + Act(b).
func (n Need) Peak(b int) int64 {
	if b < 1 {
		return n.Model
	}
	return n.Model + n.Act(b)
}

// FitBatch is the largest b with n.Peak(b) <= avail, or 0 when not even one
// image fits. When nothing grows with the batch (ActPerImage <= 0) and one
// image fits, every batch fits; like any answer above it, that is capped
// at math.MaxInt32.
func FitBatch(n Need, avail int64) int {
	if n.Peak(1) > avail {
		return 0
	}
	if n.ActPerImage <= 0 {
		return math.MaxInt32
	}
	b := (avail - n.Model - n.ActFixed - int64(n.Buffers)*(MinBlockSize-1)) / n.ActPerImage
	return int(min(b, math.MaxInt32))
}
