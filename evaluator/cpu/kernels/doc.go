// Package kernels computes the layers of neateval's CPU backend: 2-D
// convolution, dense layers, pooling, merges and activations over float32
// NCHW batches.
//
// # Paths
//
// Every kernel has a pure-Go implementation, the reference, and assembly
// twins for AVX2+FMA and AVX-512 (gonum's pattern: *_amd64.go and *_amd64.s
// beside *_noasm.go under the build tags "!amd64 || noasm"). The fastest path
// the processor supports is selected at start-up (golang.org/x/sys/cpu);
// [Select] switches paths at run time so that tests and benchmarks can run
// all of them in one process. The paths compute the same values up to float
// rounding: the assembly uses fused multiply-adds where Go rounds twice.
//
// # Algorithms
//
// Convolutions and dense layers are matrix products C = A·B computed by
// register-blocked micro-kernels: up to 28 rows (output channels, or batch
// rows) by 16 to 64 columns (output pixels, or output features), with the
// column vectors read through a per-k offset table and the bias, ReLU and
// LeakyReLU fused into the store. Tanh, sigmoid and GELU follow as a vector
// pass over the freshly written, cache-hot output. Per shape, Conv2D picks
// by a cost model between
//
//   - direct: the image, zero-padded and (for stride S) split into S×S phase
//     planes, is read in place; tile columns are consecutive positions of
//     the padded rows, the padding columns are masked out of the stores.
//     At stride 1 the image may instead be copied into K column-shifted
//     planes per channel, whose rows hold output columns only: no lanes
//     on padding, one store run per tile, for a K-fold copy (the cost
//     model takes it for the one-channel first layers and small channel
//     counts). Best on large maps (28×28, 14×14) and for small channel
//     counts, where nothing is copied per filter tap;
//   - packed: im2col one tile at a time, by row-run vector copies, with
//     tiles spanning a group of images. Best on small maps (7×7 and below),
//     where the direct tiles would waste lanes. (1×1 filters had gone
//     packed too, for the direct tiles' scattered loads; since a tile over
//     rows without padding columns stores one run, the direct variant
//     reads them in place faster: 10–80 % on the small preset's shapes.)
//
// and, for 3×3 and 5×5 filters of stride 1 where a cost model of the
// shape predicts it faster:
//
//   - Winograd F(2×2, K×K): each 2×2 block of outputs from its (K+1)²
//     input pixels, transformed, multiplied position by position with the
//     transformed weights (the same micro-kernels, C deep) and transformed
//     back: 2.25× (3×3) and 2.78× (5×5) fewer multiplications, for an
//     input transform shared by the output channels and an output
//     transform shared by the input channels. The model (wgRatio) weighs
//     these with coefficients fitted to measured times (bench/wgfit.py):
//     wide layers take it, few channels, small maps and one-channel inputs
//     do not. Its sums are not the direct ones bit for bit (a few units in
//     the last place more error, see conv_winograd.go), so it is chosen by
//     the shape alone: a layer's results never depend on the batch, the
//     threads or the path.
//
// With stride 1 and no padding both read the batch's images where they lie
// when an image is at most 48 KiB (the last image, with no slack after it,
// is still copied into planes).
//
// Dense layers pack Wᵀ in column panels and the batch in row panels; a
// dense layer of at most 16 outputs on AVX-512 reads the batch rows where
// they lie instead (the same sums in the same order). Small channel counts
// (1 to 16) keep their speed because the tile height is a run-time argument
// (no padding to the register block) and the tile width is chosen per
// shape. Pools run vector kernels: 2×2 stride 2, any window by a row
// kernel (AVX-512 and AVX2), and on AVX-512 the evolve genomes' 4×4
// stride 4 in one pass over four rows (without sign bits or NaN, as a ReLU
// leaves them, in any order).
//
// # Memory and threads
//
// No kernel allocates: scratch comes from the caller, sized up front by
// [ConvWorkspace] and [DenseWorkspace] (valid on every path, for any batch up
// to the one asked). Conv2D and Dense pack their weights into that scratch
// on every call; a caller that runs a layer many times packs them once with
// [PackConv] or [PackDense] and calls [Conv2DPacked] or [DensePacked], with
// the same results. With
// threads > 1 a call fans out to that many goroutines over images (or batch
// rows) and waits for them; threads = 1 runs on the caller's goroutine.
// Kernels keep no state between calls, so independent forwards may run
// concurrently, each with its own workspace.
//
// Bad arguments (lengths, shapes) panic with a message prefixed "kernels:":
// they are bugs of the caller, which validates genomes before it runs them.
package kernels
