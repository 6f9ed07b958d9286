//go:build cuda

package main

// The CUDA backend registers itself as "cuda"; with it linked in,
// backend = "auto" picks the GPU when one opens.
import _ "github.com/neateval/neateval/evaluator/cuda"
