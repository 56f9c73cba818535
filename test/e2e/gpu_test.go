package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestGPUPlugin runs nodes whose GPUs the GPU plugin finds on go-nvml's
// DGX A100 mock with the test overlay (two NVLinked quads, two NUMA
// nodes, XIDs injected through a file): the node reports its GPUs with
// their sockets, jobs get NVLinked GPUs, an XID drains the node with the
// GPU and the error as the reason, and a node that comes back with a GPU
// missing is drained for the lower count.
func TestGPUPlugin(t *testing.T) {
	if !nvmlAvailable() {
		t.Skip("drover-gres-nvml was not built (no C compiler)")
	}
	t.Parallel()
	events := map[string]string{"n1": filepath.Join(t.TempDir(), "n1.events"), "n2": filepath.Join(t.TempDir(), "n2.events")}
	// n2's GPU 6 fell off the bus before the node started.
	must(t, os.WriteFile(events["n2"], []byte("6 79\n"), 0o644))
	c := NewCluster(t, ClusterOptions{Nodes: 2, GPUs: 8, NVML: true,
		NodeArgs: func(name string) []string {
			return []string{"--gres-nvml-args", "mock_events=" + events[name], "--gpu-health-interval", "100ms"}
		}})

	if out := c.MustRun("", "sinfo", "-h", "-N", "-p", "batch", "-n", "n1", "-o", "%G"); out != "gpu:a100:8(S:0-7)\n" {
		t.Errorf("sinfo %%G for n1: %q", out)
	}
	reason := c.MustRun("", "sinfo", "-h", "-R", "-o", "%n|%E")
	if !strings.Contains(reason, "n2|gpu count reported lower than configured (7 < 8)") {
		t.Errorf("sinfo -R: %q", reason)
	}

	// Three GPUs fill GPU 0's quad but one; two more go to the other
	// quad's NVLinked pair rather than to GPUs 3 and 4.
	first := c.Submit("", "-w", "n1", "--gres=gpu:3", "--wrap", "sleep 300")
	c.WaitState(first, "RUNNING", 20*time.Second)
	out := c.MustRun("", "srun", "-w", "n1", "--gres=gpu:2", "printenv", "SLURM_STEP_GPUS")
	if out != "4,5\n" {
		t.Errorf("GPUs of a two-GPU job next to a three-GPU one: %q, want 4,5", out)
	}

	// An application's XID changes nothing; a fatal one drains the node.
	f, err := os.OpenFile(events["n1"], os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	_, err = f.WriteString("1 13\n3 79\n")
	must(t, err)
	f.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out := c.MustRun("", "sinfo", "-h", "-N", "-p", "batch", "-n", "n1", "-o", "%t|%E")
		if out == "drng|GPU 3 XID 79: GPU has fallen off the bus\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n1 after XID 79: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The job there keeps running.
	if s := c.State(first); s != "RUNNING" {
		t.Errorf("job on the drained node: %s", s)
	}
	c.MustRun("", "scancel", first)
}

// TestConstrainDevices gives nodes four fake GPUs (device nodes of
// NVIDIA's major number with no driver behind them) and
// ConstrainDevices=yes: a step and a batch script can open their own
// GPUs as far as the missing driver (ENXIO) and are refused the others
// (EPERM), and CUDA_VISIBLE_DEVICES numbers their GPUs from 0.
func TestConstrainDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("device constraints need root (cgroups)")
	}
	t.Parallel()
	devDir := t.TempDir()
	must(t, os.Chmod(devDir, 0o755))
	for i := range 4 {
		p := filepath.Join(devDir, "nvidia"+string(rune('0'+i)))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))); err != nil {
			t.Skipf("cannot make device nodes: %v", err)
		}
	}
	c := NewCluster(t, ClusterOptions{Nodes: 1, GPUs: 4,
		GresConf:   "Name=gpu File=" + devDir + "/nvidia[0-3]\n",
		CgroupConf: "CgroupPlugin=autodetect\nConstrainDevices=yes\n"})
	script := `echo "${SLURM_STEP_GPUS:-$SLURM_JOB_GPUS} $CUDA_VISIBLE_DEVICES"; for d in 0 1 2 3; do cat ` + devDir + `/nvidia$d 2>&1 | sed 's/.*: //'; done; true`
	r := c.Run("", "srun", "--gres=gpu:2", "sh", "-c", script)
	want := "0,1 0,1\nNo such device or address\nNo such device or address\nOperation not permitted\nOperation not permitted\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("srun --gres=gpu:2: exit %d\n%s\nwant:\n%s\nstderr: %s", r.Code, r.Stdout, want, r.Stderr)
	}

	// A batch script holding GPUs 0-1 leaves 2-3 to a step of another
	// job, which sees them as 0 and 1.
	hold := c.Submit("", "--gres=gpu:2", "--wrap", "sleep 300")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	r = c.Run("", "srun", "--gres=gpu:2", "sh", "-c", script)
	want = "2,3 0,1\nOperation not permitted\nOperation not permitted\nNo such device or address\nNo such device or address\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("second job: exit %d\n%s\nwant:\n%s\nstderr: %s", r.Code, r.Stdout, want, r.Stderr)
	}
	c.MustRun("", "scancel", hold)

	out := filepath.Join(c.WorkDir, "batch.out")
	id := c.Submit("", "--gres=gpu:1", "-o", out, "--wrap", script)
	c.WaitState(id, "COMPLETED", 20*time.Second)
	got, err := os.ReadFile(out)
	must(t, err)
	want = "0 0\nNo such device or address\nOperation not permitted\nOperation not permitted\nOperation not permitted\n"
	if string(got) != want {
		t.Errorf("batch script:\n%s\nwant:\n%s", got, want)
	}
}
