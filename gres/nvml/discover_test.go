//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
)

// TestDiscoverDGX runs Discover on go-nvml's DGX mocks as they come: no PCI
// bus id, CPU affinity or NVLink answers.
func TestDiscoverDGX(t *testing.T) {
	tests := map[string]struct {
		server    *server.Server
		wantType  string
		wantName  string
		wantMiB   uint64
		wantCount int
	}{
		"dgxa100": {server: dgxa100.New(), wantType: "a100", wantName: "Mock NVIDIA A100-SXM4-40GB", wantMiB: 40960, wantCount: 8},
		"dgxh100": {server: dgxh100.New(), wantType: "h100", wantName: "NVIDIA H100 80GB HBM3", wantMiB: 81920, wantCount: 8},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, lost, err := Discover(tt.server)
			if err != nil || lost != nil {
				t.Fatal(err)
			}
			var want []gres.Device
			for i, dev := range tt.server.Devices {
				want = append(want, gres.Device{
					Index:     i,
					Minor:     i,
					Type:      tt.wantType,
					Name:      tt.wantName,
					UUID:      dev.(*server.Device).UUID,
					File:      fmt.Sprintf("/dev/nvidia%d", i),
					MemoryMiB: tt.wantMiB,
				})
			}
			if len(want) != tt.wantCount {
				t.Fatalf("mock has %d devices, want %d", len(want), tt.wantCount)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Discover mismatch (-want +got):\n%s", diff)
			}
			seen := map[string]bool{}
			for _, d := range got {
				if len(d.UUID) != len("GPU-")+36 || d.UUID[:4] != "GPU-" || seen[d.UUID] {
					t.Errorf("bad or repeated UUID %q", d.UUID)
				}
				seen[d.UUID] = true
			}
		})
	}
}

