// Package results reads and writes the results file of a scoring run: JSON
// Lines, one object per genome, durable as results arrive and resumable
// after a crash.
//
// A run writes its file in two phases. While genomes are scored, each
// finished chunk's results are appended and synced to disk (Writer.Append),
// in whatever order the chunks finish; a process killed at any moment loses
// at most the chunk in flight. At the end, Writer.Finalize rewrites the file
// atomically in population order. Every line carries the run's id (a hash of
// the Header: population digest, genome count, data set, fitness), so a
// file is never continued by another run:
//
//	h := results.Header{Population: digest, Genomes: len(pop.Genomes), Dataset: ds.Identity(), Fitness: "accuracy"}
//	w, done, err := results.Resume("results.jsonl", h) // done: the results already in the file
//	...
//	err = w.Append(chunkResults) // synced before it returns
//	...
//	err = w.Finalize(all)        // population order, atomically
//
// Resume starts afresh when the file is missing or holds nothing; it cuts a
// last line torn by a crash; and it refuses, leaving the file untouched, a
// file of another run (errors.Is(err, ErrOtherRun)), one that is not a
// results file, or one whose lines do not fit the run (ErrDamaged).
//
// Read reads a whole file, for programs that consume results.
package results
