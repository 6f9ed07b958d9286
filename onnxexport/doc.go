// Package onnxexport writes genomes as ONNX models, so that any ONNX
// runtime computes the logits neateval computes.
//
// A model has one input, "input", a float tensor [N, C, H, W] of images as
// the population format feeds them (x/255, then normalised where the run
// normalises), N symbolic, and one output, "logits" [N, classes]. Only the
// nodes the genome's output depends on are written, each as the ops of the
// default ONNX domain, opset 17 (IR version 8):
//
//	conv2d           Conv (kernel_shape, strides, pads from the node, defaults resolved)
//	maxpool2d        MaxPool, floor mode, no padding
//	avgpool2d        AveragePool, floor mode, no padding (so it divides by k·k)
//	global_avg_pool  GlobalAveragePool, then Flatten to [N, C]
//	dense            Gemm (transB) after Flatten(axis 1) of a 4-D input: C, H, W order
//	sum merge        Pad (constant zeros, at the end of axis 1) of every input
//	                 narrower than the widest, then Add in listed order
//	concat merge     Concat on axis 1, in listed order
//	relu, leaky_relu Relu, LeakyRelu (alpha 0.01)
//	tanh, sigmoid    Tanh, Sigmoid
//	gelu             x · ½ · (1 + Erf(x / √2)), the exact form (the Gelu op is
//	                 opset 20's, newer than many runtimes)
//
// Weights and biases are initializers named as in the population's
// safetensors file ("g17.n4.weight"); values are named after their node
// ("n4", "n4.merged"). The model records the genome id in its metadata
// ("neateval.genome_id").
//
// The encoding is plain protobuf written with protowire by the field numbers
// of onnx.proto; the package needs no generated code. Tests check every model
// of generated populations and of the format's edge cases with the onnx
// package's checker (full check, strict shape inference) and run them with
// onnxruntime against neateval's float64 reference.
//
//	f, _ := os.Create("genome-17.onnx")
//	err := onnxexport.Write(f, g, pop.Input, pop.NumClasses, onnxexport.Options{})
//
// WritePopulation writes a folder of models and a manifest listing them in
// the population's order (what bench/ort_ref.js reads); Best picks the best
// genome of an evolve run's checkpoint.
package onnxexport
