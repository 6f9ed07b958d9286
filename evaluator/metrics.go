package evaluator

import "math"

// Reduce scores n rows of logits against their labels, as SliceStats
// defines it: a backend that reduces on the host calls it, one that reduces
// on its device computes the same. The prediction is the argmax (a tie
// goes to the lowest class), the loss of a row is logsumexp(logits) −
// logits[label], computed in float64 after subtracting the row's max, and
// the rows' losses are summed exactly (Sum). A row with a NaN or ±Inf counts in NonFinite and adds to
// neither the correct count nor the loss.
func Reduce(logits []float32, labels []uint8, classes int) SliceStats {
	st := SliceStats{Images: len(labels)}
	for r, label := range labels {
		row := logits[r*classes : (r+1)*classes]
		best, arg, finite := row[0], 0, true
		for k, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				finite = false
				break
			}
			if v > best {
				best, arg = v, k
			}
		}
		if !finite {
			st.NonFinite++
			continue
		}
		if arg == int(label) {
			st.Correct++
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - float64(best))
		}
		st.LossSum.Add(math.Log(sum) + float64(best) - float64(row[label]))
	}
	return st
}
