package env

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/hostlist"
)

// captureDir is shared/reference/env beside the repository: captures of
// `env | sort` from real Slurm (see its COMMANDS.md). Tests that need it
// skip when it is absent.
func captureDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "reference", "env")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("reference captures not found at %s", dir)
	}
	return dir
}

// readCapture returns a capture's entries in file order.
func readCapture(t testing.TB, rel string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(captureDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

func envMap(list []string) map[string]string {
	m := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// machineDependent are the variables of the captures that no Step or Task
// value can reproduce: SLURM_TASK_PID is the pid the kernel gave each task
// on the capture machine (TaskVars writes Task.PID, which a launcher only
// knows once the task runs). Everything else, ports and addresses
// included, is a value of the captured step and is given to StepVars.
var machineDependent = []string{"SLURM_TASK_PID"}

// captureCase is one srun of the captures: the step as srun knew it, the
// batch environment it ran in, and what each node contributed.
type captureCase struct {
	batch  string   // the batch capture (srun's environment)
	tasks  string   // task capture name, with %d for SLURM_PROCID
	step   Step     //
	cpus   []int    // SLURM_CPUS_ON_NODE per node (the job's CPUs there: no --exact)
	gpus   [][]int  // the step's GPUs per node
	stale  []string // variables StepVars and TaskVars always write for this step
	ntasks int
}

// alwaysWritten are the variables every step of the captures gets from
// StepVars or TaskVars whatever base holds.
var alwaysWritten = []string{
	"SLURMD_NODENAME", "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS", "SLURM_CPUS_ON_NODE",
	"SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_GPUS_ON_NODE", "SLURM_STEP_GPUS",
	"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL",
	"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_DISTRIBUTION", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NAME",
	"SLURM_STEP_ID", "SLURM_STEPID", "SLURM_NODELIST", "SLURM_JOB_PARTITION", "SLURM_TASKS_PER_NODE",
	"SLURM_JOB_UID", "SLURM_JOB_GID", "SLURM_JOB_USER", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS",
	"SLURM_STEP_NODELIST", "SLURM_STEP_NUM_NODES", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE",
	"SLURM_NNODES", "SLURM_PRIO_PROCESS", "SLURM_SRUN_COMM_HOST", "SLURM_LAUNCH_NODE_IPADDR",
	"SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
}

// The steps of the captures. The job of alloc.sh (22.05) is -N4 -n8
// --gres=gpu:1 on n[1-4]: Slurm packed 5 tasks on n1 (SLURM_JOB_CPUS_PER_NODE
// 5,1(x3)) and gave it GPU 0 on every node; its steps were made without
// -m, --exact or --cpu-bind, on nodes with task/none and no device
// confinement. The 26.11 job is -N1 -n2 --gres=gpu:2 --mem=200 on rc1.
func captureCases() map[string]captureCase {
	n4 := []string{"n1", "n2", "n3", "n4"}
	job2205 := Step{
		JobID: 24599, JobName: "envalloc", Cluster: "refcluster", Partition: "gpu", Account: "root", QOS: "normal",
		JobNodes: n4, JobCPUsPerNode: []uint32{5, 1, 1, 1}, JobNumTasks: 8, JobTasksPerNode: []int{5, 1, 1, 1},
		SrunHost: "127.0.0.1", Umask: "0022", MemPerCPU: 1000, TimeLimitMin: Infinite,
		Release: Slurm2205, User: "root", Group: "root",
	}
	// srun -N2 -n4 env (step 0): no --gres, so the step has the job's GPU.
	n2 := job2205
	n2.StepID, n2.Nodes, n2.TasksPerNode, n2.SrunPort = 0, n4[:2], []int{3, 1}, 37479
	// srun -N4 -n8 --gres=gpu:1 env (step 1).
	n8 := job2205
	n8.StepID, n8.Nodes, n8.TasksPerNode, n8.SrunPort, n8.GPUsPerNode = 1, n4, []int{5, 1, 1, 1}, 43251, 1
	// srun -n2 --gres=gpu:1 env in the 26.11 job (step 0): one of the
	// job's two GPUs.
	rc := Step{
		JobID: 153, StepID: 0, JobName: "srunenv", Cluster: "rccluster", Partition: "debug", Account: "root", QOS: "normal",
		JobNodes: []string{"rc1"}, JobCPUsPerNode: []uint32{2}, JobNumTasks: 2, JobTasksPerNode: []int{2},
		Nodes: []string{"rc1"}, TasksPerNode: []int{2}, SrunHost: "127.0.0.1", SrunPort: 42001, Umask: "0022",
		GPUsPerNode: 1, MemPerNode: 200, TimeLimitMin: Infinite, StartTime: time.Unix(1795964956, 0),
		User: "root", Group: "root",
	}
	newer := append(slices.Clone(alwaysWritten), "SLURMD_DEBUG", "SLURM_JOB_GROUP", "SLURM_CLUSTER_NAME",
		"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_OOM_KILL_STEP")
	return map[string]captureCase{
		"22.05 srun -N2 -n4": {
			batch: "22.05/batch_alloc_N4_n8_gres1.env", tasks: "22.05/srun_N2_n4_task%d.env", step: n2,
			cpus: []int{5, 1}, gpus: [][]int{{0}, {0}}, stale: alwaysWritten, ntasks: 4,
		},
		"22.05 srun -N4 -n8 --gres=gpu:1": {
			batch: "22.05/batch_alloc_N4_n8_gres1.env", tasks: "22.05/srun_N4_n8_gres1_task%d.env", step: n8,
			cpus: []int{5, 1, 1, 1}, gpus: [][]int{{0}, {0}, {0}, {0}}, stale: alwaysWritten, ntasks: 8,
		},
		"26.11 srun -n2 --gres=gpu:1": {
			batch: "26.11/batch_N1_n2_gres2.env", tasks: "26.11/srun_n2_gres1_task%d.env", step: rc,
			cpus: []int{2}, gpus: [][]int{{0}}, stale: newer, ntasks: 2,
		},
	}
}

// buildTasks runs StepVars once and TaskVars for every task of the step,
// indexed by SLURM_PROCID.
func (c captureCase) buildTasks(base []string) [][]string {
	stepEnv := StepVars(base, c.step)
	out := make([][]string, c.step.NumTasks())
	for n, ids := range layoutOf(c.step.TasksPerNode, c.step.Distribution) {
		for _, task := range nodeTasks(n, c.step.Nodes[n], ids) {
			task.StepGPUs = c.gpus[n]
			task.CPUsOnNode = c.cpus[n]
			out[task.ID] = TaskVars(stepEnv, task)
		}
	}
	return out
}

// TestMatchesSlurm builds every task's environment of the captured steps
// from srun's environment (the batch capture) and compares it with the
// task's capture, variable by variable, except machineDependent.
func TestMatchesSlurm(t *testing.T) {
	for name, c := range captureCases() {
		t.Run(name, func(t *testing.T) {
			base := readCapture(t, c.batch)
			got := c.buildTasks(base)
			if len(got) != c.ntasks {
				t.Fatalf("%d tasks, want %d", len(got), c.ntasks)
			}
			for id, env := range got {
				want := envMap(readCapture(t, strings.Replace(c.tasks, "%d", strconv.Itoa(id), 1)))
				have := envMap(env)
				for _, k := range machineDependent {
					delete(want, k)
					delete(have, k)
				}
				if d := cmp.Diff(want, have); d != "" {
					t.Errorf("task %d environment (-slurm +drover):\n%s", id, d)
				}
			}
		})
	}
}

// TestOverwritesStale gives srun a base where every variable the step
// writes holds a stale value (as when srun runs inside another step, or
// the user exported them): the result must not depend on it.
func TestOverwritesStale(t *testing.T) {
	for name, c := range captureCases() {
		t.Run(name, func(t *testing.T) {
			base := readCapture(t, c.batch)
			want := c.buildTasks(base)
			stale := slices.Clone(base)
			for _, k := range c.stale {
				stale = append(stale, k+"=stale")
			}
			for id, env := range c.buildTasks(stale) {
				if d := cmp.Diff(envMap(want[id]), envMap(env)); d != "" {
					t.Errorf("task %d (-clean base +stale base):\n%s", id, d)
				}
			}
		})
	}
}

// TestOrder checks that StepVars and TaskVars keep the places of the
// variables they are given and append the new ones sorted.
func TestOrder(t *testing.T) {
	c := captureCases()["22.05 srun -N4 -n8 --gres=gpu:1"]
	base := readCapture(t, c.batch)
	slices.Reverse(base) // an order nothing would produce by sorting
	stepEnv := StepVars(base, c.step)
	checkOrder(t, "StepVars", base, stepEnv)
	task := nodeTasks(1, "n2", []int{5})[0]
	task.StepGPUs = []int{0}
	checkOrder(t, "TaskVars", stepEnv, TaskVars(stepEnv, task))
}

func checkOrder(t *testing.T, what string, in, out []string) {
	t.Helper()
	keys := func(l []string) []string {
		var ks []string
		for _, kv := range l {
			k, _, _ := strings.Cut(kv, "=")
			ks = append(ks, k)
		}
		return ks
	}
	inKeys, outKeys := keys(in), keys(out)
	if len(outKeys) < len(inKeys) {
		t.Fatalf("%s dropped variables: %d in, %d out", what, len(inKeys), len(outKeys))
	}
	if d := cmp.Diff(inKeys, outKeys[:len(inKeys)]); d != "" {
		t.Errorf("%s moved variables (-in +out):\n%s", what, d)
	}
	if added := outKeys[len(inKeys):]; len(added) == 0 || !slices.IsSorted(added) {
		t.Errorf("%s: new variables not sorted: %v", what, added)
	}
}

// TestCapturedJobNodes checks the job's node list the cases use against
// the batch capture, so that a wrong case cannot pass by itself.
func TestCapturedJobNodes(t *testing.T) {
	for name, c := range captureCases() {
		batch := envMap(readCapture(t, c.batch))
		nodes, err := hostlist.Expand(batch["SLURM_JOB_NODELIST"])
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(nodes, c.step.JobNodes); d != "" {
			t.Errorf("%s: job nodes (-capture +case):\n%s", name, d)
		}
		if got, want := fold(c.step.JobCPUsPerNode), batch["SLURM_JOB_CPUS_PER_NODE"]; got != want {
			t.Errorf("%s: job CPUs %q, capture %q", name, got, want)
		}
		if got, want := fold(c.step.JobTasksPerNode), batch["SLURM_TASKS_PER_NODE"]; got != want {
			t.Errorf("%s: job tasks %q, capture %q", name, got, want)
		}
		if got, want := strconv.Itoa(c.step.JobNumTasks), batch["SLURM_NTASKS"]; got != want {
			t.Errorf("%s: job task count %q, capture %q", name, got, want)
		}
	}
}
