package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestGPUAccounting: what a step's tasks hold on their GPUs, measured by
// the GPU plugin (its NVML mock counts a process that says
// DROVER_MOCK_GPU_MEM as holding that memory on its step's GPUs), shows
// live in sstat and stays in the step's record for sacct, as
// gres/gpumem and gres/gpuutil.
func TestGPUAccounting(t *testing.T) {
	if !nvmlAvailable() {
		t.Skip("drover-gres-nvml was not built (no C compiler)")
	}
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, GPUs: 8, NVML: true})
	id := c.Submit("", "--gres=gpu:2", "--wrap", "DROVER_MOCK_GPU_MEM=1073741824 srun --gres=gpu:2 sleep 60")
	c.WaitState(id, "RUNNING", 30*time.Second)
	want := "gres/gpumem=2G,gres/gpuutil=200,"
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if out = c.MustRun("", "sstat", "-n", "-P", "-o", "JobID,TRESUsageInMax", "-j", id); strings.Contains(out, want) {
			break
		}
	}
	if !strings.HasPrefix(out, id+".0|cpu=") || !strings.Contains(out, want) {
		t.Fatalf("sstat: %q, want %s", out, want)
	}
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 30*time.Second)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if out = c.MustRun("", "sacct", "-n", "-P", "-o", "JobID,TRESUsageInMax,TRESUsageInMaxNode", "-j", id+".0"); strings.Contains(out, want) {
			break
		}
	}
	if !strings.Contains(out, want) || !strings.Contains(out, "gres/gpumem=n1,gres/gpuutil=n1") {
		t.Errorf("sacct: %q, want %s", out, want)
	}
}
