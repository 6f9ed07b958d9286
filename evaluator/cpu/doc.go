// Package cpu is the evaluator backend that computes forwards on the host's
// cores, registered as "cpu": the backend of every machine, and the one
// evaluator.OpenBackend("auto") falls back to.
//
// # Memory
//
// Its device is a vram.CPUDevice: an arena of fixed capacity
// (BackendOptions.MemoryBytes) in which the weights, the cached validation
// set, the activations and the workspace are really allocated. A batch too
// large for the configured memory fails with the out-of-memory error a GPU
// gives, and the evaluator's batch controller and staging planner run on
// the CPU exactly as on a GPU. Faults can be injected into the arena
// (BackendOptions.Faults) to drill that recovery.
//
// A genome's weights are one block (Load); in float32 the forwards read
// the graph's own tensors and the block is reserved but never written, as
// a forward's block is while its tiles run in a reused workspace. A forward
// allocates one more
// block for everything it needs, before its first step, laid out by a
// greedy-by-size planner over the buffers' lifetimes (memPlan): one
// allocation per slice, an out-of-memory before any work, and a Footprint
// that is the allocation itself, within a few percent of the liveness peak.
//
// # Forward
//
// A forward runs depth-first in tiles of a few images sized per genome to
// stay in the core's caches. With T threads it is cut into one part per
// thread, each taking whole tiles through every step on its own region of
// the block; a slice of one tile (a small validation set) is split by
// images into one part per thread instead, whose logits are reduced
// together as the tile's; a slice of several tiles but fewer than threads
// runs as one part whose kernel calls share the threads. In float32, each layer's weights are
// packed for the kernels once per forward, and a convolution whose output
// only a pool reads runs with that pool a few images at a time, so that
// the pool reads it from L2; a tanh or sigmoid convolution whose output
// only a max pool reads leaves its activation to the pool's output, a
// quarter of the values or fewer (acts.go: the same function, up to the
// last places where the float32 activations step down). In bfloat16, weights and
// activations are stored as bfloat16 and every step computes in float32
// on a tile of images converted on the fly. The kernels themselves
// (convolution, dense, pooling, merges, activations, in Go and AVX2/AVX-512
// assembly) are the package evaluator/cpu/kernels.
//
// The kernels compute each image the same whatever the other images of a
// call, and the images' losses are summed exactly (evaluator.Sum), so
// results depend neither on the thread count nor on how the images were
// tiled or sliced, not even in the last bit of the loss.
//
// # Use
//
// Directly:
//
//	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 4 << 30, Threads: 2})
//	defer b.Close()
//	e, err := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{})
//
// or by name, with this package linked (import _ ".../evaluator/cpu"):
//
//	b, err := evaluator.OpenBackend("cpu", evaluator.BackendOptions{...})
package cpu
