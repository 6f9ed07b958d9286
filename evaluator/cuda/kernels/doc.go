// Package kernels holds the CUDA C sources of the CUDA backend's kernels
// (*.cu, common.cuh), the PTX that nvcc makes of them, and the machine code
// that ptxas makes of that PTX for Hopper (sm_90), all three committed
// (make kernels regenerates them): a build needs no CUDA compiler.
//
// The PTX targets compute_80 (PTX ISA 7.8, from nvcc 11.8): it runs on
// Ampere and later through the driver's JIT. The sm_90 cubins are that same
// PTX assembled ahead of time, so an H100 or H200 loads them without the
// JIT (seconds for the 2.7 MB of the product kernels' PTX); any other GPU
// falls back to the PTX. Resources lists, per kernel, the registers, shared
// and local memory ptxas gave it in the cubin: the inputs of the
// performance model (docs/gpu-performance-model.md) and of what a GPU run
// logs beside the driver's own figures.
package kernels
