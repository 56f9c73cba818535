// Package job holds the domain model of a batch job: what was asked for,
// what was granted and how it ended. It does no I/O and knows nothing of the
// wire format; bridge packages translate to and from it.
package job

import (
	"strconv"
	"time"
)

// ID is a Slurm job id.
type ID uint32

// NoTask marks the absence of an array task id (Slurm's NO_VAL).
const NoTask uint32 = 0xFFFFFFFE

// Infinite is the time limit "UNLIMITED" (Slurm's INFINITE), in minutes.
const Infinite uint32 = 0xFFFFFFFF

// Request is what the submitter asked for. The controller fills defaults
// (partition, time limit, memory) at submission, so a stored Request is
// always complete.
type Request struct {
	Name        string
	Partition   string
	Script      string
	Argv        []string
	Environment []string
	WorkDir     string
	StdOut      string
	StdErr      string
	StdIn       string

	UserID    uint32
	GroupID   uint32
	UserName  string
	GroupName string

	MinNodes     uint32
	MaxNodes     uint32
	NumTasks     uint32
	TasksPerNode uint32 // 0: not given
	CPUsPerTask  uint32
	// MemPerNode and MemPerCPU are in MB; at most one is set (0: unset).
	MemPerNode uint64
	MemPerCPU  uint64
	// GPUsPerNode comes from --gres=gpu[:type]:N or --gpus-per-node.
	GPUsPerNode uint32
	// GPUsPerJob comes from --gpus / -G.
	GPUsPerJob uint32
	// GPUType restricts GPUs to one type ("a100"); empty: any.
	GPUType string
	// Gres is the request as the user wrote it, for display.
	Gres string

	NodeList []string
	Exclude  []string

	// TimeLimit is in minutes (Infinite: no limit).
	TimeLimit uint32
	TimeMin   uint32
	BeginTime time.Time

	Exclusive bool
	Requeue   bool
	// Interactive is an allocation without a batch script (salloc, srun
	// outside a job): it runs job steps until its owner releases it.
	Interactive bool `json:",omitempty"`
	Comment     string
	Account     string
	QOS         string
	Nice        int32
	Dependency  string
	// MaxSwitches is --switches: the most leaf switches the job wants to
	// span (0: any), for at most SwitchWait after it became eligible.
	MaxSwitches uint32
	SwitchWait  time.Duration
	// Reservation names the advance reservation the job runs in.
	Reservation string
	SubmitLine  string
	// SubmitHost is the host sbatch ran on (SLURM_SUBMIT_HOST).
	SubmitHost string
	// OpenMode is "append" or "truncate" for the output files.
	OpenMode string
	Array    ArraySpec
	// Warn is --signal: a signal sent ahead of the job's end.
	Warn Warning `json:",omitzero"`
}

// Warning is --signal=[{R|B}:]num[@time]: signal Signal is sent Seconds
// before the job's time limit (or, with Reservation, its reservation's
// end), to its steps, or with BatchOnly to its batch script alone.
type Warning struct {
	Signal      int32  `json:",omitempty"`
	Seconds     uint32 `json:",omitempty"`
	BatchOnly   bool   `json:",omitempty"`
	Reservation bool   `json:",omitempty"`
}

// ArraySpec is the array part of a submission.
type ArraySpec struct {
	// Expr is the --array value as given ("0-9%2"); empty: not an array.
	Expr string
	// Tasks are the expanded task ids, sorted.
	Tasks      []uint32
	MaxRunning uint32
}

// Hold says who holds a pending job.
type Hold uint8

// Hold kinds: a user hold is released by the user, an admin hold only by an
// operator (JobHeldUser / JobHeldAdmin).
const (
	NotHeld Hold = iota
	HeldUser
	HeldAdmin
)

// Allocation is what the scheduler granted, node by node.
type Allocation struct {
	Nodes []NodeAlloc
	// Billing is the billing TRES its partition's TRESBillingWeights
	// give it (0: its CPU count).
	Billing uint64 `json:",omitempty"`
}

