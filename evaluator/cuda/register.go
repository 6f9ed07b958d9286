//go:build cuda

package cuda

import (
	"github.com/rs/zerolog/log"

	"github.com/neateval/neateval/evaluator"
)

func init() {
	evaluator.Register("cuda", func(o evaluator.BackendOptions) (evaluator.Backend, error) {
		return New(o)
	})
}

// New opens the CUDA backend on GPU o.DeviceIndex. o.MemoryBytes and
// o.Threads do not apply: the device's own memory is used, and the host
// only stages copies. It logs the device at info level on zerolog's global
// logger (and NVML's absence, when it is absent).
func New(o evaluator.BackendOptions) (*Backend, error) {
	b, err := newBackend(o, func() (driver, Info, error) { return openCU(o.DeviceIndex) })
	if err != nil {
		return nil, err
	}
	i := b.info
	ev := log.Info().Str("event", "cuda_device").Str("name", i.Name).Int("index", i.Index).
		Int64("total", i.Total).Int64("free", i.Free).Str("driver", i.Driver).Bool("nvml", i.NVML)
	if i.OtherProcesses >= 0 {
		ev = ev.Int64("other_processes", i.OtherProcesses)
	}
	if i.NVMLError != "" {
		ev = ev.Str("nvml_error", i.NVMLError)
	}
	ev.Msgf("cuda: %s (cuda:%d), %d MiB free of %d MiB", i.Name, i.Index, i.Free>>20, i.Total>>20)
	return b, nil
}
