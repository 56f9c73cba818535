package nodeagent

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/nodeproto"
)

// batchEnv builds the batch script's environment: the submitted
// environment, then the variables slurmstepd sets for the batch step
// (names and formats as captured from real Slurm, see shared/reference/env).
// The limits and umask the submission propagates are taken out and
// returned for the launcher to apply.
func batchEnv(l *nodeproto.Launch, nodeName string, constrainDevices bool) ([]string, propagated) {
	env := newEnvList(l.Environment)
	prop := takePropagated(env)
	nodes := hostlist.Compress(l.Nodes)
	set := env.set
	set("ENVIRONMENT", "BATCH")
	set("SLURM_CLUSTER_NAME", l.Cluster)
	if l.ConfPath != "" {
		set("SLURM_CONF", l.ConfPath)
	}
	set("SLURMD_NODENAME", nodeName)
	set("SLURM_JOB_ID", u(l.JobID))
	set("SLURM_JOBID", u(l.JobID))
	set("SLURM_JOB_NAME", l.Name)
	set("SLURM_JOB_NODELIST", nodes)
	set("SLURM_NODELIST", nodes)
	set("SLURM_JOB_NUM_NODES", strconv.Itoa(len(l.Nodes)))
	set("SLURM_NNODES", strconv.Itoa(len(l.Nodes)))
	set("SLURM_JOB_PARTITION", l.Partition)
	set("SLURM_JOB_USER", l.UserName)
	set("SLURM_JOB_UID", u(l.UID))
	set("SLURM_JOB_GID", u(l.GID))
	if l.Account != "" {
		set("SLURM_JOB_ACCOUNT", l.Account)
	}
	if l.QOS != "" {
		set("SLURM_JOB_QOS", l.QOS)
	}
	set("SLURM_SUBMIT_DIR", l.SubmitDir)
	if l.SubmitHost != "" {
		set("SLURM_SUBMIT_HOST", l.SubmitHost)
	}
	set("SLURM_JOB_CPUS_PER_NODE", perNode(l.CPUsPerNode))
	set("SLURM_TASKS_PER_NODE", perNode(tasksPerNode(l)))
	if len(l.CPUsPerNode) > 0 {
		set("SLURM_CPUS_ON_NODE", u(l.CPUsPerNode[0]))
	}
	if l.NumTasks > 0 {
		set("SLURM_NTASKS", u(l.NumTasks))
		set("SLURM_NPROCS", u(l.NumTasks))
	}
	if l.TasksPerNodeReq > 0 {
		set("SLURM_NTASKS_PER_NODE", u(l.TasksPerNodeReq))
	}
	if l.CPUsPerTask > 0 {
		set("SLURM_CPUS_PER_TASK", u(l.CPUsPerTask))
	}
	switch {
	case l.MemPerCPU > 0:
		set("SLURM_MEM_PER_CPU", strconv.FormatUint(l.MemPerCPU, 10))
	case l.MemPerNode > 0:
		set("SLURM_MEM_PER_NODE", strconv.FormatUint(l.MemPerNode, 10))
	}
	set("SLURM_NODEID", "0")
	set("SLURM_PROCID", "0")
	set("SLURM_LOCALID", "0")
	set("SLURM_GTIDS", "0")
	set("SLURM_STEP_ID", "-5")
	set("SLURM_STEPID", "-5")
	if l.TopologyAddr != "" {
		set("SLURM_TOPOLOGY_ADDR", l.TopologyAddr)
		set("SLURM_TOPOLOGY_ADDR_PATTERN", l.TopologyPattern)
	} else {
		set("SLURM_TOPOLOGY_ADDR", nodeName)
		set("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	}
	set("SLURM_PRIO_PROCESS", strconv.Itoa(int(l.Nice)))
	// Only once the job was requeued, as 25.11's setup_env (26.x sets
	// it in every batch job).
	if l.RestartCount > 0 {
		set("SLURM_RESTART_COUNT", u(l.RestartCount))
	}
	set("SLURM_OOM_KILL_STEP", "0")
	set("SLURM_JOB_START_TIME", strconv.FormatInt(l.StartTime.Unix(), 10))
	// An unlimited job "ends" a year after it starts, as slurmctld
	// computes end_time for INFINITE limits.
	limit := int64(365 * 24 * 60)
	if l.TimeLimitMin != 0 && l.TimeLimitMin != 0xFFFFFFFF {
		limit = int64(l.TimeLimitMin)
	}
	set("SLURM_JOB_END_TIME", strconv.FormatInt(l.StartTime.Unix()+limit*60, 10))
	if l.Exclusive {
		set("SLURM_JOB_EXCLUSIVE", "YES")
	} else {
		set("SLURM_JOB_EXCLUSIVE", "NO")
	}
	set("SLURM_JOB_OVERSUBSCRIBE", "NO")
	if l.ArrayJobID != 0 && l.ArrayTaskID != 0xFFFFFFFE {
		set("SLURM_ARRAY_JOB_ID", u(l.ArrayJobID))
		set("SLURM_ARRAY_TASK_ID", u(l.ArrayTaskID))
		set("SLURM_ARRAY_TASK_COUNT", u(l.ArrayCount))
		set("SLURM_ARRAY_TASK_MAX", u(l.ArrayMax))
		set("SLURM_ARRAY_TASK_MIN", u(l.ArrayMin))
		set("SLURM_ARRAY_TASK_STEP", u(max(l.ArrayStep, 1)))
	}
	if len(l.GPUs) > 0 {
		ids := make([]string, len(l.GPUs))
		for i, g := range l.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		list := strings.Join(ids, ",")
		set("SLURM_JOB_GPUS", list)
		set("SLURM_GPUS_ON_NODE", strconv.Itoa(len(l.GPUs)))
		if constrainDevices {
			// The script sees only its GPUs, numbered from 0
			// (gres_use_local_device_index).
			for i := range ids {
				ids[i] = strconv.Itoa(i)
			}
			list = strings.Join(ids, ",")
		}
		set("CUDA_VISIBLE_DEVICES", list)
		set("GPU_DEVICE_ORDINAL", list)
		set("ROCR_VISIBLE_DEVICES", list)
		set("ZE_AFFINITY_MASK", list)
	}
	for _, kv := range l.HetEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	// Hints Slurm 25.11+ gives MPI launchers that run inside allocations.
	set("OMPI_MCA_plm_slurm_args", "--external-launcher")
	set("PRTE_MCA_plm_slurm_args", "--external-launcher")
	set("HYDRA_BOOTSTRAP", "slurm")
	set("HYDRA_LAUNCHER_EXTRA_ARGS", "--external-launcher")
	set("I_MPI_HYDRA_BOOTSTRAP", "slurm")
	set("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "--external-launcher")
	if env.get("TMPDIR") == "" {
		set("TMPDIR", "/tmp")
	}
	return env.list(), prop
}

// tasksPerNode is the layout of the tasks asked for; without -n, Slurm
// counts what each node's CPUs can hold at --cpus-per-task each.
func tasksPerNode(l *nodeproto.Launch) []uint32 {
	if l.NumTasks > 0 || l.TasksPerNodeReq > 0 {
		return l.TasksPerNode
	}
	out := make([]uint32, len(l.CPUsPerNode))
	for i, c := range l.CPUsPerNode {
		out[i] = max(c/max(l.CPUsPerTask, 1), 1)
	}
	return out
}

func u(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// perNode writes per-node counts as Slurm does: runs of equal values fold
// into "N(xK)" ("5,1(x3)").
func perNode(vals []uint32) string {
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, u(vals[i])+"(x"+strconv.Itoa(n)+")")
		} else {
			parts = append(parts, u(vals[i]))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// envList is an ordered environment where later sets replace earlier ones.
type envList struct {
	keys []string
	vals map[string]string
}

func newEnvList(kv []string) *envList {
	e := &envList{vals: map[string]string{}}
	for _, item := range kv {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			continue
		}
		e.set(k, v)
	}
	return e
}

func (e *envList) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *envList) get(k string) string { return e.vals[k] }

func (e *envList) list() []string {
	out := make([]string, len(e.keys))
	for i, k := range e.keys {
		out[i] = k + "=" + e.vals[k]
	}
	return out
}
