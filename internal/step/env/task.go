package env

import (
	"slices"
	"strconv"
	"strings"
)

// Task describes one task on one node.
type Task struct {
	ID        int    // SLURM_PROCID
	Local     int    // SLURM_LOCALID
	NodeIndex int    // SLURM_NODEID
	NodeName  string // SLURMD_NODENAME
	NodeTasks []int  // every task id on this node (SLURM_GTIDS)
	// GPUs are the device indices (the node's GPU order, as gres.conf
	// lists them) this task may use when the step binds GPUs to tasks
	// (--gpus-per-task, --gpu-bind); nil: every GPU of the step on the
	// node, as without binding.
	//
	// The values written to CUDA_VISIBLE_DEVICES and its siblings depend
	// on ConstrainDevices: without device confinement (the captures)
	// Slurm writes these indices as they are, so a task given the node's
	// third GPU sees CUDA_VISIBLE_DEVICES=2; with cgroup.conf
	// ConstrainDevices=yes it writes each one's position among StepGPUs
	// (the only devices the task can open), so the same task sees 0 if
	// that GPU is the step's first on the node (gres_use_local_device_index).
	GPUs []int
	// StepGPUs are the step's GPUs on the node (SLURM_STEP_GPUS); empty:
	// the step has none there, and the GPU variables inherited from the
	// batch script are removed, as slurmstepd does for a step without
	// GPUs in a GPU job.
	StepGPUs []int
	// ConstrainDevices is cgroup.conf ConstrainDevices=yes with
	// task/cgroup on the node (see GPUs).
	ConstrainDevices bool
	// TopologyAddr and TopologyPattern are the node's place in the
	// switch tree; without topology Slurm writes the node's name and
	// "node".
	TopologyAddr, TopologyPattern string // "" without topology
	// CPUBindList is the binding the node daemon applied, when binding
	// (task/affinity): the mask or map list that SLURM_CPU_BIND_LIST
	// shows. Slurm shows the whole node's list there, one mask per local
	// task in SLURM_LOCALID order ("0x1,0x2,0x4"), the same for every task
	// of the node, and each task is bound to its own entry. Its type
	// follows the step's request as StepVars wrote it in
	// SLURM_CPU_BIND_TYPE: map_cpu, map_ldom and mask_ldom lists keep
	// their type; anything else is the masks task/affinity generated
	// (mask_cpu), the unit (cores, sockets...) dropped as
	// _lllp_generate_cpu_bind does.
	CPUBindList string // the mask or list this task is bound to, when binding (SLURM_CPU_BIND_LIST...), "" otherwise
	// CPUsOnNode is SLURM_CPUS_ON_NODE: the CPUs the step holds on this
	// node (the job's CPUs there unless the step was given fewer, e.g.
	// with --exact); 0 leaves the inherited value.
	CPUsOnNode int
	// PID is SLURM_TASK_PID; 0 leaves it unset (the process id is only
	// known once the task runs: a launcher that cannot set it in the
	// child, as os/exec cannot, leaves it out).
	PID int
}

// TaskVars returns the launch environment (already holding StepVars) with one task's own variables set.
//
// The variables, by who writes them in Slurm: slurmstepd's exec_task
// (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_GTIDS, SLURMD_NODENAME,
// SLURM_CPUS_ON_NODE, SLURM_TASK_PID, SLURM_CPU_BIND* when the node bound
// the task), its launch setup (SLURM_TOPOLOGY_ADDR,
// SLURM_TOPOLOGY_ADDR_PATTERN, TMPDIR=/tmp when unset) and the GPU GRES
// plugin (SLURM_GPUS_ON_NODE, SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES,
// ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK, GPU_DEVICE_ORDINAL). New names
// are appended sorted after env's.
func TaskVars(env []string, t Task) []string {
	e := newEnviron(env)
	set := e.set
	set("SLURMD_NODENAME", t.NodeName)
	set("SLURM_NODEID", strconv.Itoa(t.NodeIndex))
	set("SLURM_PROCID", strconv.Itoa(t.ID))
	set("SLURM_LOCALID", strconv.Itoa(t.Local))
	set("SLURM_GTIDS", joinInts(t.NodeTasks))
	if t.CPUsOnNode > 0 {
		set("SLURM_CPUS_ON_NODE", strconv.Itoa(t.CPUsOnNode))
	}
	if t.PID > 0 {
		set("SLURM_TASK_PID", strconv.Itoa(t.PID))
	}
	if t.TopologyAddr != "" {
		set("SLURM_TOPOLOGY_ADDR", t.TopologyAddr)
		set("SLURM_TOPOLOGY_ADDR_PATTERN", t.TopologyPattern)
	} else {
		set("SLURM_TOPOLOGY_ADDR", t.NodeName)
		set("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	}
	setGPUs(e, t)
	if t.CPUBindList != "" {
		setCPUBind(e, taskBind(e, t.CPUBindList))
	}
	e.add("TMPDIR", "/tmp")
	return e.list()
}

// gpuVars are the variables the GPU plugin writes, GRES variables first,
// then the device lists for CUDA, ROCm, oneAPI and OpenCL (all four by
// default: gres.conf's Flags=nvidia_gpu_env... narrow them).
var gpuVars = []string{"SLURM_GPUS_ON_NODE", "SLURM_STEP_GPUS",
	"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL"}

// setGPUs writes the step's GPUs on the node (gres_g_step_set_env) and,
// when the task is bound to some of them, the task's
// (gres_g_task_set_env): SLURM_GPUS_ON_NODE counts the step's GPUs on the
// node, SLURM_STEP_GPUS lists the task's usable ones by index, and the
// device lists number them as Task.GPUs explains.
func setGPUs(e *environ, t Task) {
	step := sortedSet(t.StepGPUs)
	usable := step
	if t.GPUs != nil {
		usable = sortedSet(t.GPUs)
	}
	if len(step) == 0 {
		step = usable
	}
	if len(step) == 0 {
		for _, n := range gpuVars {
			e.unset(n)
		}
		return
	}
	e.set("SLURM_GPUS_ON_NODE", strconv.Itoa(len(step)))
	if len(usable) == 0 {
		for _, n := range gpuVars[1:] {
			e.unset(n)
		}
		return
	}
	e.set("SLURM_STEP_GPUS", joinInts(usable))
	devs := usable
	if t.ConstrainDevices {
		devs = make([]int, 0, len(usable))
		for _, g := range usable {
			if i, ok := slices.BinarySearch(step, g); ok {
				devs = append(devs, i)
			}
		}
	}
	list := joinInts(devs)
	for _, n := range gpuVars[2:] {
		e.set(n, list)
	}
}

// taskBind is the binding slurmstepd writes for a task the node bound
// (see Task.CPUBindList).
func taskBind(e *environ, list string) CPUBind {
	b := CPUBind{Mode: ModeMaskCPU, List: list}
	if v, _ := e.get("SLURM_CPU_BIND_VERBOSE"); v == "verbose" {
		b.Verbose = true
	}
	typ, _ := e.get("SLURM_CPU_BIND_TYPE")
	for _, m := range []CPUBindMode{ModeMapCPU, ModeMapLdom, ModeMaskLdom} {
		if strings.Contains(typ, m.String()) {
			b.Mode = m
		}
	}
	return b
}

func sortedSet(v []int) []int {
	s := slices.Clone(v)
	slices.Sort(s)
	return slices.Compact(s)
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
