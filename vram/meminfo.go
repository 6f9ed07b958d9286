package vram

// Bounds of DefaultCPUMemory.
const (
	minDefaultCPUMemory int64 = 256 << 20
	// fallbackCPUMemory is the default where the host's memory is unknown.
	fallbackCPUMemory int64 = 2 << 30
)

// DefaultCPUMemory is the CPU device's capacity when the config sets none:
// half of the host's physical memory (MemTotal in /proc/meminfo on Linux),
// at least 256 MiB; 2 GiB where the host's memory cannot be read. The arena
// commits memory only as it is used, so a generous capacity costs nothing
// until a batch fills it.
func DefaultCPUMemory() int64 {
	total, ok := hostMemory()
	if !ok {
		return fallbackCPUMemory
	}
	return max(total/2, minDefaultCPUMemory)
}
