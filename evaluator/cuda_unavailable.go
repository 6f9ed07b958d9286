//go:build !cuda

package evaluator

func init() {
	RegisterUnavailable("cuda", "rebuild with the cuda build tag on a machine with the CUDA driver: make build-cuda (go build -tags cuda ./cmd/neateval)")
}
