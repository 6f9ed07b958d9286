// Package plot draws the pictures an experimenter looks at after a run, as
// PNG files 800 pixels wide: the fitness curve of an evolution, the batch
// size and device memory over a run, and the accuracy of a population
// against its genomes' size and compute.
//
// Each picture has a reader of its input and a function that draws it:
//
//	gens, err := plot.ReadHistory("evolve-checkpoint") // its state.json and history.jsonl
//	tl, err := plot.ReadTimeline("run.log")            // neateval run --log-format json 2>run.log
//	rs, err := plot.ReadResults("results.jsonl")       // the results file
//
//	plot.FitnessCurve(w, gens, "")   // best and mean fitness, species, per generation
//	plot.TimelinePlot(w, tl, "")     // batch size, device memory, out-of-memories, over time
//	plot.Results(w, rs, "")          // accuracy against parameters and FLOPs
//
// An empty title gets one that says what is shown. The readers' errors
// are *InputError, naming the file and the line ("run.log:12: batch_shrink
// without \"old_batch\""); each reader has a Parse twin that reads an
// io.Reader.
//
// # What the timeline shows
//
// The log says little about memory directly, so the timeline draws what
// each of the batch controller's lines (vram's batch_shrink, batch_grow,
// batch_retry, batch_exhausted) implies: the device's memory less
// bytes_free is the memory in use at the change; a grow's bytes_requested
// is the memory the forward is predicted to need at the new batch; an
// out-of-memory's bytes_requested is the allocation that was refused. The
// device's size (the device line) and the staging plan's predicted peak
// (plan) are drawn as dashed lines. The batch-size line starts at the first
// change's old batch, joins the batch before and after each change, and
// each genome's final batch where the log has debug lines (genome_done),
// and holds the last to the end of the log.
//
// # Legibility
//
// Text is set at 96 dots per inch: tick labels are 16 pixels high in the
// 800-pixel-wide picture. Log axes carry units on their ticks (1k, 10M;
// 16 MiB, 1 GiB); series are told apart by colour (a palette safe for
// colour-blind readers) and by marker shape; legends sit above each panel,
// never over the data.
package plot
