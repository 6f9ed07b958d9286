package plot

import (
	"errors"
	"fmt"
	"io"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// Results writes the results of a population as a PNG Width pixels wide:
// each scored genome's accuracy against its parameters (left) and its
// FLOPs per image (right), both on log scales, the best genome marked.
// Genomes that got an error, or have no parameters or FLOPs, are left
// out and counted in the title. title heads the picture; empty means a
// default naming the genomes.
func Results(w io.Writer, rs []Result, title string) error {
	var byParams, byFLOPs plotter.XYs
	best, failed := -1, 0
	for i, r := range rs {
		if r.Err != "" || r.Params <= 0 || r.FLOPs <= 0 {
			failed++
			continue
		}
		byParams = append(byParams, plotter.XY{X: float64(r.Params), Y: 100 * r.Accuracy})
		byFLOPs = append(byFLOPs, plotter.XY{X: float64(r.FLOPs), Y: 100 * r.Accuracy})
		if best < 0 || r.Accuracy > rs[best].Accuracy {
			best = i
		}
	}
	if best < 0 {
		return errors.New("results plot: no genome was scored")
	}
	if title == "" {
		title = fmt.Sprintf("Results: %d genomes scored", len(byParams))
		if failed > 0 {
			title += fmt.Sprintf(" (%d left out: error or empty)", failed)
		}
	}
	b := rs[best]
	left := newPanel("Accuracy against size", "parameters (count, log scale)", "accuracy (%)")
	right := newPanel("Accuracy against compute", "FLOPs per image (log scale)", "accuracy (%)")
	for _, p := range []struct {
		pl     *panel
		xy     plotter.XYs
		bx, by float64
	}{{left, byParams, float64(b.Params), 100 * b.Accuracy}, {right, byFLOPs, float64(b.FLOPs), 100 * b.Accuracy}} {
		if err := addMarks(p.pl, p.xy, "genome", colBlue, draw.CircleGlyph{}, 3.5); err != nil {
			return err
		}
		name := fmt.Sprintf("best: genome %d, %.1f%%", b.GenomeID, 100*b.Accuracy)
		if err := addMarks(p.pl, plotter.XYs{{X: p.bx, Y: p.by}}, name, colRed, draw.PyramidGlyph{}, 5.5); err != nil {
			return err
		}
		setLog(&p.pl.X, logTicks{base: 10, label: si})
		p.pl.Y.Tick.Marker = linTicks{}
	}
	return writeFigure(w, title, 460, [][]*panel{{left, right}})
}
