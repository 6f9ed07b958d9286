package cpu

import "github.com/neateval/neateval/evaluator"

func init() {
	evaluator.Register("cpu", func(o evaluator.BackendOptions) (evaluator.Backend, error) {
		return New(o)
	})
}
