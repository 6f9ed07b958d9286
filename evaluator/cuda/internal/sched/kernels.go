package sched

import (
	"fmt"

	"github.com/neateval/neateval/vram"
)

// Kernel is an index into Kernels: one extern "C" entry point of the PTX.
type Kernel uint16

// Kernels lists the name of every kernel the schedules use, in Kernel
// order: the products gemm_… (float32 FMA) and gemmtc_… (TF32 tensor
// cores), with a fused pool …_convpool_…, the pools, merges and the reduction, and the population kernels
// (pop_…). Each is an entry point of evaluator/cuda/kernels/neateval.ptx;
// a test checks the two agree.
var Kernels []string

var kernelIndex = map[string]Kernel{}

// Storage element types, as the kernel names spell them: f = float32,
// h = bfloat16 (the top half of a float32).
const (
	elemF = 'f'
	elemH = 'h'
)

// The matrix-product tile configurations, by the number of output channels
// (or features) M: a block computes BM rows × 128 columns with 256 threads.
var gemmConfigs = []struct {
	name string
	bm   int
}{{"m16", 16}, {"m32", 32}, {"m64", 64}}

// gemmTypes are the (weight, input, output) storage types instantiated:
// everything float32, or bfloat16 weights with bfloat16 or float32 input
// (a merged input is float32) and output (the logits are float32).
var gemmTypes = []string{"fff", "hhh", "hhf", "hfh", "hff"}

// poolTypes are the types of the convolutions with a fused pool
// (…_convpool_…): those of gemmTypes whose output is not the logits.
var poolTypes = []string{"fff", "hhh", "hfh"}

func init() {
	add := func(name string) {
		kernelIndex[name] = Kernel(len(Kernels))
		Kernels = append(Kernels, name)
	}
	for _, prefix := range []string{"gemm", "gemmtc"} {
		for _, c := range gemmConfigs {
			for _, kind := range []string{"conv", "dense"} {
				for _, t := range gemmTypes {
					add(fmt.Sprintf("%s_%s_%s_%s", prefix, c.name, kind, t))
				}
			}
			for _, t := range poolTypes {
				add(fmt.Sprintf("%s_%s_convpool_%s", prefix, c.name, t))
			}
		}
	}
	io := []string{"ff", "fh", "hf", "hh"}
	for _, op := range []string{"pool_max", "pool_avg", "gap"} {
		for _, t := range io {
			add(op + "_" + t)
		}
	}
	for _, op := range []string{"merge_pad", "merge_add", "merge_cat"} {
		for _, t := range []string{"f", "h"} {
			add(op + "_" + t)
		}
	}
	add("reduce_logits")
	add("pop_forward_f")
	add("pop_forward_h")
	add("pop_reduce")
}

// kernel returns the index of a kernel by name; the names built by this
// package are all in the table, so a miss is a bug.
func kernel(name string) Kernel {
	k, ok := kernelIndex[name]
	if !ok {
		panic("sched: no kernel " + name)
	}
	return k
}

func elemChar(dt vram.DType) byte {
	if dt == vram.BFloat16 {
		return elemH
	}
	return elemF
}

// gemmConfig picks the tile configuration for m output rows: the smallest
// whose BM holds them, the largest beyond.
func gemmConfig(m int) (name string, bm int) {
	for _, c := range gemmConfigs {
		if m <= c.bm {
			return c.name, c.bm
		}
	}
	c := gemmConfigs[len(gemmConfigs)-1]
	return c.name, c.bm
}
