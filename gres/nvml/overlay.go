//go:build cgo

package nvml

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// MockOptions shape the overlay NewMock lays over a go-nvml DGX mock, which
// answers identity, memory, PCI and MIG calls but panics on topology and
// events. The overlay gives every mock the same machine:
//
//   - an NVLink mesh of two quads: GPUs 0-3 and 4-7 each have two links to
//     every GPU of their own quad and one link to their peer in the other
//     quad (0-4, 1-5, 2-6, 3-7), seven links a GPU;
//   - two NUMA nodes: GPUs 0-3 are near the first half of the CPUs and on
//     NUMA node 0, GPUs 4-7 near the second half and on NUMA node 1;
//   - XID events read from a file, so that a test in another process can
//     inject them into a running plugin;
//   - compute processes: a process of the machine whose environment has
//     DROVER_MOCK_GPU_MEM=BYTES runs on the GPUs its SLURM_STEP_GPUS (or
//     SLURM_JOB_GPUS) lists, holding BYTES of memory on each; a GPU with
//     such a process is 100% busy, one without 0%.
type MockOptions struct {
	// CPUs is the machine's CPU count, split between the NUMA nodes;
	// 0 means DefaultMockCPUs.
	CPUs int
	// Events is a file the mock's event sets read, one event a line: "GPU
	// XID" ("3 79"), GPU being the device index. Lines written after the
	// event set was created are delivered by EventSetWait; an XID 79 line
	// (fallen off the bus) anywhere in the file, earlier lines included,
	// also makes the device lost from then on, as after a real one: its
	// calls fail with ERROR_GPU_IS_LOST. Empty means no events.
	Events string
}

// DefaultMockCPUs is a DGX's 2 sockets of 64 cores.
const DefaultMockCPUs = 128

// XIDFallenOffBus is the XID of a GPU that has fallen off the bus.
const XIDFallenOffBus = 79

// mockLinksPerQuadPeer and the single cross link make the mesh above.
const mockLinksPerQuadPeer = 2

// mockPeers lists, link by link, the device index each of device i's
// NVLinks reaches.
func mockPeers(i, count int) []int {
	var peers []int
	quad := i / 4 * 4
	for p := quad; p < quad+4 && p < count; p++ {
		if p == i {
			continue
		}
		for range mockLinksPerQuadPeer {
			peers = append(peers, p)
		}
	}
	if cross := i ^ 4; cross < count {
		peers = append(peers, cross)
	}
	return peers
}

// overlay fills in the calls the DGX mock leaves out.
func overlay(s *server.Server, opts MockOptions) error {
	cpus := opts.CPUs
	if cpus <= 0 {
		cpus = DefaultMockCPUs
	}
	count := len(s.Devices)
	buses := make([]gonvml.PciInfo, count)
	devs := make([]*server.Device, count)
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		devs[i] = d
		pci, _ := d.GetPciInfo()
		buses[i] = pci
	}
	lost, err := lostDevices(opts.Events, count)
	if err != nil {
		return err
	}
	for i, d := range devs {
		peers := mockPeers(i, count)
		d.GetNvLinkStateFunc = func(link int) (gonvml.EnableState, gonvml.Return) {
			if link < 0 || link >= len(peers) {
				return 0, gonvml.ERROR_INVALID_ARGUMENT
			}
			return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
		}
		d.GetNvLinkRemotePciInfoFunc = func(link int) (gonvml.PciInfo, gonvml.Return) {
			if link < 0 || link >= len(peers) {
				return gonvml.PciInfo{}, gonvml.ERROR_INVALID_ARGUMENT
			}
			return buses[peers[link]], gonvml.SUCCESS
		}
		numa := 0
		if i >= count/2 && count > 1 {
			numa = 1
		}
		lo, hi := numa*cpus/2, (numa+1)*cpus/2
		if count == 1 {
			lo, hi = 0, cpus
		}
		d.GetCpuAffinityFunc = func(n int) ([]uint, gonvml.Return) {
			words := (n + 63) / 64
			mask := make([]uint, words)
			for c := lo; c < hi && c < words*64; c++ {
				mask[c/64] |= 1 << (c % 64)
			}
			return mask, gonvml.SUCCESS
		}
		d.GetNumaNodeIdFunc = func() (int, gonvml.Return) { return numa, gonvml.SUCCESS }
		d.GetSupportedEventTypesFunc = func() (uint64, gonvml.Return) {
			return gonvml.EventTypeXidCriticalError | gonvml.EventTypeDoubleBitEccError | gonvml.EventTypeSingleBitEccError, gonvml.SUCCESS
		}
		d.RegisterEventsFunc = func(types uint64, set gonvml.EventSet) gonvml.Return {
			es, ok := set.(*eventSet)
			if !ok {
				return gonvml.ERROR_INVALID_ARGUMENT
			}
			es.register(i, types)
			return gonvml.SUCCESS
		}
		d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
			return mockProcesses(procRoot, i), gonvml.SUCCESS
		}
		d.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if len(mockProcesses(procRoot, i)) > 0 {
				return gonvml.Utilization{Gpu: 100, Memory: 100}, gonvml.SUCCESS
			}
			return gonvml.Utilization{}, gonvml.SUCCESS
		}
		if lost[i] {
			loseDevice(d)
		}
	}
	s.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) {
		es, err := newEventSet(opts.Events, devs)
		if err != nil {
			return nil, gonvml.ERROR_UNKNOWN
		}
		return es, gonvml.SUCCESS
	}
	return nil
}

