package plot

import (
	"fmt"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// logTicks marks a logarithmic axis: a labelled tick at each power of
// base that falls in range (every other one, or fewer, when there are
// many), minor ticks between. label writes a value with its unit.
type logTicks struct {
	base  float64 // 10, or 2 for bytes
	label func(float64) string
}

// Ticks implements gplot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	e0, e1 := math.Floor(math.Log(lo)/math.Log(t.base)), math.Ceil(math.Log(hi)/math.Log(t.base))
	every := math.Max(1, math.Ceil((e1-e0)/7)) // at most about 7 labels
	var ticks []gplot.Tick
	labelled := 0
	for e := e0; e <= e1; e++ {
		v := math.Pow(t.base, e)
		if v >= lo && v <= hi {
			tk := gplot.Tick{Value: v}
			if math.Mod(e, every) == 0 {
				tk.Label = t.label(v)
				labelled++
			}
			ticks = append(ticks, tk)
		}
		if t.base == 10 {
			for m := 2.0; m < 10; m++ {
				if mv := m * v; mv >= lo && mv <= hi {
					ticks = append(ticks, gplot.Tick{Value: mv})
				}
			}
		}
	}
	if labelled < 2 { // a range within a power of the base: round steps instead
		return linTicks{label: t.label}.Ticks(lo, hi)
	}
	return ticks
}

// linTicks marks a linear axis with about 8 labelled ticks at round
// steps (1, 2, 2.5 or 5 times a power of ten); integer axes (counts,
// generations) step by whole numbers only.
type linTicks struct {
	integer bool
	label   func(float64) string // nil: the number, with the decimals the step needs
}

// Ticks implements gplot.Ticker.
func (t linTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []gplot.Tick{{Value: lo, Label: t.format(lo, 4)}}
	}
	step := roundStep((hi - lo) / 8)
	if t.integer {
		step = intStep(step)
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	if m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); math.Abs(m-2.5) < 1e-9 && step < 10 {
		dec++
	}
	var ticks []gplot.Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9 && len(ticks) < 50; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: t.format(v, dec)})
	}
	return ticks
}

func (t linTicks) format(v float64, dec int) string {
	if t.label != nil {
		return t.label(v)
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// intStep is a round step of at least 1 for whole numbers: 2.5 becomes 2.
func intStep(step float64) float64 {
	if step == 2.5 {
		return 2
	}
	return math.Max(1, math.Round(step))
}

// roundStep is the smallest of 1, 2, 2.5, 5 × 10^k not below x.
func roundStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// si writes a count the short way: 950, 12k, 3.5M, 1G.
func si(v float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			return trimZero(fmt.Sprintf("%.1f", v/u.div)) + u.suffix
		}
	}
	return trimZero(fmt.Sprintf("%.1f", v))
}

// bytesLabel writes a size in binary units: 512 KiB, 16 MiB, 2 GiB.
func bytesLabel(v float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1 << 40, " TiB"}, {1 << 30, " GiB"}, {1 << 20, " MiB"}, {1 << 10, " KiB"}} {
		if v >= u.div {
			return trimZero(fmt.Sprintf("%.1f", v/u.div)) + u.suffix
		}
	}
	return fmt.Sprintf("%.0f B", v)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// setLog makes an axis logarithmic with ticks labelled by t. Call it once
// the data is added: it widens a range of one value (gonum would widen it
// by ±1, to zero or below) and gives an axis with no data a range of its
// own, as a log scale takes positive values only.
func setLog(a *gplot.Axis, t logTicks) {
	a.Scale = gplot.LogScale{}
	a.Tick.Marker = t
	switch {
	case !(a.Min > 0) || math.IsInf(a.Max, 0) || a.Max < a.Min:
		a.Min, a.Max = 1, t.base
	case a.Max == a.Min:
		a.Min, a.Max = a.Min/t.base, a.Max*t.base
	}
}
