package nccl

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
	"github.com/droverhq/drover/spank"
	"github.com/droverhq/drover/spank/plugconf"
)

func env(changes []protocol.EnvChange) map[string]string {
	out := map[string]string{}
	for _, c := range changes {
		out[c.Name] = c.Value
	}
	return out
}

// Task 5 of an 8-task step on n[1-4] (2 tasks per node): the variables
// torch.distributed and NCCL read. MASTER_ADDR is the first node's
// address, reached over loopback.
func TestTaskVariables(t *testing.T) {
	c := DefaultConfig()
	ib := t.TempDir()
	for _, d := range []string{"mlx5_1", "mlx5_0"} {
		if err := os.Mkdir(filepath.Join(ib, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.SysClassInfiniband = ib
	ctx := sdk.NewContext(protocol.Hook{
		Stage: protocol.StageTaskInit, JobID: 1234, StepID: 2, NodeList: "n[1-4]",
		NodeAddrs: []string{"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"},
		NodeID:    2, NNodes: 4, NTasks: 8, TaskID: 5, LocalTaskID: 1, LocalTasks: 2,
		Options: map[string]string{"nccl-debug": "INFO"},
		Env:     []string{"MASTER_PORT=12345"},
	})
	if err := c.TaskInit(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"MASTER_ADDR": "127.0.0.1", "WORLD_SIZE": "8", "RANK": "5", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
		"NODE_RANK": "2", "GROUP_RANK": "2", "NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "lo",
		"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_ASYNC_ERROR_HANDLING": "1", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
	}
	if diff := cmp.Diff(want, env(ctx.Changes())); diff != "" {
		t.Errorf("variables (-want +got; MASTER_PORT was the user's):\n%s", diff)
	}
	for _, ch := range ctx.Changes() {
		if ch.Overwrite && ch.Name == "MASTER_PORT" {
			t.Errorf("the user's MASTER_PORT was replaced")
		}
	}
}

// Without node addresses the first node's name is MASTER_ADDR; without
// InfiniBand there is no NCCL_IB_HCA, and socket_ifname=none leaves the
// interface to NCCL.
func TestNodeNameNoIB(t *testing.T) {
	c, err := ParseArgs([]string{"socket_ifname=none", "nccl_debug=WARN", "sysfs_infiniband=/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := sdk.NewContext(protocol.Hook{JobID: 7, NodeList: "gpu-a[01-02]", NTasks: 16})
	if err := c.TaskInit(ctx); err != nil {
		t.Fatal(err)
	}
	got := env(ctx.Changes())
	if got["MASTER_ADDR"] != "gpu-a01" || got["NCCL_DEBUG"] != "WARN" || got["NCCL_IB_HCA"] != "" || got["NCCL_SOCKET_IFNAME"] != "" {
		t.Errorf("variables %v", got)
	}
}

// MASTER_PORT is within the range, the same for every task of a step and
// different for the steps of a job.
func TestPort(t *testing.T) {
	c, err := ParseArgs([]string{"port_range=40000-40099"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for step := uint32(0); step < 20; step++ {
		p := c.Port(1000, step)
		if p < 40000 || p > 40099 || seen[p] || p != c.Port(1000, step) {
			t.Fatalf("step %d: port %d", step, p)
		}
		seen[p] = true
	}
	for _, bad := range [][]string{{"port_range=5-1"}, {"port_range=0-10"}, {"port_range=x"}, {"nonsense"}, {"color=blue"}} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

// The shipped program, loaded as plugstack.conf would load it.
func TestPluginProgram(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "drover-spank-nccl")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/droverhq/drover/cmd/drover-spank-nccl").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx := context.Background()
	s, err := spank.Load(ctx, []spank.Entry{{Required: true, Path: bin, Args: []string{"port_range=50000-50009", "socket_ifname=none"}}}, 10*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if o := s.Options(); len(o) != 1 || o[0].Name != "nccl-debug" {
		t.Errorf("options %+v", o)
	}
	changes, err := s.Run(ctx, protocol.Hook{Stage: protocol.StageTaskInit, Context: protocol.ContextRemote, JobID: 3, NodeList: "localhost",
		NTasks: 2, TaskID: 1, LocalTaskID: 1, LocalTasks: 2, Env: []string{"RANK=99", plugconf.OptionEnvName("drover-spank-nccl", "nccl-debug") + "=TRACE"}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plugconf.Apply([]string{"RANK=99"}, changes), " ")
	if !strings.Contains(got, "NCCL_DEBUG=TRACE") {
		t.Errorf("the --nccl-debug option did not reach the plugin: %q", got)
	}
	for _, want := range []string{"RANK=99", "MASTER_ADDR=localhost", "MASTER_PORT=50003", "WORLD_SIZE=2", "LOCAL_RANK=1", "NCCL_DEBUG=TRACE"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("task environment %q lacks %s", got, want)
		}
	}
}

// A batch script is no rank: it gets nothing, so its srun steps are not
// handed its values as the user's own.
func TestBatchStepUntouched(t *testing.T) {
	ctx := sdk.NewContext(protocol.Hook{JobID: 9, StepID: protocol.BatchStepID, NodeList: "n1", NTasks: 1})
	if err := DefaultConfig().TaskInit(ctx); err != nil || len(ctx.Changes()) != 0 {
		t.Errorf("batch step: %v, changes %+v", err, ctx.Changes())
	}
}
