package cuda

// The events the CUDA backend logs (the "event" field), on the logger of
// its BackendOptions, and their field keys; docs/log-events.md lists them.
const (
	// EventDevice: the device the backend opened.
	EventDevice = "cuda_device"
	// EventModule: a kernel module loaded: the sm_90 cubin, or the PTX
	// through the driver's JIT, and how long it took.
	EventModule = "cuda_module"
	// EventKernel (debug; warn for a kernel that spills to local memory):
	// what the driver says of a kernel.
	EventKernel = "cuda_kernel"
)

// Field keys of the CUDA backend's events.
const (
	KeyEvent          = "event"
	KeyName           = "name"
	KeyIndex          = "index"
	KeyTotal          = "total"
	KeyFree           = "free"
	KeyDriver         = "driver"
	KeyNVML           = "nvml"
	KeyOtherProcesses = "other_processes"
	KeyNVMLError      = "nvml_error"
	KeyModule         = "module"
	KeyImage          = "image"
	KeyLoadMS         = "load_ms"
	KeyFallback       = "fallback"
	KeyKernel         = "kernel"
	KeyRegisters      = "registers"
	KeyShared         = "shared_bytes"
	KeyLocal          = "local_bytes"
	KeyBlocksPerSM    = "blocks_per_sm"
	KeyCC             = "cc"
	KeySMs            = "sms"
	KeyStreams        = "streams"
)
