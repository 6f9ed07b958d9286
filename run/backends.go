package run

// The CPU backend is always linked: a run can always fall back to it
// (eval.backend = "auto") and Plan sizes genomes for a device that is not
// at hand with its memory model. The CUDA backend registers itself from a
// build with the cuda tag (cmd/neateval/backend_cuda.go).
import _ "github.com/neateval/neateval/evaluator/cpu"