// loseDevice makes every identity call of d fail as on a GPU that fell off
// the bus.
func loseDevice(d *server.Device) {
	d.GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
	d.GetNameFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
	d.GetMinorNumberFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_GPU_IS_LOST }
	d.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{}, gonvml.ERROR_GPU_IS_LOST }
}

// mockEvent is one line of the events file.
type mockEvent struct {
	gpu int
	xid uint64
}

// parseMockEvent reads "GPU XID".
func parseMockEvent(line string) (mockEvent, error) {
	f := strings.Fields(line)
	if len(f) != 2 {
		return mockEvent{}, fmt.Errorf("mock event %q: want \"GPU XID\"", line)
	}
	gpu, err := strconv.Atoi(f[0])
	if err != nil || gpu < 0 {
		return mockEvent{}, fmt.Errorf("mock event %q: bad GPU index", line)
	}
	xid, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return mockEvent{}, fmt.Errorf("mock event %q: bad XID", line)
	}
	return mockEvent{gpu: gpu, xid: xid}, nil
}

// lostDevices reads the whole events file for XID 79s.
func lostDevices(path string, count int) (map[int]bool, error) {
	lost := map[int]bool{}
	if path == "" {
		return lost, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return lost, nil
	}
	if err != nil {
		return nil, fmt.Errorf("NVML mock events: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		ev, err := parseMockEvent(sc.Text())
		if err != nil {
			return nil, err
		}
		if ev.xid == XIDFallenOffBus && ev.gpu < count {
			lost[ev.gpu] = true
		}
	}
	return lost, sc.Err()
}

// mockEventPoll is how often Wait looks at the events file.
const mockEventPoll = 20 * time.Millisecond

// eventSet is the mock's nvmlEventSet: it delivers the lines appended to
// the events file after its creation, for the devices and event types
// registered with it.
type eventSet struct {
	mock.EventSet
	path string
	devs []*server.Device

	mu      sync.Mutex
	offset  int64
	partial string
	types   map[int]uint64
	pending []mockEvent
}

func newEventSet(path string, devs []*server.Device) (*eventSet, error) {
	es := &eventSet{path: path, devs: devs, types: map[int]uint64{}}
	if path != "" {
		if st, err := os.Stat(path); err == nil {
			es.offset = st.Size()
		}
	}
	es.FreeFunc = func() gonvml.Return { return gonvml.SUCCESS }
	es.WaitFunc = es.wait
	return es, nil
}

func (es *eventSet) register(gpu int, types uint64) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.types[gpu] |= types
}

// wait is nvmlEventSetWait: the next event, or ERROR_TIMEOUT after ms
// milliseconds.
func (es *eventSet) wait(ms uint32) (gonvml.EventData, gonvml.Return) {
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for {
		if ev, ok := es.next(); ok {
			return gonvml.EventData{Device: es.devs[ev.gpu], EventType: gonvml.EventTypeXidCriticalError, EventData: ev.xid}, gonvml.SUCCESS
		}
		left := time.Until(deadline)
		if left <= 0 {
			return gonvml.EventData{}, gonvml.ERROR_TIMEOUT
		}
		time.Sleep(min(left, mockEventPoll))
	}
}

// next returns the next registered event, reading new lines of the file.
func (es *eventSet) next() (mockEvent, bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if len(es.pending) == 0 {
		es.read()
	}
	for len(es.pending) > 0 {
		ev := es.pending[0]
		es.pending = es.pending[1:]
		if ev.gpu < len(es.devs) && es.types[ev.gpu]&gonvml.EventTypeXidCriticalError != 0 {
			return ev, true
		}
	}
	return mockEvent{}, false
}

// read appends the file's new complete lines to pending; malformed lines
// are skipped, as a real driver never sends them.
func (es *eventSet) read() {
	if es.path == "" {
		return
	}
	f, err := os.Open(es.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(es.offset, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil || len(b) == 0 {
		return
	}
	es.offset += int64(len(b))
	text := es.partial + string(b)
	lines := strings.Split(text, "\n")
	es.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if ev, err := parseMockEvent(l); err == nil {
			es.pending = append(es.pending, ev)
		}
	}
}

// procRoot is where the mock looks for the processes it pretends run on
// its GPUs.
const procRoot = "/proc"

// mockProcesses are the processes under root that say they run on GPU
// gpu (see MockOptions).
func mockProcesses(root string, gpu int) []gonvml.ProcessInfo {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []gonvml.ProcessInfo
	for _, e := range entries {
		pid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		env, err := os.ReadFile(root + "/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if mem, ok := mockGPUMemory(env, gpu); ok {
			out = append(out, gonvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: mem})
		}
	}
	return out
}

// mockGPUMemory reads a process's environment (NUL-separated): the
// memory it says it holds on gpu, if it says so.
func mockGPUMemory(environ []byte, gpu int) (uint64, bool) {
	var mem uint64
	var gpus string
	haveMem := false
	for _, kv := range strings.Split(string(environ), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "DROVER_MOCK_GPU_MEM":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, false
			}
			mem, haveMem = n, true
		case "SLURM_STEP_GPUS":
			gpus = v
		case "SLURM_JOB_GPUS":
			if gpus == "" {
				gpus = v
			}
		}
	}
	if !haveMem {
		return 0, false
	}
	for _, g := range strings.Split(gpus, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(g)); err == nil && n == gpu {
			return mem, true
		}
	}
	return 0, false
}
