// Package env builds the environment of a job step's tasks exactly as
// Slurm does, so that launchers reading it (torchrun, PyTorch Lightning,
// submitit, Open MPI, Intel MPI) see what they see under srun.
//
// Slurm builds it in two places and this package keeps the split:
//
//   - StepVars is srun's part: srun edits its own environment (setup_env,
//     env_array_for_step, _set_env_vars, the umask and debug hints) and
//     sends the result to every node of the step. The variables that
//     slurmd and slurmstepd then add with the same value on every node and
//     for every task (SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR,
//     SLURM_JOB_UID/GID/USER, SLURM_JOB_START_TIME...) are set here too:
//     a task cannot tell who wrote them, and the node daemon then only
//     needs what differs per node or per task.
//   - TaskVars is the node daemon's part (slurmstepd's exec_task and the
//     GPU GRES plugin): ranks, the node's name, CPUs and topology, the
//     GPUs and the CPU binding.
//
// Releases differ in a few variables; Step.Release picks one (see
// Release). Names, formats and the set of variables were checked against
// captures from Slurm 22.05 and 26.11 (shared/reference/env).
package env

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
)

// Release is a Slurm release, numbered YYMM (2205 is 22.05), whose srun and
// slurmstepd the environment follows where releases differ. The zero value
// is Newest.
type Release uint16

// Releases at which the step environment changed.
const (
	Slurm2205 Release = 2205 // SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0 inside allocations; no SLURMD_DEBUG
	Slurm2302 Release = 2302 // SLURMD_DEBUG=2 by default; SLURM_MEM_PER_*, SLURM_JOB_START_TIME/END_TIME, SLURM_JOB_LICENSES
	Slurm2311 Release = 2311 // no more _PACK_GROUP_0 copy; OMPI_/PRTE_MCA_plm_slurm_args
	Slurm2405 Release = 2405 // HYDRA_* and I_MPI_HYDRA_* bootstrap hints
	Slurm2411 Release = 2411 // SLURM_OOM_KILL_STEP
	Slurm2605 Release = 2605 // srun writes SLURM_JOB_GROUP, SLURM_CLUSTER_NAME and SLURM_JOB_ACCOUNT for every step
	Slurm2611 Release = 2611
	// Newest is the release a zero Release means.
	Newest = Slurm2611
)

// String is the release as Slurm writes it ("22.05").
func (r Release) String() string {
	if r == 0 {
		r = Newest
	}
	return fmt.Sprintf("%02d.%02d", r/100, r%100)
}

// atLeast says whether r behaves like o or a later release.
func (r Release) atLeast(o Release) bool { return r == 0 || r >= o }

// Infinite is a time limit without end (Slurm's INFINITE).
const Infinite uint32 = 0xFFFFFFFF

