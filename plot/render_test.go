package plot_test

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/neateval/neateval/plot"
)

// checkPNG decodes a picture: Width pixels wide, and not blank.
func checkPNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	if r.Dx() != plot.Width || r.Dy() < 400 {
		t.Fatalf("picture %d×%d, want %d wide and at least 400 high", r.Dx(), r.Dy(), plot.Width)
	}
	inked := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			if cr, cg, cb, _ := img.At(x, y).RGBA(); cr+cg+cb < 3*0xf000 {
				inked++
			}
		}
	}
	if inked < 2000 {
		t.Errorf("only %d of %d sampled pixels are drawn on", inked, r.Dx()*r.Dy()/4)
	}
	return img
}

func TestFitnessCurve(t *testing.T) {
	gens, err := plot.ReadHistory("testdata/state.json")
	if err != nil {
		t.Fatal(err)
	}
	gens[3].Best, gens[3].Mean = math.NaN(), math.NaN() // a generation nothing was scored in
	var b bytes.Buffer
	if err := plot.FitnessCurve(&b, gens, ""); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	if err := plot.FitnessCurve(&b, nil, ""); err == nil {
		t.Error("no generations: no error")
	}
}

func TestResults(t *testing.T) {
	rs, err := plot.ReadResults("testdata/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rs[0].Err, rs[0].Accuracy = "out of memory", math.NaN()
	var b bytes.Buffer
	if err := plot.Results(&b, rs, "Results"); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	if err := plot.Results(&b, rs[:1], ""); err == nil {
		t.Error("no genome scored: no error")
	}
}

func TestTimelinePlot(t *testing.T) {
	tl, err := plot.ReadTimeline("testdata/run.log")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plot.TimelinePlot(&b, tl, ""); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	if err := plot.TimelinePlot(&b, &plot.Timeline{}, ""); err == nil {
		t.Error("nothing to draw: no error")
	}
}
