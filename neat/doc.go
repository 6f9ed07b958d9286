// Package neat knows the genomes that neateval scores: it reads and writes
// populations in the neateval.population/v1 format, validates each genome
// into a Graph whose shapes, parameter count, FLOPs and peak activation
// memory are known, draws random populations that look like NEAT's, and
// evolves populations with NEAT.
//
// # Reading a population
//
// A population is NAME.json (every genome's topology) and a safetensors
// file of weights that its "weights" field names:
//
//	pop, err := neat.Load("population.json")
//	if err != nil {
//		return err // the file as a whole is unusable; the message names it
//	}
//	for _, g := range pop.Genomes {
//		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
//		if err != nil {
//			// this genome alone is broken: "genome 17, node 4: conv2d
//			// weight shape [8 1 3 3], want [8 2 3 3]"; score the others
//			continue
//		}
//		_ = gr.FLOPs // and gr.Params, gr.WeightBytes, gr.PeakActivationBytes
//	}
//
// Load fails only for the format's whole-file errors: a file that cannot be
// read or is not JSON, a wrong "format", a bad "input" or "num_classes", no
// genomes, a genome without a non-negative integer id, duplicate genome ids,
// a missing weights file, a safetensors header that is not JSON, points
// outside the file or disagrees with its dtypes' sizes. The error names the
// file and the key or byte offset.
//
// Anything wrong within one genome is kept with that genome and reported by
// Compile as a *GenomeError naming the genome and the node:
//   - structure (Genome.Invalid, or Compile's own checks): output or nodes
//     missing, a node id or inputs that are not integers, node ids not
//     positive or not unique, inputs that do not exist, a cycle. These hold
//     for every listed node.
//   - fields (Node.Problem) and everything else: an integer field that is a
//     string, float or boolean ("kernel": "3", 3.0 and true are all
//     rejected), a missing required field, an unknown op, merge or
//     activation, shapes that do not fit, a weight that is missing,
//     misshapen, of a dtype other than F32, F16 or BF16, or not finite.
//     These count only for nodes the output depends on: an unreachable node
//     may be broken in any of these ways and its genome is still valid.
//
// Fields the format does not know are ignored, and so are the fields of
// other ops (padding on a pool, kernel on a dense node) and merge on a node
// with one input. Tensors no listed node names are never decoded.
//
// # Graphs and figures
//
// Compile resolves defaults (stride, padding kernel/2, merge sum, relu for
// conv2d, identity for dense), infers every shape, orders the reachable
// nodes so that each comes after its inputs, and records after which step
// each value is dead (Step.Release). Graph.FLOPs is 2 × the multiply-adds of
// the conv2d and dense nodes per image; Graph.Params counts weights and
// biases; PeakActivationBytes walks the same liveness schedule the
// evaluator follows, so it is the largest set of values alive at once, not
// the sum of all of them.
//
// The format sets no upper bound on sizes; this package bounds every field
// and every value's elements per image by MaxSize (2³¹), far beyond any
// device, so that shape arithmetic cannot overflow.
//
// # Writing and generating
//
// Save writes a population (JSON and F32 safetensors, atomically, bytes
// that depend only on the population), and Load gives the same genomes
// back. ReadSafetensors, DecodeSafetensors and WriteSafetensors handle
// safetensors files of any tensors, for checkpoints.
//
// Generate draws a seeded population of valid genomes: convolutions of
// varied depth and width, pooling, strides, skip connections that sum
// (over unequal channel counts too) or concatenate, global-average-pool or
// flatten heads with an optional hidden dense layer, every activation, and
// now and then a node the output does not use. DefaultGenConfig keeps
// genomes small (at most 3 MFLOP per 28×28 image, about 1 on average);
// WideGenConfig is for benchmarks.
//
//	pop := neat.Generate(1, 64, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
//	err := neat.Save(pop, "population.json", "population.safetensors")
//
// # Evolving
//
// Evolution is NEAT carried to CNN layers. Node ids are the historical
// markings: a node that splits the same edge in the same generation gets
// the same id in every genome, so crossover aligns the nodes two parents
// share. Mutations add a conv2d on an edge, add a skip connection (sum or
// concat, where heights and widths agree), remove a node, change a
// conv2d's channels, kernel or activation (weights kept where they
// overlap; consumers read new channels with weight 0), and perturb
// weights; every child is checked with Compile. Genomes are speciated by
// a compatibility distance over topology and weights; species share the
// next generation by fitness sharing, keep their best (elitism) and die
// when they stagnate, the best species excepted. Most of a species'
// children are, by default, samples of an evolution strategy on its
// weights (EvolveConfig.ESShare): mirrored perturbations of a centre
// genome that moves each generation to the rank-weighted sum of its
// scored samples, as SNES moves its mean, and whose step size σ adapts
// by SNES's rule (EvolveConfig.ESSigmaRate), its step falling along a
// schedule (EvolveConfig.ESAnneal) so that a long run settles instead of
// jittering around the optimum; random perturbation and selection alone
// tune thousands of weights far more slowly. The first generation is one
// small CNN by default (InitConv, shaped by InitConvs, InitKernel and
// InitPools). The fitness
// is the caller's function, NaN for a genome it could not score:
//
//	evo, err := neat.NewEvolution(in, 10, neat.DefaultEvolveConfig())
//	for evo.Generation() < 100 {
//		st, err := evo.Step(ctx, fitness) // fitness(ctx, pop) ([]float64, error)
//		err = evo.SaveCheckpoint("ckpt", "")
//	}
//	best, fitness, generation := evo.Best()
//
// One seeded random stream drives the run: the same seed and config give
// the same genomes, and a run loaded with LoadCheckpoint continues exactly
// as if it had not stopped.
package neat
