package plot

import (
	"bufio"
	"image/color"
	"io"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Width is the width of every picture, in pixels.
const Width = 800

// dpi sets how big text is: at 96 dots per inch, 12-point labels are 16
// pixels high, legible in an 800-pixel-wide picture shown as it is.
const dpi = 96

// px is n pixels as a vg length at dpi.
func px(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// Colours of the series, chosen to stay apart for colour-blind readers
// (Okabe and Ito's palette).
var (
	colBlue   = color.RGBA{0, 114, 178, 255}
	colOrange = color.RGBA{230, 159, 0, 255}
	colGreen  = color.RGBA{0, 158, 115, 255}
	colRed    = color.RGBA{213, 94, 0, 255}
	colPurple = color.RGBA{204, 121, 167, 255}
	colGrey   = color.RGBA{120, 120, 120, 255}
)

// A panel is one plot of a figure, with its legend kept apart: writeFigure
// draws the title and the legend (in two columns) above the plot's area,
// where they never hide a point.
type panel struct {
	*gplot.Plot
	title   string
	entries []entry
}

type entry struct {
	name   string
	thumbs []gplot.Thumbnailer
}

// newPanel is a panel with axis labels and a light grid.
func newPanel(title, xLabel, yLabel string) *panel {
	p := gplot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	return &panel{Plot: p, title: title}
}

// legend adds an entry to the panel's legend.
func (p *panel) legend(name string, thumbs ...gplot.Thumbnailer) {
	p.entries = append(p.entries, entry{name, thumbs})
}

// columns is the panel's legend in two columns, the first one longer.
func (p *panel) columns() []gplot.Legend {
	var cols []gplot.Legend
	half := (len(p.entries) + 1) / 2
	for _, part := range [][]entry{p.entries[:half], p.entries[half:]} {
		if len(part) == 0 {
			continue
		}
		l := gplot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font.Size = 11
		l.ThumbnailWidth = vg.Points(18)
		for _, e := range part {
			l.Add(e.name, e.thumbs...)
		}
		cols = append(cols, l)
	}
	return cols
}

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(gplot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: gplot.DefaultTextHandler,
	}
}

// writeFigure draws title above panels laid out in rows (each row a slice
// of panels side by side, all rows the same length) on a Width × heightPx
// canvas and writes it to w as PNG.
func writeFigure(w io.Writer, title string, heightPx int, panels [][]*panel) error {
	img := vgimg.NewWith(vgimg.UseWH(px(Width), px(heightPx)), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	sty := textStyle(15)
	pad := px(8)
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}, title)
	body := draw.Crop(dc, 0, 0, 0, -(sty.Height(title) + 2*pad))
	tiles := draw.Tiles{
		Rows: len(panels), Cols: len(panels[0]),
		PadX: px(24), PadY: px(20), PadLeft: pad, PadRight: px(16), PadBottom: pad,
	}
	cs := make([][]draw.Canvas, len(panels))
	for i, row := range panels {
		for j, p := range row {
			cs[i] = append(cs[i], p.decorate(tiles.At(body, j, i)))
		}
	}
	alignColumns(panels, cs)
	for i, row := range panels {
		for j, p := range row {
			p.Plot.Draw(cs[i][j])
		}
	}
	bw := bufio.NewWriter(w)
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// decorate draws the panel's title and legend at the top of c and
// returns the canvas left for its plot.
func (p *panel) decorate(c draw.Canvas) draw.Canvas {
	sty := textStyle(13)
	c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y}, p.title)
	top := sty.Height(p.title) + px(4)
	var legendH vg.Length
	for k, l := range p.columns() {
		band := draw.Crop(c, 0, 0, 0, -top)
		band.Min.X += vg.Length(k) * c.Size().X / 2
		legendH = max(legendH, l.Rectangle(band).Size().Y)
		l.Draw(band)
	}
	return draw.Crop(c, 0, 0, 0, -(top + legendH + px(6)))
}

// alignColumns narrows the plot canvases of each column so that their data
// areas share left and right edges, whatever their tick labels' widths.
func alignColumns(panels [][]*panel, cs [][]draw.Canvas) {
	for j := range panels[0] {
		var left, right vg.Length
		for i := range panels {
			d := panels[i][j].DataCanvas(cs[i][j])
			left = max(left, d.Min.X-cs[i][j].Min.X)
			right = max(right, cs[i][j].Max.X-d.Max.X)
		}
		for i := range panels {
			d := panels[i][j].DataCanvas(cs[i][j])
			c := cs[i][j]
			cs[i][j] = draw.Crop(c, left-(d.Min.X-c.Min.X), -(right - (c.Max.X - d.Max.X)), 0, 0)
		}
	}
}
