// Package harness measures neateval's CPU evaluation of whole populations
// against other engines in one run: `neateval bench` is its command line.
//
// Run generates each preset's population (the small and the wide preset of
// neat's generator; the evolve preset is a sample of an evolve run's
// genomes shipped in testdata, EvolvePopulation), scores it through the evaluator exactly as `neateval
// run` does, and, where they are installed, through PyTorch
// (bench/torch_ref.py, the same population written in the population
// format) and the machine's fp32 ceiling (bench/ceiling.sh, OpenBLAS
// sgemm), alternating engines Repeat times and keeping each one's fastest.
// The report has throughput in images·genomes/s and GFLOP/s, the ratio to
// PyTorch and the share of the ceiling, and a cross-check of every genome's
// fitness between the engines. bench/NOTES.md has the measurements.
package harness