// NodeAlloc is the share of one node a job holds.
type NodeAlloc struct {
	Node  string
	CPUs  uint32
	MemMB uint64
	// GPUs are device indices on the node (gres index order).
	GPUs  []int
	Tasks uint32
}

// NodeNames lists the allocated nodes in allocation order.
func (a *Allocation) NodeNames() []string {
	if a == nil {
		return nil
	}
	out := make([]string, len(a.Nodes))
	for i, n := range a.Nodes {
		out[i] = n.Node
	}
	return out
}

// TotalCPUs sums the CPUs over the allocation.
func (a *Allocation) TotalCPUs() uint32 {
	if a == nil {
		return 0
	}
	var n uint32
	for _, na := range a.Nodes {
		n += na.CPUs
	}
	return n
}

// TotalGPUs sums the GPUs over the allocation.
func (a *Allocation) TotalGPUs() int {
	if a == nil {
		return 0
	}
	n := 0
	for _, na := range a.Nodes {
		n += len(na.GPUs)
	}
	return n
}

// Job is one job record as the controller holds it. An array whose tasks
// have not all started is one record whose PendingTasks lists the rest, as
// slurmctld keeps a single "meta" record.
type Job struct {
	ID  ID
	Req Request
	// ScriptKey names where the script and environment are stored (the
	// state store's blobs): they stay out of memory until a launch needs
	// them, as slurmctld keeps them in files. Empty when Req carries them.
	ScriptKey string

	// ArrayJobID is the id of the array this job belongs to (0: none).
	ArrayJobID ID
	// ArrayTaskID is this record's task, or NoTask for the meta-record.
	ArrayTaskID uint32
	// PendingTasks are the array tasks not yet split off (meta-record).
	PendingTasks []uint32

	// HetJobID is the leader's id when this record is a component of a
	// heterogeneous job (0: none), HetJobOffset its place (the leader's
	// is 0) and HetSize how many components the job has; their ids are
	// HetJobID to HetJobID+HetSize-1, as slurmctld gives them.
	HetJobID     ID     `json:",omitempty"`
	HetJobOffset uint32 `json:",omitempty"`
	HetSize      uint32 `json:",omitempty"`

	State  State
	Reason Reason
	Hold   Hold
	// Priority is the scheduling priority (0 while held). Under
	// priority/multifactor it is computed when read, unless PrioritySet:
	// an operator fixed it (scontrol update Priority=).
	Priority    uint32
	PrioritySet bool

	SubmitTime   time.Time
	EligibleTime time.Time
	StartTime    time.Time
	EndTime      time.Time
	// PlannedStart is the scheduler's estimate for a pending job, and
	// SchedNodes the nodes it expects to use then (neither is durable:
	// each backfill pass plans again).
	PlannedStart time.Time
	SchedNodes   []string
	// NodeGuess is how many nodes a pending job is expected to take
	// (slurmctld's node_cnt_wag), for readers; not durable either.
	NodeGuess uint32 `json:"-"`
	// Backfilled marks a job the backfill pass started.
	Backfilled bool

	Alloc *Allocation
	// BatchHost runs the batch script (the first allocated node).
	BatchHost string

	// ExitCode and Signal describe how the batch script ended
	// (ExitCode=2:0, 0:9 in scontrol).
	ExitCode int32
	Signal   int32
	// Completing is set while a cancelled or timed-out job's processes are
	// still being killed.
	Completing bool
	// CancelledBy is the uid that cancelled the job.
	CancelledBy uint32
	// BatchUsage is what the batch script's processes used, reported by
	// its node when it ended (nil: not reported).
	BatchUsage *Usage `json:",omitempty"`
	// RequeueOnEnd marks a running job that scontrol requeue asked to
	// requeue (held, with RequeueHold) once its processes are gone. It is
	// part of the state, so a controller restarted meanwhile still
	// requeues the job instead of ending it.
	RequeueOnEnd bool
	RequeueHold  bool
	// RequeueAs is the state the run that ends is recorded with when the
	// job goes back to the queue: NODE_FAIL, PREEMPTED, or PENDING for an
	// operator's requeue (what slurmctld's job completion log shows).
	RequeueAs    State
	RestartCount uint32
	// WarnSent is set once this run got its --signal warning.
	WarnSent bool `json:",omitempty"`
	// LastUpdate changes whenever the record changes (REST update_time).
	LastUpdate time.Time
}

