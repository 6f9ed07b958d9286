// Package tfevents writes and reads TensorBoard event files, so that the
// fitness of an evolution and the throughput and memory of a run can be
// watched in TensorBoard as they happen.
//
// # Writing
//
// Create opens a new file in a log folder; each method then appends one
// event and syncs it to disk:
//
//	w, err := tfevents.Create("runs/exp1", tfevents.Options{})
//	if err != nil {
//		return err
//	}
//	defer w.Close()
//	w.Generation(tfevents.Generation{Gen: 3, Best: 0.91, Mean: 0.62, Median: 0.66, Species: 4})
//	w.Scalar("my/own_tag", 3, 1.5)
//
// and `tensorboard --logdir runs` shows a chart per tag. The tags neateval
// writes are the Tag* constants:
//
//   - per generation, Writer.Generation: best, mean and median fitness
//     (FitnessStats computes them from a generation's fitness), species,
//     the best genome's parameters and FLOPs, genomes evaluated and failed;
//   - per run, Writer.Run: throughput, the plan's predicted peak and the
//     allocator's measured peak of device memory;
//   - each change of the batch size, Writer.BatchSize.
//
// The batch controller (package vram) only logs its changes, so
// Writer.LogSink gives a zerolog logger a second output that turns those
// lines into batch-size scalars:
//
//	log := zerolog.New(zerolog.MultiLevelWriter(stderr, w.LogSink()))
//
// # The file format
//
// An event file is a sequence of records, each framed as TensorFlow's
// record writer frames it:
//
//	uint64 length                     little-endian
//	uint32 masked CRC32C of length    the 8 bytes above
//	byte   data[length]               a serialized tensorflow.Event
//	uint32 masked CRC32C of data
//
// where a masked CRC is the CRC-32C (Castagnoli) c turned into
// ((c >> 15) | (c << 17)) + 0xa282ead8, all in 32 bits. The data is the
// protobuf message Event of tensorflow/core/util/event.proto (wall_time 1,
// double; step 2, int64; file_version 3, string; summary 5, a Summary of
// tensorflow/core/framework/summary.proto whose repeated value 1 holds a
// tag 1, string, and a simple_value 2, float). It is encoded field by
// field with google.golang.org/protobuf/encoding/protowire: no TensorFlow,
// no generated code. The first event of every file carries file_version
// "brain.Event:2" and no summary.
//
// # Crashes
//
// Every event is written with a single write call and then synced, so a
// process killed at any moment leaves whole records followed by at most a
// part of one. Read returns the whole records and reports the part's length
// in Log.Tail instead of failing; TensorBoard itself does the same.
// Checksums that do not match are errors (ErrCorrupt) naming the record's
// byte offset: that is damage, not a crash.
package tfevents
