package evaluator_test

import (
	"math"
	"testing"

	"github.com/neateval/neateval/evaluator"
)

// TestReduce checks the reduction every backend computes on hand-worked
// rows: a tie goes to the lowest class, a row with NaN or ±Inf counts only
// in NonFinite, and the loss is logsumexp − the label's logit.
func TestReduce(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	logits := []float32{
		1, 1, 0, // tie between 0 and 1: predicts 0, right
		0, 2, 0, // predicts 1, label 2: wrong
		nan, 0, 0,
		0, inf, 0,
	}
	st := evaluator.Reduce(logits, []uint8{0, 2, 0, 1}, 3)
	loss := (math.Log(2*math.E+1) - 1) + (math.Log(math.Exp(2)+2) - 0)
	if st.Images != 4 || st.Correct != 1 || st.NonFinite != 2 || math.Abs(st.LossSum.Float64()-loss) > 1e-12 {
		t.Errorf("Reduce = %+v, want 4 images, 1 correct, 2 non-finite, loss sum %v", st, loss)
	}
}
