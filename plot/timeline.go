package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// TimelinePlot writes the timeline of a run as a PNG Width pixels wide:
// the evaluation batch size over time above (each change the controller
// logged, and each genome's final batch where the log has debug lines),
// the device memory below: the device's size, the plan's predicted peak,
// the memory in use at each change (the device less its free memory), the
// memory predicted for a grown batch, and each out-of-memory's refused
// request. Out-of-memories are marked with red crosses in both. title
// heads the picture; empty means a default that counts the changes.
func TimelinePlot(w io.Writer, tl *Timeline, title string) error {
	if len(tl.Changes) == 0 && len(tl.Genomes) == 0 {
		return errors.New("timeline: the log has no batch changes and no genome_done lines")
	}
	ooms := 0
	for _, c := range tl.Changes {
		if c.OOM() {
			ooms++
		}
	}
	if title == "" {
		title = fmt.Sprintf("Run timeline: %d batch-size changes, %d out-of-memory", len(tl.Changes), ooms)
		if tl.DeviceBytes > 0 {
			title += " on a " + bytesLabel(float64(tl.DeviceBytes)) + " device"
		}
	}
	top, err := batchPanel(tl)
	if err != nil {
		return err
	}
	bottom, err := memoryPanel(tl)
	if err != nil {
		return err
	}
	top.X.Min, top.X.Max = 0, tl.End
	bottom.X.Min, bottom.X.Max = 0, tl.End
	return writeFigure(w, title, 720, [][]*panel{{top}, {bottom}})
}

func batchPanel(tl *Timeline) (*panel, error) {
	p := newPanel("Evaluation batch size", "", "batch (images)")
	var xy, oom plotter.XYs
	if len(tl.Changes) > 0 && (len(tl.Genomes) == 0 || tl.Changes[0].T <= tl.Genomes[0].T) {
		xy = append(xy, plotter.XY{X: 0, Y: float64(tl.Changes[0].Old)}) // the batch the run began with
	}
	gi := 0
	for _, c := range tl.Changes {
		for ; gi < len(tl.Genomes) && tl.Genomes[gi].T <= c.T; gi++ {
			xy = append(xy, plotter.XY{X: tl.Genomes[gi].T, Y: float64(tl.Genomes[gi].Batch)})
		}
		xy = append(xy, plotter.XY{X: c.T, Y: float64(c.Old)})
		if c.New > 0 {
			xy = append(xy, plotter.XY{X: c.T, Y: float64(c.New)})
		}
		if c.OOM() {
			oom = append(oom, plotter.XY{X: c.T, Y: float64(c.Old)})
		}
	}
	for _, g := range tl.Genomes[gi:] {
		xy = append(xy, plotter.XY{X: g.T, Y: float64(g.Batch)})
	}
	if n := len(xy); n > 0 && xy[n-1].X < tl.End && xy[n-1].Y > 0 {
		xy = append(xy, plotter.XY{X: tl.End, Y: xy[n-1].Y}) // held to the end
	}
	if err := addLine(p, xy, "batch size", colBlue, 1.5, false); err != nil {
		return nil, err
	}
	if err := addMarks(p, oom, "out of memory: batch cut, or retried", colRed, draw.CrossGlyph{}, 5); err != nil {
		return nil, err
	}
	setLog(&p.Y, logTicks{base: 10, label: si})
	p.X.Tick.Marker = linTicks{}
	return p, nil
}

func memoryPanel(tl *Timeline) (*panel, error) {
	// A log axis's label is placed by the linear midpoint of the range
	// (gonum), so it is kept short: a long one pushes the data area down.
	p := newPanel("Device memory", "time since the run started (s)", "bytes")
	for _, h := range []struct {
		v     int64
		name  string
		c     color.RGBA
		width float64
	}{
		{tl.DeviceBytes, "device memory", colGrey, 2},
		{tl.PeakPredicted, "predicted peak at the configured batch (plan)", colPurple, 2},
	} {
		if h.v > 0 {
			if err := addHLine(p, float64(h.v), tl.End, h.name, h.c, h.width); err != nil {
				return nil, err
			}
		}
	}
	inUse, predicted, refused := memoryPoints(tl)
	marks := []struct {
		xy    plotter.XYs
		name  string
		c     color.RGBA
		shape draw.GlyphDrawer
		r     float64
	}{
		{inUse, "in use at a batch change (device − free)", colBlue, draw.CircleGlyph{}, 2.5},
		{predicted, "predicted for a grown batch", colGreen, draw.PyramidGlyph{}, 3},
		{refused, "out of memory: the refused request", colRed, draw.CrossGlyph{}, 5},
	}
	for _, m := range marks {
		if err := addMarks(p, m.xy, m.name, m.c, m.shape, m.r); err != nil {
			return nil, err
		}
	}
	setLog(&p.Y, logTicks{base: 2, label: bytesLabel})
	p.X.Tick.Marker = linTicks{}
	return p, nil
}

// memoryPoints are what each batch change says of memory: the memory in
// use (the device less the free memory), the prediction for a grown batch,
// and the request an out-of-memory refused.
func memoryPoints(tl *Timeline) (inUse, predicted, refused plotter.XYs) {
	for _, c := range tl.Changes {
		if tl.DeviceBytes > 0 && c.Free < tl.DeviceBytes {
			inUse = append(inUse, plotter.XY{X: c.T, Y: float64(tl.DeviceBytes - c.Free)})
		}
		switch {
		case c.OOM() && c.Requested > 0:
			refused = append(refused, plotter.XY{X: c.T, Y: float64(c.Requested)})
		case c.Event == evGrow && c.Requested > 0:
			predicted = append(predicted, plotter.XY{X: c.T, Y: float64(c.Requested)})
		}
	}
	return inUse, predicted, refused
}
