//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/droverhq/drover/gres"
)

// affinityCPUs is the number of CPUs whose affinity bits Discover asks NVML
// for; NVML leaves CPUs beyond the buffer out, so it is set far above any
// machine Drover runs on.
const affinityCPUs = 8192

// errNotImplemented marks a call that the library panicked on instead of
// answering, as go-nvml's mocks do for every call they leave unset.
var errNotImplemented = errors.New("not implemented by this NVML library")

// call runs one NVML call, turning a non-SUCCESS return into an error that
// names the call (gonvml.Return is an error, so errors.Is works on it) and
// a panic into errNotImplemented.
func call[T any](name string, f func() (T, gonvml.Return)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("%s: %w (%v)", name, errNotImplemented, r)
		}
	}()
	v, ret := f()
	if ret != gonvml.SUCCESS {
		return v, fmt.Errorf("%s: %w", name, ret)
	}
	return v, nil
}

// Discover lists the GPUs that lib sees, in NVML index order (PCI bus
// order), with what slurmd's gpu/nvml AutoDetect reads: product name (Type
// is gres.NormalizeGPUType of it), UUID, minor number and /dev/nvidiaN,
// memory, PCI bus id, the CPUs near the device and NVLinks in gres.conf's
// Links= form.
//
// lib must be initialised (Init) by the caller, who also shuts it down.
// Count, handles, name, UUID, minor number and memory are required: a
// failure there is an error naming the device, because a node that reports
// unnamed GPUs would be scheduled wrongly. A GPU that NVML reports lost
// (ERROR_GPU_IS_LOST, as after XID 79) is the exception: it is left out
// and its index returned in lost, so that the node registers with fewer
// GPUs and is drained for it rather than not registering at all. The PCI
// bus id, CPU affinity and NVLink calls are optional: when NVML does not
// answer them (or a mock panics) the field stays empty. A device without
// NVLink support gets Slurm's self-only vector ("-1,0,0,...").
//
// MIG devices are not listed yet; a GPU in MIG mode is reported whole.
func Discover(lib gonvml.Interface) (devices []gres.Device, lost []int, err error) {
	count, err := call("nvmlDeviceGetCount", lib.DeviceGetCount)
	if err != nil {
		return nil, nil, err
	}
	handles := make([]gonvml.Device, count)
	busIDs := make([]string, count)
	for i := range count {
		h, err := call("nvmlDeviceGetHandleByIndex", func() (gonvml.Device, gonvml.Return) {
			return lib.DeviceGetHandleByIndex(i)
		})
		if errors.Is(err, gonvml.ERROR_GPU_IS_LOST) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		handles[i] = h
		if pci, err := call("nvmlDeviceGetPciInfo", h.GetPciInfo); err == nil {
			busIDs[i] = busIDString(pci.BusId)
		}
	}
	devices = make([]gres.Device, 0, count)
	for i, h := range handles {
		if h == nil {
			lost = append(lost, i)
			continue
		}
		d, err := describe(i, h, busIDs)
		if errors.Is(err, gonvml.ERROR_GPU_IS_LOST) {
			lost = append(lost, i)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		devices = append(devices, d)
	}
	return devices, lost, nil
}

// describe reads one device.
func describe(index int, h gonvml.Device, busIDs []string) (gres.Device, error) {
	name, err := call("nvmlDeviceGetName", h.GetName)
	if err != nil {
		return gres.Device{}, err
	}
	uuid, err := call("nvmlDeviceGetUUID", h.GetUUID)
	if err != nil {
		return gres.Device{}, err
	}
	minor, err := call("nvmlDeviceGetMinorNumber", h.GetMinorNumber)
	if err != nil {
		return gres.Device{}, err
	}
	mem, err := call("nvmlDeviceGetMemoryInfo", h.GetMemoryInfo)
	if err != nil {
		return gres.Device{}, err
	}
	return gres.Device{
		Index:     index,
		Minor:     minor,
		Type:      gres.NormalizeGPUType(name),
		Name:      name,
		UUID:      uuid,
		File:      "/dev/nvidia" + strconv.Itoa(minor),
		PCIBusID:  busIDs[index],
		MemoryMiB: mem.Total >> 20,
		Cores:     cpuAffinity(h),
		Links:     nvLinks(index, h, busIDs),
	}, nil
}

// cpuAffinity returns the CPUs NVML names as close to the device, "0-15",
// or "" when it cannot say.
func cpuAffinity(h gonvml.Device) string {
	mask, err := call("nvmlDeviceGetCpuAffinity", func() ([]uint, gonvml.Return) {
		return h.GetCpuAffinity(affinityCPUs)
	})
	if err != nil {
		return ""
	}
	var cpus []int
	for w, word := range mask {
		for word != 0 {
			b := bits.TrailingZeros(word)
			cpus = append(cpus, w*bits.UintSize+b)
			word &^= 1 << uint(b)
		}
	}
	return gres.FormatIDList(cpus)
}

// nvLinks builds the device's Links= vector as slurmd's gpu/nvml does: -1 for
// itself and, for every other device, the number of active NVLinks whose far
// end is that device (links to NVSwitches count for nothing). It returns ""
// when NVML cannot answer at all (the mocks), and the self-only vector when
// the device does not support NVLink.
func nvLinks(index int, h gonvml.Device, busIDs []string) string {
	links := make([]int, len(busIDs))
	links[index] = -1
	for link := range gonvml.NVLINK_MAX_LINKS {
		state, err := call("nvmlDeviceGetNvLinkState", func() (gonvml.EnableState, gonvml.Return) {
			return h.GetNvLinkState(link)
		})
		switch {
		case errors.Is(err, errNotImplemented):
			return ""
		case errors.Is(err, gonvml.ERROR_INVALID_ARGUMENT):
			continue // no such link on this device
		case errors.Is(err, gonvml.ERROR_NOT_SUPPORTED):
			return formatLinks(links)
		case err != nil || state != gonvml.FEATURE_ENABLED:
			continue
		}
		remote, err := call("nvmlDeviceGetNvLinkRemotePciInfo", func() (gonvml.PciInfo, gonvml.Return) {
			return h.GetNvLinkRemotePciInfo(link)
		})
		if errors.Is(err, errNotImplemented) {
			return ""
		}
		if err != nil {
			continue
		}
		if k := indexOfBus(busIDString(remote.BusId), busIDs); k >= 0 && k != index {
			links[k]++
		}
	}
	return formatLinks(links)
}

func formatLinks(links []int) string {
	parts := make([]string, len(links))
	for i, n := range links {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// busIDString turns NVML's NUL-terminated char array into a string.
func busIDString(raw [32]int8) string {
	b := make([]byte, 0, len(raw))
	for _, c := range raw {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// indexOfBus finds bus among the devices' bus ids; -1 when it is none of
// them (an NVSwitch, or an unknown id).
func indexOfBus(bus string, busIDs []string) int {
	want, ok := canonicalBusID(bus)
	if !ok {
		return -1
	}
	for i, b := range busIDs {
		if got, ok := canonicalBusID(b); ok && got == want {
			return i
		}
	}
	return -1
}

// canonicalBusID reads "domain:bus:device.function" in hex, with NVML's
// 8-digit or the legacy 4-digit domain, so that both spellings compare equal.
func canonicalBusID(s string) (string, bool) {
	dom, rest, ok1 := strings.Cut(s, ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return "", false
	}
	var v [4]uint64
	for i, part := range []string{dom, bus, dev, fn} {
		n, err := strconv.ParseUint(part, 16, 32)
		if err != nil {
			return "", false
		}
		v[i] = n
	}
	return fmt.Sprintf("%08x:%02x:%02x.%x", v[0], v[1], v[2], v[3]), true
}
