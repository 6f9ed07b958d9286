// Package sched turns a compiled genome into the work of one forward on the
// GPU: the layout of the forward's one device allocation (the arena), made
// by replaying the graph's liveness schedule through a first-fit offset
// allocator, and the list of kernel launches with their arguments, relative
// to the arena, the weight block and the slice's images and labels. It is
// pure Go, built and tested without CUDA; the cuda-tagged backend resolves
// the bases to device addresses and launches.
//
// Footprint is computed from the same layout, so the memory model the
// staging planner and the batch controller use is what a forward allocates.
package sched
