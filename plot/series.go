package plot

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// addLine adds a line (with dots when dots) named name in the legend
// (none when name is empty).
func addLine(p *panel, xy plotter.XYs, name string, c color.Color, width float64, dots bool) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(width)
	p.Add(l)
	var sc *plotter.Scatter
	if dots {
		if sc, err = plotter.NewScatter(xy); err != nil {
			return err
		}
		sc.Color = c
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(2.5)
		p.Add(sc)
	}
	if name != "" {
		if sc != nil {
			p.legend(name, l, sc)
		} else {
			p.legend(name, l)
		}
	}
	return nil
}

// addMarks adds points drawn with shape, named in the legend; none when
// xy is empty.
func addMarks(p *panel, xy plotter.XYs, name string, c color.Color, shape draw.GlyphDrawer, r float64) error {
	if len(xy) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return err
	}
	sc.Color, sc.Shape, sc.Radius = c, shape, vg.Points(r)
	p.Add(sc)
	p.legend(name, sc)
	return nil
}

// addHLine adds a dashed horizontal line at y from 0 to end.
func addHLine(p *panel, y, end float64, name string, c color.Color, width float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: math.Max(end, 1e-9), Y: y}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(width), []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(l)
	p.legend(name, l)
	return nil
}
