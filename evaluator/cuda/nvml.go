//go:build cuda

package cuda

import (
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlInfo fills in what NVML knows of the GPU with this UUID: the driver's
// version and the device memory other processes hold. NVML is the library
// libnvidia-ml.so.1 of the driver, loaded now; without it the fields stay
// unknown and NVMLError says why.
func nvmlInfo(uuid string, info *Info) {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		info.NVMLError = "nvml: " + nvml.ErrorString(ret)
		return
	}
	defer nvml.Shutdown()
	info.NVML = true
	if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		info.Driver += ", driver " + v
	}
	dev, ret := nvml.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		info.NVMLError = "nvml: device " + uuid + ": " + nvml.ErrorString(ret)
		return
	}
	procs, ret := dev.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		info.NVMLError = "nvml: processes: " + nvml.ErrorString(ret)
		return
	}
	self := uint32(os.Getpid())
	var other int64
	for _, p := range procs {
		if p.Pid != self {
			other += int64(p.UsedGpuMemory)
		}
	}
	info.OtherProcesses = other
}
