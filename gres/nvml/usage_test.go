//go:build cgo

package nvml

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/plugins/protocol"
)

// TestUsageOfMockProcesses: a process that says it holds GPU memory shows
// on its step's GPUs, with that memory, and makes them busy; other GPUs
// and other processes show nothing.
func TestUsageOfMockProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "DROVER_MOCK_GPU_MEM=1048576", "SLURM_JOB_GPUS=0,2,3", "SLURM_STEP_GPUS=2,3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitForEnviron(t, cmd.Process.Pid, "DROVER_MOCK_GPU_MEM=")
	lib, err := NewMock("dgxa100", MockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	got := Usage(lib, &protocol.UsageRequest{Devices: []int{0, 2, 3}, Pids: []int{pid, os.Getpid()}})
	want := &protocol.UsageReply{
		Processes: []protocol.ProcessUsage{{Device: 2, Pid: pid, Memory: 1 << 20}, {Device: 3, Pid: pid, Memory: 1 << 20}},
		Devices:   []protocol.DeviceUsage{{Index: 0}, {Index: 2, Utilization: 100}, {Index: 3, Utilization: 100}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("usage (-want +got):\n%s", d)
	}
}

// waitForEnviron waits until the kernel shows pid's new environment:
// exec lets the parent go on before it has laid out the new stack, and
// until then /proc/PID/environ reads empty.
func waitForEnviron(t *testing.T, pid int, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(env, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never showed %s in its environment (%v)", pid, want, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMockGPUMemory(t *testing.T) {
	for env, want := range map[string]uint64{
		"A=1\x00DROVER_MOCK_GPU_MEM=5\x00SLURM_JOB_GPUS=1,4": 5,
		"DROVER_MOCK_GPU_MEM=5\x00SLURM_JOB_GPUS=1":          0,
		"DROVER_MOCK_GPU_MEM=x\x00SLURM_STEP_GPUS=4":         0,
		"SLURM_STEP_GPUS=4":                                  0,
	} {
		got, ok := mockGPUMemory([]byte(env), 4)
		if got != want || ok != (want > 0) {
			t.Errorf("%q: %d, %v", env, got, ok)
		}
	}
}
