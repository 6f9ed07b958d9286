package plot

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
)

// FitnessCurve writes the fitness curve of an evolution run as a PNG
// Width pixels wide: the best and the mean fitness of each generation
// above, the number of species below, against the generation. title
// heads the picture; empty means a default naming the generations.
func FitnessCurve(w io.Writer, gens []Generation, title string) error {
	if len(gens) == 0 {
		return errors.New("fitness curve: no generations")
	}
	if title == "" {
		title = fmt.Sprintf("Evolution: fitness over %d generations", len(gens))
	}
	best, mean, species := plotter.XYs{}, plotter.XYs{}, plotter.XYs{}
	for _, g := range gens {
		x := float64(g.Gen)
		if !math.IsNaN(g.Best) && !math.IsInf(g.Best, 0) {
			best = append(best, plotter.XY{X: x, Y: g.Best})
		}
		if !math.IsNaN(g.Mean) && !math.IsInf(g.Mean, 0) {
			mean = append(mean, plotter.XY{X: x, Y: g.Mean})
		}
		species = append(species, plotter.XY{X: x, Y: float64(g.Species)})
	}

	top := newPanel("Fitness of each generation", "", "fitness (higher is better)")
	if err := addLine(top, best, "best genome", colBlue, 2.5, true); err != nil {
		return err
	}
	if err := addLine(top, mean, "population mean", colOrange, 2, false); err != nil {
		return err
	}

	bottom := newPanel("Species", "generation", "species (count)")
	if err := addLine(bottom, species, "", colGreen, 2, false); err != nil {
		return err
	}
	bottom.Y.Min = 0
	bottom.Y.Tick.Marker = linTicks{integer: true}
	bottom.X.Tick.Marker = linTicks{integer: true}
	top.X.Tick.Marker = linTicks{integer: true}
	top.Y.Tick.Marker = linTicks{}

	return writeFigure(w, title, 620, [][]*panel{{top}, {bottom}})
}