// Step is what srun knows of the step and its job when it launches.
type Step struct {
	JobID, StepID           uint32
	JobName                 string // SLURM_JOB_NAME (srun's -J, or the job's name inherited through SLURM_JOB_NAME); "" leaves it
	Cluster                 string
	Partition, Account, QOS string
	// the job's allocation (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE, SLURM_JOB_NUM_NODES, SLURM_NTASKS of the job...)
	JobNodes       []string
	JobCPUsPerNode []uint32
	// JobNumTasks and JobTasksPerNode are the job's task count and layout
	// (its SLURM_NTASKS and SLURM_TASKS_PER_NODE). srun never writes them
	// into a step: a step's SLURM_NTASKS and SLURM_TASKS_PER_NODE are its
	// own, and with PreserveEnv base keeps whatever it holds. They are
	// here for callers that build base from the same Step.
	JobNumTasks     int   // 0: the job gave none
	JobTasksPerNode []int // the job's SLURM_TASKS_PER_NODE
	// the step's layout
	Nodes        []string
	TasksPerNode []int
	CPUsPerTask  int // 0: not given
	// Distribution is SLURM_DISTRIBUTION's value ("block", "cyclic",
	// "block:cyclic", "cyclic,pack"...). "" is srun's default: cyclic
	// when the step has no more tasks than nodes, block otherwise.
	Distribution string
	CPUBind      string // --cpu-bind as given ("" none given); see ParseCPUBind
	SrunHost     string // SLURM_SRUN_COMM_HOST / SLURM_LAUNCH_NODE_IPADDR (an address)
	SrunPort     int    // SLURM_SRUN_COMM_PORT and SLURM_STEP_LAUNCHER_PORT
	Umask        string // SLURM_UMASK, e.g. "0022"; kept if base has one, as srun does
	// GPUsPerNode and GPUsPerTask are the step's GPU request (--gres=gpu:N
	// or --gpus-per-node, --gpus-per-task). srun writes no variable from
	// the counts: SLURM_GPUS_PER_NODE and SLURM_TRES_PER_TASK come from
	// the options as spelled (jobopts.AddJobEnv, set_env_from_opts), and
	// what each node and task got is Task.StepGPUs and Task.GPUs.
	GPUsPerNode int
	GPUsPerTask int
	// SubmitDir and SubmitHost are written only with OwnAllocation: inside
	// an allocation the job's values are inherited.
	SubmitDir, SubmitHost string // for salloc/srun outside an allocation (SLURM_SUBMIT_DIR/HOST)
	// TimeLimitMin is the job's limit in minutes (0 or Infinite: none),
	// for SLURM_JOB_END_TIME.
	TimeLimitMin          uint32
	MemPerCPU, MemPerNode uint64 // MB, 0: unset; the job's, written only where base has neither
	// StepMem says MemPerCPU and MemPerNode are srun's own --mem or
	// --mem-per-cpu: they then replace what the job's environment says.
	StepMem bool

	// Release selects the Slurm release to follow (0: Newest).
	Release Release
	// UID, GID, User and Group are the job's owner (SLURM_JOB_UID,
	// SLURM_JOB_GID, SLURM_JOB_USER, SLURM_JOB_GROUP); an empty name is
	// not written.
	UID, GID    uint32
	User, Group string
	Reservation string // SLURM_JOB_RESERVATION, "" none
	Licenses    string // SLURM_JOB_LICENSES as slurmstepd writes it, "" none
	// StartTime is the job's start (SLURM_JOB_START_TIME, and with
	// TimeLimitMin SLURM_JOB_END_TIME); zero leaves both as base has them.
	StartTime   time.Time
	OOMKillStep bool // SLURM_OOM_KILL_STEP (1 or 0)
	Nice        int  // srun's own nice value: SLURM_PRIO_PROCESS
	// Verbosity is srun's -v count minus its -q count: SRUN_DEBUG is 3
	// (info) plus this, unless base has SRUN_DEBUG.
	Verbosity int
	// SlurmdDebug is --slurmd-debug as a level (0: srun's default, 2 or
	// "error" since 23.02 and none before).
	SlurmdDebug int
	// PreserveEnv is srun -E: SLURM_NNODES, SLURM_NTASKS, SLURM_NPROCS and
	// SLURM_TASKS_PER_NODE keep base's values.
	PreserveEnv bool
	// OwnAllocation says srun got the job's allocation itself (it ran
	// outside sbatch and salloc): it then also writes SLURM_JOB_NUM_NODES,
	// SLURM_CLUSTER_NAME, SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST.
	OwnAllocation bool
	// HetStep says the step runs in components of a heterogeneous job
	// (srun A : B, --het-group): srun then writes the job's variables
	// (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE, SLURM_JOB_NUM_NODES)
	// for those components, JobNodes and JobCPUsPerNode, over the ones
	// the batch script had.
	HetStep bool
}

// NumTasks is the step's task count.
func (s Step) NumTasks() int {
	n := 0
	for _, t := range s.TasksPerNode {
		n += t
	}
	return n
}

// jobNodes is the job's node list; a Step without one is its own
// allocation.
func (s Step) jobNodes() []string {
	if len(s.JobNodes) > 0 {
		return s.JobNodes
	}
	return s.Nodes
}

// distribution is SLURM_DISTRIBUTION's value: as given, or what srun
// picks when -m is not given (launch.c: cyclic if the step has no more
// tasks than nodes, block otherwise).
func (s Step) distribution() string {
	if s.Distribution != "" {
		return s.Distribution
	}
	if s.NumTasks() <= len(s.Nodes) {
		return "cyclic"
	}
	return "block"
}

