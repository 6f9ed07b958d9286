// Package ortrun scores populations exported as ONNX models with
// onnxruntime, the reference runtime that `neateval bench` and the export
// tests set beside neateval.
//
// onnxruntime is driven through Node: bench/ort_ref.js loads
// onnxruntime-node (its CPU library ships inside the npm package), runs
// every model of a folder that onnxexport.WritePopulation wrote on the
// MNIST-style IDX files that WriteIDX writes, and reports each genome's
// accuracy and loss, the time of the scoring alone, and, when asked, the
// logits. The protocol is torch_ref.py's, so the bench reads both alike:
//
//	r, err := ortrun.Find(ctx, "bench")
//	if errors.Is(err, ortrun.ErrUnavailable) {
//		// node or onnxruntime-node is missing: say so, go on without it
//	}
//	m, err := onnxexport.WritePopulation(modelDir, pop, onnxexport.Options{})
//	err = ortrun.WriteIDX(dataDir, ds)
//	res, err := r.Run(ctx, modelDir, dataDir, ortrun.Options{Threads: 2})
//
// Find looks for onnxruntime-node in the node_modules folder named by
// NEATEVAL_ORT_NODE_PATH, else in DefaultNodePath, where
// scripts/ort-deps.sh installs it.
package ortrun
