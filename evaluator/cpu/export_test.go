package cpu

// SetTileParallel chooses how a forward uses several threads: one part of
// whole tiles per thread (true, the default) or every kernel call sharing
// its images among the threads (false). It returns the previous setting;
// benchmarks compare the two.
func SetTileParallel(on bool) bool {
	prev := tileParallel
	tileParallel = on
	return prev
}

// SetTile makes every forward run in tiles of n images (0: each genome's
// own tile) and returns the previous setting; benchmarks compare the two.
func SetTile(n int) int {
	prev := forcedTile
	forcedTile = n
	return prev
}