// StepVars returns srun's environment with the step's variables set
// (replacing any value inherited from the batch script), in the order
// given by base, new ones appended sorted.
//
// The variables, by who writes them in Slurm:
//
//	srun setup_env:        SLURM_NTASKS, SLURM_NPROCS, SLURM_CPUS_PER_TASK,
//	                       SLURM_DISTRIBUTION, SLURM_CPU_BIND*, SLURMD_DEBUG,
//	                       SLURM_JOB_ID, SLURM_JOBID, SLURM_JOB_NAME,
//	                       SLURM_STEP_ID, SLURM_STEPID, SLURM_NODELIST (the
//	                       job's nodes), SLURM_JOB_NUM_NODES (own allocation),
//	                       SLURM_JOB_PARTITION, SLURM_TASKS_PER_NODE,
//	                       SLURM_JOB_UID, SLURM_JOB_USER, SLURM_JOB_GID,
//	                       SLURM_JOB_GROUP, SLURM_JOB_ACCOUNT, SLURM_JOB_QOS,
//	                       SLURM_JOB_RESERVATION
//	env_array_for_step:    SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES,
//	                       SLURM_STEP_NUM_TASKS, SLURM_STEP_TASKS_PER_NODE,
//	                       SLURM_STEP_LAUNCHER_PORT, SLURM_SRUN_COMM_PORT,
//	                       SLURM_NNODES, SLURM_JOB_NODELIST (if absent),
//	                       SLURM_CLUSTER_NAME
//	_set_env_vars:         SLURM_JOB_CPUS_PER_NODE, SLURM_MEM_PER_CPU or
//	                       SLURM_MEM_PER_NODE (each only if absent)
//	srun's own state:      SLURM_UMASK and SRUN_DEBUG (if absent),
//	                       SLURM_PRIO_PROCESS, SLURM_SUBMIT_DIR/HOST (own
//	                       allocation), the MPI launcher hints (if absent)
//	slurmd / slurmstepd:   SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR,
//	                       SLURM_JOB_START_TIME, SLURM_JOB_END_TIME,
//	                       SLURM_JOB_LICENSES, SLURM_OOM_KILL_STEP
//
// An invalid CPUBind writes no binding; the shim rejects it first with
// ParseCPUBind, as srun exits on it.
func StepVars(base []string, s Step) []string {
	env := newEnviron(base)
	r := s.Release
	set := env.set
	ntasks := s.NumTasks()
	stepNodes := hostlist.Compress(s.Nodes)
	tpn := fold(s.TasksPerNode)

	// _set_env_vars: the job's CPUs and memory, kept when inherited.
	if len(s.JobCPUsPerNode) > 0 {
		cpus := fold(s.JobCPUsPerNode)
		env.add("SLURM_JOB_CPUS_PER_NODE", cpus)
		if !r.atLeast(Slurm2311) && !s.OwnAllocation {
			// Up to 23.02 srun took every step inside an allocation
			// for component 0 of a heterogeneous job.
			env.add("SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", cpus)
		}
	}
	if s.StepMem {
		env.unset("SLURM_MEM_PER_CPU")
		env.unset("SLURM_MEM_PER_NODE")
	}
	if r.atLeast(Slurm2302) || s.StepMem {
		switch {
		case s.MemPerCPU > 0:
			env.add("SLURM_MEM_PER_CPU", strconv.FormatUint(s.MemPerCPU, 10))
		case s.MemPerNode > 0:
			env.add("SLURM_MEM_PER_NODE", strconv.FormatUint(s.MemPerNode, 10))
		}
	}

	// srun's own state (_set_umask_env, set_prio_process_env,
	// set_submit_dir_env).
	env.add("SRUN_DEBUG", strconv.Itoa(3+s.Verbosity))
	if s.Umask != "" {
		env.add("SLURM_UMASK", s.Umask)
	}
	set("SLURM_PRIO_PROCESS", strconv.Itoa(s.Nice))
	if s.OwnAllocation {
		if s.SubmitDir != "" {
			set("SLURM_SUBMIT_DIR", s.SubmitDir)
		}
		if s.SubmitHost != "" {
			set("SLURM_SUBMIT_HOST", s.SubmitHost)
		}
	}

	// setup_env.
	if !s.PreserveEnv && ntasks > 0 {
		set("SLURM_NTASKS", strconv.Itoa(ntasks))
		set("SLURM_NPROCS", strconv.Itoa(ntasks))
	}
	if s.CPUsPerTask > 0 {
		set("SLURM_CPUS_PER_TASK", strconv.Itoa(s.CPUsPerTask))
	}
	set("SLURM_DISTRIBUTION", s.distribution())
	if s.CPUBind != "" {
		if b, err := ParseCPUBind(s.CPUBind); err == nil && b.IsSet() {
			setCPUBind(env, b)
		}
	}
	if d := s.slurmdDebug(); d > 0 {
		set("SLURMD_DEBUG", strconv.Itoa(d))
	}
	set("SLURM_JOB_ID", u32(s.JobID))
	set("SLURM_JOBID", u32(s.JobID))
	if s.JobName != "" {
		set("SLURM_JOB_NAME", s.JobName)
	}
	set("SLURM_STEP_ID", u32(s.StepID))
	set("SLURM_STEPID", u32(s.StepID))
	if s.OwnAllocation {
		n := strconv.Itoa(len(s.jobNodes()))
		set("SLURM_JOB_NUM_NODES", n)
		if !s.PreserveEnv {
			set("SLURM_NNODES", n)
		}
	}
	set("SLURM_NODELIST", hostlist.Compress(s.jobNodes()))
	if s.Partition != "" {
		set("SLURM_JOB_PARTITION", s.Partition)
	}
	if !s.PreserveEnv {
		set("SLURM_TASKS_PER_NODE", tpn)
	}
	// slurmstepd writes the owner for every task; srun too since 26.05.
	set("SLURM_JOB_UID", u32(s.UID))
	set("SLURM_JOB_GID", u32(s.GID))
	if s.User != "" {
		set("SLURM_JOB_USER", s.User)
	}
	if s.Group != "" && r.atLeast(Slurm2605) {
		set("SLURM_JOB_GROUP", s.Group)
	}
	if s.Account != "" {
		set("SLURM_JOB_ACCOUNT", s.Account)
	}
	if s.QOS != "" {
		set("SLURM_JOB_QOS", s.QOS)
	}
	if s.Reservation != "" {
		set("SLURM_JOB_RESERVATION", s.Reservation)
	}

	// env_array_for_step.
	if s.Cluster != "" && (s.OwnAllocation || r.atLeast(Slurm2605)) {
		set("SLURM_CLUSTER_NAME", s.Cluster)
	}
	env.add("SLURM_JOB_NODELIST", stepNodes)
	if s.HetStep {
		set("SLURM_JOB_NODELIST", hostlist.Compress(s.jobNodes()))
		set("SLURM_JOB_NUM_NODES", strconv.Itoa(len(s.jobNodes())))
		if len(s.JobCPUsPerNode) > 0 {
			set("SLURM_JOB_CPUS_PER_NODE", fold(s.JobCPUsPerNode))
		}
	}
	set("SLURM_STEP_NODELIST", stepNodes)
	set("SLURM_STEP_NUM_NODES", strconv.Itoa(len(s.Nodes)))
	set("SLURM_STEP_NUM_TASKS", strconv.Itoa(ntasks))
	set("SLURM_STEP_TASKS_PER_NODE", tpn)
	if !s.PreserveEnv {
		set("SLURM_NNODES", strconv.Itoa(len(s.Nodes)))
	}
	if s.SrunPort > 0 {
		set("SLURM_STEP_LAUNCHER_PORT", strconv.Itoa(s.SrunPort))
		set("SLURM_SRUN_COMM_PORT", strconv.Itoa(s.SrunPort))
	}

	// set_env_from_opts: tell MPI launchers started in the step to use
	// srun, unless the user chose otherwise.
	if r.atLeast(Slurm2311) {
		env.add("OMPI_MCA_plm_slurm_args", "--external-launcher")
		env.add("PRTE_MCA_plm_slurm_args", "--external-launcher")
	}
	if r.atLeast(Slurm2405) {
		for _, h := range [][2]string{
			{"HYDRA_BOOTSTRAP", "HYDRA_LAUNCHER_EXTRA_ARGS"},
			{"I_MPI_HYDRA_BOOTSTRAP", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"},
		} {
			if v, ok := env.get(h[0]); !ok || v == "slurm" {
				env.add(h[0], "slurm")
				env.add(h[1], "--external-launcher")
			}
		}
	}

	// slurmd (the address srun's launch came from) and slurmstepd.
	if s.SrunHost != "" {
		set("SLURM_SRUN_COMM_HOST", s.SrunHost)
		set("SLURM_LAUNCH_NODE_IPADDR", s.SrunHost)
	}
	if r.atLeast(Slurm2302) {
		if !s.StartTime.IsZero() {
			start := s.StartTime.Unix()
			set("SLURM_JOB_START_TIME", strconv.FormatInt(start, 10))
			set("SLURM_JOB_END_TIME", strconv.FormatInt(start+int64(s.limitMin())*60, 10))
		}
		if s.Licenses != "" {
			set("SLURM_JOB_LICENSES", s.Licenses)
		}
	}
	if r.atLeast(Slurm2411) {
		oom := "0"
		if s.OOMKillStep {
			oom = "1"
		}
		set("SLURM_OOM_KILL_STEP", oom)
	}
	return env.list()
}

// limitMin is the job's limit for SLURM_JOB_END_TIME: an unlimited job
// "ends" a year after it starts, as slurmctld computes end_time.
func (s Step) limitMin() uint32 {
	if s.TimeLimitMin == 0 || s.TimeLimitMin == Infinite {
		return 365 * 24 * 60
	}
	return s.TimeLimitMin
}

// slurmdDebug is SLURMD_DEBUG's value, 0 for none: srun clamps the level
// between error (2) and debug2 (6) since 23.02, whose default is error.
func (s Step) slurmdDebug() int {
	if !s.Release.atLeast(Slurm2302) {
		return max(s.SlurmdDebug, 0)
	}
	return min(max(s.SlurmdDebug, 2), 6)
}

func u32(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// fold writes per-node counts as Slurm does (uint16_array_to_str,
// uint32_compressed_to_str): runs of equal values fold into "N(xK)", so
// 5,1,1,1 is "5,1(x3)".
func fold[T int | uint32](vals []T) string {
	var b strings.Builder
	for i := 0; i < len(vals); {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(vals[i]), 10))
		if n := j - i; n > 1 {
			b.WriteString("(x" + strconv.Itoa(n) + ")")
		}
		i = j
	}
	return b.String()
}
