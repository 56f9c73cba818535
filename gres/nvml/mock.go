//go:build cgo

package nvml

import (
	"crypto/sha256"
	"fmt"
	"slices"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// mockServers are the go-nvml DGX mocks that NewMock knows, by name.
var mockServers = map[string]func() *server.Server{
	"dgxa100": dgxa100.New,
	"dgxb200": dgxb200.New,
	"dgxh100": dgxh100.New,
	"dgxh200": dgxh200.New,
}

// MockNames lists the names NewMock accepts, sorted.
func MockNames() []string {
	names := make([]string, 0, len(mockServers))
	for n := range mockServers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewMock returns one of go-nvml's eight-GPU DGX mocks (see MockNames),
// initialised and ready for Discover, with two changes that make it usable
// across processes: UUIDs derive from the mock name and the device index
// instead of being random, and the PCI info carries the bus id that the
// mock assigns ("00000000:0N:00.0") instead of an empty one. On top of it
// lies the overlay MockOptions describes: an NVLink mesh, two NUMA nodes
// and injectable XID events.
func NewMock(name string, opts MockOptions) (gonvml.Interface, error) {
	newServer, ok := mockServers[name]
	if !ok {
		return nil, fmt.Errorf("unknown NVML mock %q (known: %v)", name, MockNames())
	}
	s := newServer()
	for _, dev := range s.Devices {
		d, ok := dev.(*server.Device)
		if !ok {
			return nil, fmt.Errorf("NVML mock %s: unexpected device type %T", name, dev)
		}
		d.UUID = mockUUID(name, d.Index)
		d.PciBusID = fmt.Sprintf("%08x:%02x:00.0", 0, d.Index)
		pci := gonvml.PciInfo{
			Bus:         uint32(d.Index),
			PciDeviceId: d.Config.PciDeviceId,
		}
		copy(pci.BusId[:], toInt8(d.PciBusID))
		copy(pci.BusIdLegacy[:], toInt8(fmt.Sprintf("%04x:%02x:00.0", 0, d.Index)))
		d.GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
			return pci, gonvml.SUCCESS
		}
	}
	if err := overlay(s, opts); err != nil {
		return nil, fmt.Errorf("NVML mock %s: %w", name, err)
	}
	return s, nil
}

// mockUUID makes a stable, UUID-shaped "GPU-..." id from the mock name and
// the device index.
func mockUUID(name string, index int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "drover-nvml-mock/%s/%d", name, index))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func toInt8(s string) []int8 {
	out := make([]int8, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int8(s[i])
	}
	return out
}
