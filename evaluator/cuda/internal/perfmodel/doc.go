// Package perfmodel predicts how long the CUDA backend's kernels take on a
// GPU, from what the schedules launch (internal/sched), what ptxas gave
// each kernel (kernels.Resources) and the card's ceilings: per launch, the
// floating-point operations the kernel issues over the FP32 rate and the
// bytes it moves over the memory bandwidth, the larger of the two, scaled
// up when the grid fills the multiprocessors only partly (waves of as many
// blocks as the occupancy allows). Summed per kernel and per population,
// it is a prediction, not a measurement: the first GPU run
// (scripts/gpu-check.sh) measures the same work, and the ratio between the
// two says where the kernels stand. docs/gpu-performance-model.md is its
// report (make perf-model).
package perfmodel