// IsHet reports whether the job is a component of a heterogeneous job.
func (j *Job) IsHet() bool { return j.HetJobID != 0 }

// IsHetLeader reports whether the job leads a heterogeneous job: its
// batch script runs there and operations on it reach every component.
func (j *Job) IsHetLeader() bool { return j.HetJobID != 0 && j.HetJobID == j.ID }

// HetComponents lists the ids of the components of j's heterogeneous job
// in offset order (nil for other jobs).
func (j *Job) HetComponents() []ID {
	if j.HetJobID == 0 {
		return nil
	}
	ids := make([]ID, j.HetSize)
	for i := range ids {
		ids[i] = j.HetJobID + ID(i)
	}
	return ids
}

// HetJobIDSet is the ids of the components as Slurm writes them
// ("123-125").
func (j *Job) HetJobIDSet() string {
	if j.HetJobID == 0 {
		return ""
	}
	if j.HetSize <= 1 {
		return strconv.FormatUint(uint64(j.HetJobID), 10)
	}
	return strconv.FormatUint(uint64(j.HetJobID), 10) + "-" + strconv.FormatUint(uint64(j.HetJobID)+uint64(j.HetSize)-1, 10)
}

// RunsScript reports whether the job runs a batch script: an allocation
// (salloc, srun) does not, nor does a heterogeneous job's component other
// than its leader, whose script runs for them all.
func (j *Job) RunsScript() bool {
	return !j.Req.Interactive && (j.HetJobID == 0 || j.HetJobOffset == 0)
}

// IsArray reports whether the job belongs to an array.
func (j *Job) IsArray() bool { return j.ArrayJobID != 0 }

// IsArrayMeta reports whether this record stands for not-yet-started tasks.
func (j *Job) IsArrayMeta() bool { return j.ArrayJobID != 0 && j.ArrayTaskID == NoTask }

// Pending reports whether the job is waiting to start.
func (j *Job) Pending() bool { return j.State == Pending }

// Clone returns a deep copy.
func (j *Job) Clone() *Job {
	c := *j
	c.Req.Argv = append([]string(nil), j.Req.Argv...)
	c.Req.Environment = append([]string(nil), j.Req.Environment...)
	c.Req.NodeList = append([]string(nil), j.Req.NodeList...)
	c.Req.Exclude = append([]string(nil), j.Req.Exclude...)
	c.Req.Array.Tasks = append([]uint32(nil), j.Req.Array.Tasks...)
	c.PendingTasks = append([]uint32(nil), j.PendingTasks...)
	if j.Alloc != nil {
		a := &Allocation{Nodes: make([]NodeAlloc, len(j.Alloc.Nodes))}
		for i, n := range j.Alloc.Nodes {
			n.GPUs = append([]int(nil), n.GPUs...)
			a.Nodes[i] = n
		}
		c.Alloc = a
	}
	return &c
}

// TasksOnNodes returns how many tasks each node of a granted allocation
// runs, in allocation order.
func (j *Job) TasksOnNodes() []uint32 {
	if j.Alloc == nil {
		return nil
	}
	out := make([]uint32, len(j.Alloc.Nodes))
	for i, n := range j.Alloc.Nodes {
		out[i] = n.Tasks
	}
	return out
}
