package perfmodel

import (
	"fmt"
	"io"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
)

// Preset is a population the report covers (one scripts/gpu-prepare.sh
// generates): its reports at the full test set in float32 and TF32 per
// layer, and in float32 with the population path (Reports[0], [1], [2]),
// then at gpu-check.sh's images and batch, then at a small validation set
// (the same three each).
type Preset struct {
	Name    string
	Reports [9]Report
}

// pathName says which kernels a report's genomes take.
func pathName(r Report) string {
	if r.PopBatch == 0 {
		return "per layer"
	}
	return fmt.Sprintf("population (%d of %d genomes, %d a launch)", r.PopGenomes, r.Valid, r.PopBatch)
}

// precName is the compute_precision key's value for p.
func precName(p sched.Precision) string {
	if p == sched.TF32 {
		return "tf32"
	}
	return "fp32"
}

// ms formats a duration in milliseconds, three significant places.
func ms(d time.Duration) string {
	v := d.Seconds() * 1e3
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// WriteMarkdown writes the report of docs/gpu-performance-model.md.
func WriteMarkdown(w io.Writer, c Ceilings, presets []Preset) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# GPU performance model (a prediction, not measured)\n\n")
	p("**Prediction, not measured.** No GPU has run these kernels yet. This page is\n")
	p("generated (`make perf-model`, evaluator/cuda/internal/perfmodel) from the\n")
	p("schedules the backend launches, the registers and shared memory ptxas gave\n")
	p("each kernel in the committed sm_90 cubins (kernels/resources.sm_90.txt),\n")
	p("and the ceilings below. The first run on a card (`scripts/gpu-check.sh`,\n")
	p("steps bench-neateval and bench-tf32: images·genomes/s and device-ms/op,\n")
	p("the forwards' device time by their streams' events) measures the work of\n")
	p("the 2000 × 2000 rows: put its figures beside these, and the ratio says\n")
	p("where the kernels stand and which term of the model is wrong.\n\n")
	p("## The model\n\n")
	p("Per launch: the FLOPs the kernel's tiles issue (padding included: a\n")
	p("product tile is BM = 16, 32 or 64 rows × 128 columns, its k-steps 16\n")
	p("deep) over the FP32 rate, and the bytes it moves (each input once per row\n")
	p("tile, the weights, the output; nothing assumed cached) over the memory\n")
	p("bandwidth. The larger is the launch's time, divided by the grid's fill:\n")
	p("its blocks over the multiprocessors times the rounds they take (a grid of\n")
	p("fewer blocks than multiprocessors, like the one-block reduction, gets\n")
	p("their share of the rates), and at least %v. The host enqueues every\n", c.MinBlock)
	p("launch from one thread at %v each. Occupancy (blocks a multiprocessor\n", c.Launch)
	p("holds by its registers, shared memory and threads) is shown, not used:\n")
	p("a first card run that falls short where occupancy is low says it matters.\n")
	p("Float32 storage, the data set cached on the device.\n\n")
	p("| ceiling | %s |\n| --- | --- |\n", c.Name)
	p("| multiprocessors | %d |\n| FP32 FMA | %.1f TFLOP/s |\n| TF32 tensor cores (dense) | %.1f TFLOP/s |\n", c.SMs, c.FP32/1e12, c.TF32/1e12)
	p("| device memory | %.1f TB/s |\n| L2 | %d MB |\n| source | %s |\n\n", c.BW/1e12, c.L2>>20, c.Source)
	p("## Per preset\n\n")
	p("| population | precision | path | genomes (valid) | images × batch | launches | useful TFLOP | issued TFLOP | GB moved | device time (ms) | floor, perfect overlap (ms) | host enqueue (ms) | predicted M img·genomes/s |\n")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, ps := range presets {
		for _, r := range ps.Reports {
			p("| %s | %s | %s | %d (%d) | %d × %d | %d | %.3f | %.3f | %.1f | %s | %s | %s | %.2f |\n",
				ps.Name, precName(r.Precision), pathName(r), r.Genomes, r.Valid, r.Images, r.Batch, r.Total.Launches, r.Total.FLOPs/1e12, r.Total.Issued/1e12,
				r.Total.Bytes/1e9, ms(r.Total.Time), ms(r.Total.Full), ms(r.Host), r.Rate()/1e6)
		}
	}
	p("\nThe rows at 2000 × 2000 are what gpu-check.sh's bench-neateval (fp32)\n")
	p("and bench-tf32 steps run, with 4 streams: their device-ms/op sums each\n")
	p("forward's span, which on shared streams also holds the others' kernels,\n")
	p("so it lies between this device time and 4 times it; images·genomes/s\n")
	p("compares with the last column directly.\n\n")
	for _, ps := range presets {
		writeKernels(p, c, ps.Name, ps.Reports[0])
		writeKernels(p, c, ps.Name, ps.Reports[1])
		writeKernels(p, c, ps.Name, ps.Reports[2])
		writeKernels(p, c, ps.Name, ps.Reports[8])
	}
	p("## What the model says\n\n")
	p("- Issued over useful FLOPs is the tiles' padding: few output channels in a\n")
	p("  16-row tile, 1×3×3 = 9 taps in a 16-deep k-step. For the small preset it\n")
	p("  is the largest single waste; smaller tiles for small M, or a k-step of 8,\n")
	p("  win it back before any tensor core does.\n")
	p("- A kernel whose bound is memory gains nothing from tensor cores: the\n")
	p("  tf32 rows (compute_precision \"tf32\", the gemmtc_ kernels) move the\n")
	p("  same bytes, and only the compute-bound products get faster. The tf32\n")
	p("  rows price the gemmtc_ kernels at the datasheet's dense TF32 rate; the\n")
	p("  kernels as written feed the MMAs from shared memory one 4-byte operand\n")
	p("  and one cvt.rna.tf32 at a time (no ldmatrix, no pipelining), so expect\n")
	p("  them well short of it: the first card run says how far.\n")
	p("- Host enqueue above device time means the single worker thread, not the\n")
	p("  GPU, sets the pace: CUDA graphs per (genome, batch) are the cure.\n")
	p("- Occupancy is blocks/SM × 256 of 2,048 threads; the 64-row product tiles\n")
	p("  are held to few blocks by their registers.\n")
	p("- Pools fused into the convolution before them (the …_convpool_…\n")
	p("  rows; a prediction like the rest): a non-overlapping max or average\n")
	p("  pool that is its convolution's only consumer is reduced in the\n")
	p("  product's store, so the convolution's full-resolution output is never\n")
	p("  written nor read back, and pixels no window covers are not computed;\n")
	p("  a tile holds 128 / window² whole windows (3×3: 126 of 128 columns).\n")
	p("  Overlapping pools (3×3 stride 2, 2×2 stride 1) keep their pool_ rows.\n")
	p("  The loss is not fused into the last dense (evaluator/cuda/NOTES.md says\n")
	p("  why): reduce_logits stays a launch per forward.\n")
	p("- The population path (pop_forward, pop_reduce; rows \"population\"): a\n")
	p("  genome whose one image's activations fit in a block's dynamic shared\n")
	p("  memory (227 KiB on sm_90; tiles of several images up to 46 KiB, one\n")
	p("  image beyond) runs whole in one block per tile of images, %d forwards a\n", PopBatch)
	p("  launch, two launches in all. Its products are scalar loops whose FMAs\n")
	p("  each load two operands from shared memory and L1, priced here at\n")
	p("  %.3g of the FP32 rate (an assumption); a step with fewer outputs than\n", PopIssueShare)
	p("  the block's threads idles the rest (issued counts them), and a block of\n")
	p("  more than 46 KiB, few a multiprocessor, is priced like any other (its\n")
	p("  \"shared B\" column shows the static shared memory only). The backend\n")
	p("  takes the path for forwards of at most %.0f MFLOP (this model's\n", float64(sched.PopMaxWork)/1e6)
	p("  break-even): at the full test set almost no genome does, and the rows\n")
	p("  equal the per-layer ones; at small validation sets the launches it\n")
	p("  saves are most of the time. Both its share of the rate and the\n")
	p("  threshold are for the first card run to measure\n")
	p("  (NEATEVAL_CUDA_POPULATION=off and =all against the default).\n")
	return nil
}

func writeKernels(p func(string, ...any), c Ceilings, name string, r Report) {
	p("## Kernels: %s, %s, %s, %d images, batch %d\n\n", name, precName(r.Precision), pathName(r), r.Images, r.Batch)
	p("| kernel | launches | registers | shared B | local B | blocks/SM (occupancy) | useful GFLOP | issued GFLOP | GB | compute ms | memory ms | predicted ms | share | bound |\n")
	p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, k := range r.Kernels {
		occ := float64(k.BlocksPerSM*256) / float64(c.ThreadsPerSM) * 100
		p("| %s | %d | %d | %d | %d | %d (%.0f%%) | %.1f | %.1f | %.2f | %s | %s | %s | %.1f%% | %s |\n",
			k.Name, k.Launches, k.Res.Registers, k.Res.Shared, k.Res.Local, k.BlocksPerSM, occ,
			k.FLOPs/1e9, k.Issued/1e9, k.Bytes/1e9, ms(k.Compute), ms(k.Mem), ms(k.Time),
			100*k.Time.Seconds()/r.Total.Time.Seconds(), k.Bound(c.MinBlock))
	}
	p("\n")
}
