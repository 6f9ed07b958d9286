//go:build cuda

package cuda

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/evaluator"
)

func init() {
	evaluator.Register("cuda", func(o evaluator.BackendOptions) (evaluator.Backend, error) {
		return New(o)
	})
}

// New opens the CUDA backend on GPU o.DeviceIndex. o.MemoryBytes and
// o.Threads do not apply: the device's own memory is used, and the host
// only stages copies. It logs the device and its kernels' load on
// o.Logger (nothing when it is nil).
func New(o evaluator.BackendOptions) (*Backend, error) {
	b, err := newBackend(o, func() (driver, Info, error) { return openCU(o.DeviceIndex) })
	if err != nil {
		return nil, err
	}
	log := zerolog.Nop()
	if o.Logger != nil {
		log = *o.Logger
	}
	i := b.info
	ev := log.Info().Str(KeyEvent, EventDevice).Str(KeyName, i.Name).Int(KeyIndex, i.Index).
		Int64(KeyTotal, i.Total).Int64(KeyFree, i.Free).Str(KeyDriver, i.Driver).Bool(KeyNVML, i.NVML)
	if i.OtherProcesses >= 0 {
		ev = ev.Int64(KeyOtherProcesses, i.OtherProcesses)
	}
	if i.NVMLError != "" {
		ev = ev.Str(KeyNVMLError, i.NVMLError)
	}
	ev.Msgf("cuda: %s (cuda:%d), %d MiB free of %d MiB", i.Name, i.Index, i.Free>>20, i.Total>>20)
	logKernels(&log, i)
	return b, nil
}

// logKernels logs how each module was loaded (info) and what the driver
// says of each kernel (debug; a kernel with local memory, a spill, at
// warn).
func logKernels(log *zerolog.Logger, i Info) {
	for _, m := range i.Modules {
		ev := log.Info().Str(KeyEvent, EventModule).Str(KeyModule, m.Name).Str(KeyImage, m.Image).
			Float64(KeyLoadMS, float64(m.Took.Microseconds())/1000).Int(KeyCC, i.CC).Int(KeySMs, i.SMs).Int(KeyStreams, i.Streams)
		if m.Fallback != "" {
			ev = ev.Str(KeyFallback, m.Fallback)
		}
		ev.Msgf("cuda: module %s: %s loaded in %v", m.Name, m.Image, m.Took.Round(time.Millisecond))
	}
	for _, k := range i.Kernels {
		ev := log.Debug()
		if k.Local > 0 {
			ev = log.Warn()
		}
		ev.Str(KeyEvent, EventKernel).Str(KeyKernel, k.Name).Int(KeyRegisters, k.Registers).
			Int(KeyShared, k.Shared).Int(KeyLocal, k.Local).Int(KeyBlocksPerSM, k.BlocksPerSM).
			Msgf("cuda: kernel %s: %d registers, %d B shared, %d B local, %d blocks a multiprocessor", k.Name, k.Registers, k.Shared, k.Local, k.BlocksPerSM)
	}
}
