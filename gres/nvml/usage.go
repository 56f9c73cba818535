//go:build cgo

package nvml

import (
	"slices"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/droverhq/drover/plugins/protocol"
)

// Usage measures, on each device asked for, the device memory of the
// processes asked for (NVML's running compute processes) and how busy
// the device is (its utilization rate), as Slurm's gpu/nvml plugin
// gathers gres/gpumem and gres/gpuutil. A device NVML cannot read is
// left out.
func Usage(lib gonvml.Interface, req *protocol.UsageRequest) *protocol.UsageReply {
	out := &protocol.UsageReply{}
	for _, i := range req.Devices {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			continue
		}
		if procs, ret := dev.GetComputeRunningProcesses(); ret == gonvml.SUCCESS {
			for _, p := range procs {
				if slices.Contains(req.Pids, int(p.Pid)) {
					out.Processes = append(out.Processes, protocol.ProcessUsage{Device: i, Pid: int(p.Pid), Memory: p.UsedGpuMemory})
				}
			}
		}
		if u, ret := dev.GetUtilizationRates(); ret == gonvml.SUCCESS {
			out.Devices = append(out.Devices, protocol.DeviceUsage{Index: i, Utilization: u.Gpu})
		}
	}
	return out
}

func (p *Plugin) usage(req *protocol.UsageRequest) (*protocol.UsageReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Usage(p.lib, req), nil
}
