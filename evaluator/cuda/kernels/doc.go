// Package kernels holds the CUDA C sources of the CUDA backend's kernels
// (*.cu, common.cuh) and the PTX that nvcc makes of them (make ptx), which
// is committed and embedded here for cuModuleLoadData: a build needs no
// CUDA compiler, and the driver compiles the PTX for the GPU it finds.
//
// The PTX targets compute_80 (PTX ISA 7.8, from nvcc 11.8): it runs on
// Ampere and later, Hopper included, through the driver's JIT.
package kernels
