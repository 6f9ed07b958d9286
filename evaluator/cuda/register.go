//go:build cuda

package cuda

import (
	"time"

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
	logKernels(i)
	return b, nil
}

// The log keys of the kernels' load.
const (
	keyEvent       = "event"
	keyModule      = "module"
	keyImage       = "image"
	keyLoadMS      = "load_ms"
	keyFallback    = "fallback"
	keyKernel      = "kernel"
	keyRegisters   = "registers"
	keyShared      = "shared_bytes"
	keyLocal       = "local_bytes"
	keyBlocksPerSM = "blocks_per_sm"
	keyCC          = "cc"
	keySMs         = "sms"
	keyStreams     = "streams"
)

// logKernels logs how each module was loaded (info) and what the driver
// says of each kernel (debug; a kernel with local memory, a spill, at
// warn).
func logKernels(i Info) {
	for _, m := range i.Modules {
		ev := log.Info().Str(keyEvent, "cuda_module").Str(keyModule, m.Name).Str(keyImage, m.Image).
			Float64(keyLoadMS, float64(m.Took.Microseconds())/1000).Int(keyCC, i.CC).Int(keySMs, i.SMs).Int(keyStreams, i.Streams)
		if m.Fallback != "" {
			ev = ev.Str(keyFallback, m.Fallback)
		}
		ev.Msgf("cuda: module %s: %s loaded in %v", m.Name, m.Image, m.Took.Round(time.Millisecond))
	}
	for _, k := range i.Kernels {
		ev := log.Debug()
		if k.Local > 0 {
			ev = log.Warn()
		}
		ev.Str(keyEvent, "cuda_kernel").Str(keyKernel, k.Name).Int(keyRegisters, k.Registers).
			Int(keyShared, k.Shared).Int(keyLocal, k.Local).Int(keyBlocksPerSM, k.BlocksPerSM).
			Msgf("cuda: kernel %s: %d registers, %d B shared, %d B local, %d blocks a multiprocessor", k.Name, k.Registers, k.Shared, k.Local, k.BlocksPerSM)
	}
}
