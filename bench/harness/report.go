package harness

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/neateval/neateval/vram"
)

// Tolerances of the fitness cross-check against PyTorch. Its kernels sum in
// another order, so a logit may round the other way: an argmax that a near
// tie decides can flip (a few images), and the mean loss agrees to float32
// rounding.
const (
	checkImages  = 2    // |Δ correct images| per genome
	checkLossRel = 1e-4 // |Δ loss| / max(loss, 1e-3)
)

// fitnessCheck compares neateval's per-genome results with PyTorch's.
type fitnessCheck struct {
	OK            bool     `json:"ok"`
	Genomes       int      `json:"genomes"`
	Agree         int      `json:"agree"`
	AccuracyEqual int      `json:"accuracy_equal"`
	MaxImagesDiff int      `json:"max_images_diff"`
	MaxLossRel    float64  `json:"max_loss_rel"`
	Problems      []string `json:"problems,omitempty"`
}

// crossCheck holds neateval's results (ne) to PyTorch's (pt), genome by
// genome in population order: both score it or both refuse it; accuracy
// within checkImages images, loss within checkLossRel.
func crossCheck(ne, pt []engineGenome) *fitnessCheck {
	c := &fitnessCheck{Genomes: len(ne)}
	if len(ne) != len(pt) {
		c.Problems = append(c.Problems, fmt.Sprintf("%d results from neateval, %d from PyTorch", len(ne), len(pt)))
		return c
	}
	for i, a := range ne {
		b := pt[i]
		problem := ""
		switch {
		case a.ID != b.ID:
			problem = fmt.Sprintf("genome %d: PyTorch's line %d is genome %d", a.ID, i+1, b.ID)
		case a.OK != b.OK:
			problem = fmt.Sprintf("genome %d: scored by one engine only (neateval %v, PyTorch %v)", a.ID, a.OK, b.OK)
		case !a.OK:
		default:
			d := int(math.Round(math.Abs(a.Accuracy-b.Accuracy) * float64(a.Images)))
			rel := math.Abs(a.Loss-b.Loss) / math.Max(math.Abs(b.Loss), 1e-3)
			c.MaxImagesDiff = max(c.MaxImagesDiff, d)
			c.MaxLossRel = math.Max(c.MaxLossRel, rel)
			if d == 0 {
				c.AccuracyEqual++
			}
			if d > checkImages || rel > checkLossRel {
				problem = fmt.Sprintf("genome %d: accuracy %.4f vs %.4f, loss %.6g vs %.6g", a.ID, a.Accuracy, b.Accuracy, a.Loss, b.Loss)
			}
		}
		if problem == "" {
			c.Agree++
		} else if len(c.Problems) < 5 {
			c.Problems = append(c.Problems, problem)
		}
	}
	c.OK = c.Agree == c.Genomes
	return c
}

// WriteTable writes the report: one row per population and engine, the
// ceiling, and the fitness cross-check.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "neateval bench: %d images of %s, seed %d, %d threads (fitness_eval_parallel %d), best of %d",
		r.Images, r.Dataset, r.Seed, r.Threads, r.Parallel, r.Repeat)
	if r.LoadBefore != "" {
		fmt.Fprintf(w, ", load average %s before, %s after", r.LoadBefore, r.LoadAfter)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "population\tgenomes\tMFLOP/image\tweights\tengine\tseconds\timages·genomes/s\tGFLOP/s\tvs PyTorch\tof ceiling\t")
	for _, p := range r.Populations {
		rows := []*EngineResult{&p.Neateval}
		if p.PyTorch != nil {
			rows = append(rows, p.PyTorch)
		}
		if p.ONNXRuntime != nil {
			rows = append(rows, p.ONNXRuntime)
		}
		for i, e := range rows {
			head := fmt.Sprintf("%s\t%d\t%.1f\t%s", p.Preset, p.Genomes, float64(p.FLOPsPerImage)/1e6, vram.FormatBytes(p.WeightBytes))
			if i > 0 {
				head = "\t\t\t"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.0f\t%.1f\t%s\t%s\t\n", head, e.Engine, e.Seconds, e.ImagesGenomesPS, e.GFLOPS,
				ratio(e.VsPyTorch, "%.2f×"), ratio(100*e.OfCeiling, "%.1f%%"))
		}
	}
	if r.Ceiling != nil {
		fmt.Fprintf(tw, "ceiling\t\t\t\tOpenBLAS sgemm\t\t\t%.1f\t\t100%%\t\n", r.Ceiling.GFLOPS)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if r.Ceiling != nil {
		fmt.Fprintf(w, "ceiling: OpenBLAS sgemm of %d×%d matrices on %d threads, best of %d, the best of %d measurements %v GFLOP/s (%s)\n",
			r.Ceiling.N, r.Ceiling.N, r.Ceiling.Threads, r.Ceiling.Repeats, len(r.CeilingSamples), r.CeilingSamples, r.Ceiling.Config)
	} else {
		fmt.Fprintln(w, r.CeilingNote)
	}
	if r.TorchNote != "" {
		fmt.Fprintln(w, r.TorchNote)
	}
	if r.ORTNote != "" {
		fmt.Fprintln(w, r.ORTNote)
	}
	for _, p := range r.Populations {
		printCheck(w, p.Preset, "PyTorch", p.Check)
		printCheck(w, p.Preset, "onnxruntime", p.ORTCheck)
	}
}

// printCheck writes the fitness cross-check of neateval against peer.
func printCheck(w io.Writer, preset, peer string, c *fitnessCheck) {
	if c == nil {
		return
	}
	verdict := "ok"
	if !c.OK {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(w, "fitness %s: %s: %d of %d genomes agree with %s (accuracy equal on %d, at most %d image(s) apart; loss at most %.1e apart, relative)\n",
		preset, verdict, c.Agree, c.Genomes, peer, c.AccuracyEqual, c.MaxImagesDiff, c.MaxLossRel)
	for _, s := range c.Problems {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// ratio formats v, or "-" when it was not measured.
func ratio(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}