func TestNewMock(t *testing.T) {
	lib, err := NewMock("dgxa100", MockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	again, err := NewMock("dgxa100", MockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := Discover(again)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two mocks differ (-first +second):\n%s", diff)
	}
	want := gres.Device{
		Index: 3, Minor: 3, Type: "a100", Name: "Mock NVIDIA A100-SXM4-40GB",
		UUID: mockUUID("dgxa100", 3), File: "/dev/nvidia3", PCIBusID: "00000000:03:00.0", MemoryMiB: 40960,
		Cores: "0-63", Links: "2,2,2,-1,0,0,0,1",
	}
	if diff := cmp.Diff(want, first[3]); diff != "" {
		t.Errorf("device 3 mismatch (-want +got):\n%s", diff)
	}
	if _, err := NewMock("dgx1", MockOptions{}); err == nil {
		t.Error("NewMock(dgx1) succeeded")
	}
	if diff := cmp.Diff([]string{"dgxa100", "dgxb200", "dgxh100", "dgxh200"}, MockNames()); diff != "" {
		t.Errorf("MockNames mismatch (-want +got):\n%s", diff)
	}
}

// TestDiscoverTopology fills in the calls the DGX mocks leave out: GPUs 0
// and 1 have two NVLinks to each other and one to an NVSwitch, GPU 2 has no
// NVLink support, and CPU affinity is set on GPUs 0 and 1.
func TestDiscoverTopology(t *testing.T) {
	lib, err := NewMock("dgxh100", MockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := lib.(*server.Server)
	dev := func(i int) *server.Device { return s.Devices[i].(*server.Device) }
	bus := func(s string) gonvml.PciInfo {
		var p gonvml.PciInfo
		copy(p.BusId[:], toInt8(s))
		return p
	}
	pair := func(self, peer int) {
		d := dev(self)
		d.GetNvLinkStateFunc = func(link int) (gonvml.EnableState, gonvml.Return) {
			if link >= 4 {
				return 0, gonvml.ERROR_INVALID_ARGUMENT
			}
			if link == 3 {
				return gonvml.FEATURE_DISABLED, gonvml.SUCCESS
			}
			return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
		}
		d.GetNvLinkRemotePciInfoFunc = func(link int) (gonvml.PciInfo, gonvml.Return) {
			if link == 2 {
				return bus("00000000:ff:00.0"), gonvml.SUCCESS // an NVSwitch
			}
			// The legacy 4-digit domain must match too.
			return bus(fmt.Sprintf("0000:%02X:00.0", peer)), gonvml.SUCCESS
		}
	}
	pair(0, 1)
	pair(1, 0)
	dev(2).GetNvLinkStateFunc = func(int) (gonvml.EnableState, gonvml.Return) {
		return 0, gonvml.ERROR_NOT_SUPPORTED
	}
	dev(0).GetCpuAffinityFunc = func(int) ([]uint, gonvml.Return) {
		return []uint{0xffff, 0}, gonvml.SUCCESS
	}
	dev(1).GetCpuAffinityFunc = func(int) ([]uint, gonvml.Return) {
		return []uint{0xffff0000, 1}, gonvml.SUCCESS
	}
	dev(2).GetCpuAffinityFunc = func(int) ([]uint, gonvml.Return) {
		return []uint{0xffffffffffffffff}, gonvml.SUCCESS
	}

	got, _, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	type topo struct{ Cores, Links string }
	want := []topo{
		{Cores: "0-15", Links: "-1,2,0,0,0,0,0,0"},
		{Cores: "16-31,64", Links: "2,-1,0,0,0,0,0,0"},
		{Cores: "0-63", Links: "0,0,-1,0,0,0,0,0"},
		// GPUs 3-7 keep the overlay's mesh, whose links each counts
		// from its own side.
		{Cores: "0-63", Links: "2,2,2,-1,0,0,0,1"},
		{Cores: "64-127", Links: "1,0,0,0,-1,2,2,2"},
		{Cores: "64-127", Links: "0,1,0,0,2,-1,2,2"},
		{Cores: "64-127", Links: "0,0,1,0,2,2,-1,2"},
		{Cores: "64-127", Links: "0,0,0,1,2,2,2,-1"},
	}
	var have []topo
	for _, d := range got {
		have = append(have, topo{d.Cores, d.Links})
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("topology mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverErrors(t *testing.T) {
	tests := map[string]struct {
		sabotage func(s *server.Server)
		wantIs   error
		wantMsg  string
	}{
		"count fails": {
			sabotage: func(s *server.Server) {
				s.DeviceGetCountFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_UNINITIALIZED }
			},
			wantIs:  gonvml.ERROR_UNINITIALIZED,
			wantMsg: "nvmlDeviceGetCount: ERROR_UNINITIALIZED",
		},
		"broken GPU": {
			sabotage: func(s *server.Server) {
				s.Devices[3].(*server.Device).GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_UNKNOWN }
			},
			wantIs:  gonvml.ERROR_UNKNOWN,
			wantMsg: "GPU 3: nvmlDeviceGetUUID: ERROR_UNKNOWN",
		},
		"required call missing": {
			sabotage: func(s *server.Server) {
				s.Devices[5].(*server.Device).GetMinorNumberFunc = nil
			},
			wantIs:  errNotImplemented,
			wantMsg: "GPU 5: nvmlDeviceGetMinorNumber: not implemented by this NVML library",
		},
		"handle fails": {
			sabotage: func(s *server.Server) {
				s.DeviceGetHandleByIndexFunc = func(int) (gonvml.Device, gonvml.Return) { return nil, gonvml.ERROR_NO_PERMISSION }
			},
			wantIs:  gonvml.ERROR_NO_PERMISSION,
			wantMsg: "GPU 0: nvmlDeviceGetHandleByIndex: ERROR_NO_PERMISSION",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := dgxa100.New()
			tt.sabotage(s)
			_, _, err := Discover(s)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("Discover error = %v, want %v", err, tt.wantIs)
			}
			if got := err.Error(); len(got) < len(tt.wantMsg) || got[:len(tt.wantMsg)] != tt.wantMsg {
				t.Errorf("Discover error = %q, want prefix %q", got, tt.wantMsg)
			}
		})
	}
}

func TestCanonicalBusID(t *testing.T) {
	tests := map[string]struct {
		in     string
		want   string
		wantOK bool
	}{
		"nvml":   {in: "00000000:07:00.0", want: "00000000:07:00.0", wantOK: true},
		"legacy": {in: "0000:07:00.0", want: "00000000:07:00.0", wantOK: true},
		"upper":  {in: "0000:AB:00.1", want: "00000000:ab:00.1", wantOK: true},
		"empty":  {in: ""},
		"junk":   {in: "0000:zz:00.0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := canonicalBusID(tt.in)
			if diff := cmp.Diff(struct {
				S  string
				OK bool
			}{tt.want, tt.wantOK}, struct {
				S  string
				OK bool
			}{got, ok}); diff != "" {
				t.Errorf("canonicalBusID(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestDiscoverLost leaves out a GPU NVML reports lost, whether its handle
// or a later call says so, and lists its index.
func TestDiscoverLost(t *testing.T) {
	s := dgxa100.New()
	s.Devices[3].(*server.Device).GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
	handle := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i == 6 {
			return nil, gonvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	got, lost, err := Discover(s)
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, d := range got {
		idx = append(idx, d.Index)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 4, 5, 7}, idx); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 6}, lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
}
