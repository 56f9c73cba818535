package readmodel

import (
	"strconv"

	"github.com/droverhq/drover/internal/cli/wireval"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Sentinels with Slurm's values: the REST API's {set, infinite, number}
// triples are folded back into them so that the print rules read as
// Slurm's do ("INFINITE prints UNLIMITED, NO_VAL prints NOT_SET").
const (
	NoVal      uint32 = wireval.NoVal
	Infinite   uint32 = wireval.Infinite
	NoVal16    uint16 = wireval.NoVal16
	Infinite16 uint16 = wireval.Infinite16
	NoVal64    uint64 = wireval.NoVal64
	Infinite64 uint64 = wireval.Infinite64
	// CoreSpecThread marks a core_spec that counts threads
	// (CORE_SPEC_THREAD).
	CoreSpecThread uint16 = 0x8000
	// threadSpecUnset is the thread_spec slurmrestd reports when the job's
	// core_spec is NO_VAL16: the thread bit stripped from 0xfffe.
	threadSpecUnset = 0x7ffe
)

// ExitCode is a process's end as slurmrestd reports it (a verbose form
// of slurmctld's wait(2) status). The commands print it three ways from
// the same reading: squeue and sacct as "exit:signal" of a valid code,
// scontrol as WEXITSTATUS/WTERMSIG pairs, sbatch --wait as a status.
type ExitCode struct {
	// Present is false when the record carries no exit code.
	Present bool
	// Pending is set for PENDING or INVALID: the job has not ended
	// (slurmctld's NO_VAL).
	Pending bool
	// Exited and Signaled say how the process ended (SUCCESS/ERROR,
	// SIGNALED/CORE_DUMPED).
	Exited, Signaled bool
	// ReturnCode and SignalID are the numbers as given, NoVal/NoVal16
	// when unset, Infinite/Infinite16 when infinite.
	ReturnCode uint32
	SignalID   uint16
}

// Valid reports a code of a process that ended.
func (e ExitCode) Valid() bool { return !e.Pending && (e.Exited || e.Signaled) }

// Status is the exit status of a process that exited, 0 otherwise.
func (e ExitCode) Status() uint32 {
	if e.Pending || !e.Exited || e.ReturnCode == NoVal || e.ReturnCode == Infinite {
		return 0
	}
	return e.ReturnCode
}

// Signal is the terminating signal of a killed process, 0 otherwise.
func (e ExitCode) Signal() uint32 {
	if e.Pending || !e.Signaled || e.SignalID == NoVal16 || e.SignalID == Infinite16 {
		return 0
	}
	return uint32(e.SignalID)
}

// String prints the code as squeue and sacct do: "exit:signal".
func (e ExitCode) String() string {
	return utoa(e.Status()) + ":" + utoa(e.Signal())
}

// WaitPair is what scontrol prints of the wait status (WEXITSTATUS,
// WTERMSIG): a killed process has status 0, an exited one signal 0; an
// absent code reads as 0:0.
func (e ExitCode) WaitPair() (status, signal uint32) {
	switch {
	case !e.Present:
		return 0, 0
	case e.Signaled:
		if e.SignalID == NoVal16 || e.SignalID == Infinite16 {
			return 0, 0
		}
		return 0, uint32(e.SignalID)
	case e.ReturnCode == NoVal || e.ReturnCode == Infinite:
		return 0, 0
	}
	return e.ReturnCode & 0xff, 0
}

func utoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// Job is one job record of a listing as the commands read it: the REST
// V0044JobInfo with its optional wrappers folded into Slurm's own
// representation (sentinel numbers, empty strings where slurmctld has NULL,
// times as seconds since the epoch with 0 for unset and infinite). squeue,
// scancel, sprio and scontrol all read it, so a field means the same in
// each. squeue fills one per streamed record: it holds no slices or
// pointers of its own, and filling it allocates nothing.
type Job struct {
	JobID         uint32
	ArrayJobID    uint32
	ArrayTaskID   uint32 // NoVal when the record is not one task
	ArrayTaskStr  string // pending tasks of an array meta record ("2-9%2")
	ArrayMaxTasks uint32
	HetJobID      uint32
	HetJobOffset  uint32
	HetJobIDSet   string

	Name      string
	Partition string
	Account   string
	QOS       string
	UserID    uint32
	UserName  string
	GroupID   uint32
	GroupName string

	State     State
	Reason    string // state_reason ("Resources")
	StateDesc string // state_description, preferred over Reason when set

	Priority uint32
	Nice     int32

	SubmitTime    int64
	StartTime     int64
	EndTime       int64
	EligibleTime  int64
	AccrueTime    int64
	Deadline      int64
	PreemptTime   int64 // NoVal/Infinite sentinels kept
	LastSchedEval int64
	ResizeTime    int64
	SuspendTime   int64
	PreSusTime    int64

	TimeLimit uint32 // minutes, NoVal or Infinite
	TimeMin   uint32 // minutes

	NumNodes uint32
	NumCPUs  uint32
	NumTasks uint32 // NoVal when the job asked for none
	MaxCPUs  uint32
	MaxNodes uint32

	MinCPUsPerNode  uint16
	MinMemory       uint64 // MB, per node or per CPU (MemPerCPU)
	MemPerCPU       bool
	MinTmpDisk      uint32
	SocketsPerNode  uint16
	CoresPerSocket  uint16
	ThreadsPerCore  uint16
	CPUsPerTask     uint16
	NTasksPerCore   uint16
	NTasksPerNode   uint16
	NTasksPerSocket uint16
	NTasksPerBoard  uint16
	BoardsPerNode   uint16
	SocketsPerBoard uint32
	CoreSpec        uint16

	Nodes      string
	SchedNodes string
	ReqNodes   string
	ExcNodes   string
	BatchHost  string
	AllocNode  string
	BatchFlag  bool

	Command          string
	WorkDir          string
	Comment          string
	AdminComment     string
	SystemComment    string
	Dependency       string
	Features         string
	ClusterFeatures  string
	Prefer           string
	Licenses         string
	LicensesAlloc    string
	Reservation      string
	WCKey            string
	Network          string
	MCSLabel         string
	Cluster          string
	Container        string
	ContainerID      string
	BurstBuffer      string
	BurstBufferState string
	StdIn            string
	StdOut           string
	StdErr           string
	StdInExpanded    string
	StdOutExpanded   string
	StdErrExpanded   string
	SLUID            string

	TresAlloc     string
	TresReq       string
	TresBind      string
	TresFreq      string
	TresPerJob    string
	TresPerNode   string
	TresPerSocket string
	TresPerTask   string
	CPUsPerTres   string
	MemPerTres    string

	// OverSubscribe is job_share_string's answer: OK, NO, YES, USER, MCS
	// or TOPO.
	OverSubscribe string
	Contiguous    bool
	Reboot        bool
	Requeue       bool
	ReqSwitch     uint32
	Wait4Switch   uint32
	DelayBoot     uint32
	RestartCnt    uint32
	AssocID       uint32
	SegmentSize   uint32
	Profile       string
	CronJob       bool

	FedOrigin         string
	FedSiblingsActive string
	FedSiblingsViable string

	ExitCode        ExitCode
	DerivedExitCode ExitCode
}

// IsArrayTask reports a record that stands for one task of an array.
func (j *Job) IsArrayTask() bool { return j.ArrayTaskID != NoVal }

// FromV0044Job reads one slurmrestd v0.0.44 job record.
func FromV0044Job(w *v0044.V0044JobInfo) Job {
	j := Job{
		JobID:         uint32(w.JobID.Or(0)),
		ArrayJobID:    zeroIfUnset(u32(w.ArrayJobID)),
		ArrayTaskID:   u32(w.ArrayTaskID),
		ArrayTaskStr:  w.ArrayTaskString.Or(""),
		ArrayMaxTasks: zeroIfUnset(u32(w.ArrayMaxTasks)),
		HetJobID:      zeroIfUnset(u32(w.HetJobID)),
		HetJobOffset:  zeroIfUnset(u32(w.HetJobOffset)),
		HetJobIDSet:   w.HetJobIDSet.Or(""),

		Name:      w.Name.Or(""),
		Partition: w.Partition.Or(""),
		Account:   w.Account.Or(""),
		QOS:       w.Qos.Or(""),
		UserID:    uint32(w.UserID.Or(0)),
		UserName:  w.UserName.Or(""),
		GroupID:   uint32(w.GroupID.Or(0)),
		GroupName: w.GroupName.Or(""),

		State:     stateOf(w.JobState),
		Reason:    w.StateReason.Or(""),
		StateDesc: w.StateDescription.Or(""),

		Priority: zeroIfUnset(u32(w.Priority)),
		Nice:     w.Nice.Or(0),

		SubmitTime:    epoch(w.SubmitTime),
		StartTime:     epoch(w.StartTime),
		EndTime:       epoch(w.EndTime),
		EligibleTime:  epoch(w.EligibleTime),
		AccrueTime:    epoch(w.AccrueTime),
		Deadline:      epoch(w.Deadline),
		PreemptTime:   epochSentinel(w.PreemptTime),
		LastSchedEval: epoch(w.LastSchedEvaluation),
		ResizeTime:    epoch(w.ResizeTime),
		SuspendTime:   epoch(w.SuspendTime),
		PreSusTime:    epoch(w.PreSusTime),

		TimeLimit: u32(w.TimeLimit),
		TimeMin:   zeroIfUnset(u32(w.TimeMinimum)),

		NumNodes: zeroIfUnset(u32(w.NodeCount)),
		NumCPUs:  zeroIfUnset(u32(w.Cpus)),
		NumTasks: u32(w.Tasks),
		MaxCPUs:  zeroIfUnset(u32(w.MaxCpus)),
		MaxNodes: zeroIfUnset(u32(w.MaxNodes)),

		MinCPUsPerNode:  u16(w.MinimumCpusPerNode),
		MinTmpDisk:      zeroIfUnset(u32(w.MinimumTmpDiskPerNode)),
		SocketsPerNode:  u16(w.SocketsPerNode),
		CoresPerSocket:  u16(w.CoresPerSocket),
		ThreadsPerCore:  u16(w.ThreadsPerCore),
		CPUsPerTask:     u16(w.CpusPerTask),
		NTasksPerCore:   u16(w.TasksPerCore),
		NTasksPerNode:   u16(w.TasksPerNode),
		NTasksPerSocket: u16(w.TasksPerSocket),
		NTasksPerBoard:  u16(w.TasksPerBoard),
		BoardsPerNode:   NoVal16, // not carried by v0.0.44
		SocketsPerBoard: uint32(w.SocketsPerBoard.Or(0)),
		CoreSpec:        coreSpec(w.CoreSpec.Or(0), w.ThreadSpec.Or(0)),

		Nodes:      w.Nodes.Or(""),
		SchedNodes: w.ScheduledNodes.Or(""),
		ReqNodes:   w.RequiredNodes.Or(""),
		ExcNodes:   w.ExcludedNodes.Or(""),
		BatchHost:  w.BatchHost.Or(""),
		AllocNode:  w.AllocatingNode.Or(""),
		BatchFlag:  w.BatchFlag.Or(false),

		Command:          w.Command.Or(""),
		WorkDir:          w.CurrentWorkingDirectory.Or(""),
		Comment:          w.Comment.Or(""),
		AdminComment:     w.AdminComment.Or(""),
		SystemComment:    w.SystemComment.Or(""),
		Dependency:       w.Dependency.Or(""),
		Features:         w.Features.Or(""),
		ClusterFeatures:  w.ClusterFeatures.Or(""),
		Prefer:           w.Prefer.Or(""),
		Licenses:         w.Licenses.Or(""),
		LicensesAlloc:    w.LicensesAllocated.Or(""),
		Reservation:      w.ResvName.Or(""),
		WCKey:            w.Wckey.Or(""),
		Network:          w.Network.Or(""),
		MCSLabel:         w.McsLabel.Or(""),
		Cluster:          w.Cluster.Or(""),
		Container:        w.Container.Or(""),
		ContainerID:      w.ContainerID.Or(""),
		BurstBuffer:      w.BurstBuffer.Or(""),
		BurstBufferState: w.BurstBufferState.Or(""),
		StdIn:            w.StandardInput.Or(""),
		StdOut:           w.StandardOutput.Or(""),
		StdErr:           w.StandardError.Or(""),
		StdInExpanded:    w.StdinExpanded.Or(""),
		StdOutExpanded:   w.StdoutExpanded.Or(""),
		StdErrExpanded:   w.StderrExpanded.Or(""),

		TresAlloc:     w.TresAllocStr.Or(""),
		TresReq:       w.TresReqStr.Or(""),
		TresBind:      w.TresBind.Or(""),
		TresFreq:      w.TresFreq.Or(""),
		TresPerJob:    w.TresPerJob.Or(""),
		TresPerNode:   w.TresPerNode.Or(""),
		TresPerSocket: w.TresPerSocket.Or(""),
		TresPerTask:   w.TresPerTask.Or(""),
		CPUsPerTres:   w.CpusPerTres.Or(""),
		MemPerTres:    w.MemoryPerTres.Or(""),

		OverSubscribe: overSubscribe(w.Shared),
		Contiguous:    w.Contiguous.Or(false),
		Reboot:        w.Reboot.Or(false),
		Requeue:       w.Requeue.Or(false),
		ReqSwitch:     uint32(w.RequiredSwitches.Or(0)),
		Wait4Switch:   uint32(w.MaximumSwitchWaitTime.Or(0)),
		DelayBoot:     zeroIfUnset(u32(w.DelayBoot)),
		RestartCnt:    uint32(w.RestartCnt.Or(0)),
		AssocID:       uint32(w.AssociationID.Or(0)),
		SegmentSize:   uint32(w.SegmentSize.Or(0)),
		Profile:       profile(w.Profile),

		FedOrigin:         w.FederationOrigin.Or(""),
		FedSiblingsActive: w.FederationSiblingsActive.Or(""),
		FedSiblingsViable: w.FederationSiblingsViable.Or(""),

		ExitCode:        exitCode(w.ExitCode),
		DerivedExitCode: exitCode(w.DerivedExitCode),
	}
	if s, ok := w.StepID.Get(); ok {
		j.SLUID = s.Sluid.Or("")
	}
	for _, f := range w.Flags {
		if f == v0044.V0044JobInfoFlagsItemCRONJOB {
			j.CronJob = true
		}
	}
	// slurmctld keeps one pn_min_memory with a per-CPU flag; the API splits
	// it in two numbers of which at most one is set.
	if n := u64(w.MemoryPerNode); n != NoVal64 {
		j.MinMemory = n
	} else if n := u64(w.MemoryPerCPU); n != NoVal64 {
		j.MinMemory, j.MemPerCPU = n, true
	}
	return j
}

// FromV0044Jobs reads a REST job list, keeping slurmctld's order.
func FromV0044Jobs(ws []v0044.V0044JobInfo) []Job {
	out := make([]Job, len(ws))
	for i := range ws {
		out[i] = FromV0044Job(&ws[i])
	}
	return out
}

func u32(o v0044.OptV0044Uint32NoValStruct) uint32 { return wireval.U32(o) }
func u16(o v0044.OptV0044Uint16NoValStruct) uint16 { return wireval.U16(o) }
func u64(o v0044.OptV0044Uint64NoValStruct) uint64 { return wireval.U64(o) }

// zeroIfUnset maps NO_VAL to 0, for counters slurmctld never leaves unset
// but a sparse REST record might omit.
func zeroIfUnset(v uint32) uint32 {
	if v == NoVal {
		return 0
	}
	return v
}

// epoch reads a timestamp; unset and infinite read as 0 ("N/A" in squeue).
func epoch(o v0044.OptV0044Uint64NoValStruct) int64 {
	v, ok := o.Get()
	if !ok || !v.Set.Or(false) || v.Infinite.Or(false) {
		return 0
	}
	return v.Number.Or(0)
}

// epochSentinel reads a timestamp keeping Slurm's INFINITE and NO_VAL,
// which squeue prints as words for preempt_time.
func epochSentinel(o v0044.OptV0044Uint64NoValStruct) int64 {
	v, ok := o.Get()
	switch {
	case !ok:
		return 0
	case v.Infinite.Or(false):
		return int64(Infinite)
	case !v.Set.Or(false):
		return int64(NoVal)
	}
	return v.Number.Or(0)
}

func stateOf(items []v0044.V0044JobInfoJobStateItem) State {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = string(it)
	}
	return StateFromWire(names)
}

// coreSpec rebuilds slurmctld's core_spec from the API's split view: the
// API reports NO_VAL16 as core_spec 0 with thread_spec 0x7ffe.
func coreSpec(core, thread int32) uint16 {
	switch {
	case thread == threadSpecUnset:
		return NoVal16
	case thread > 0:
		return uint16(thread) | CoreSpecThread
	}
	return uint16(core)
}

func overSubscribe(items []v0044.V0044JobInfoSharedItem) string {
	if len(items) == 0 {
		return "OK"
	}
	switch items[0] {
	case v0044.V0044JobInfoSharedItemNone:
		return "NO"
	case v0044.V0044JobInfoSharedItemOversubscribe:
		return "YES"
	case v0044.V0044JobInfoSharedItemUser:
		return "USER"
	case v0044.V0044JobInfoSharedItemMcs:
		return "MCS"
	case v0044.V0044JobInfoSharedItemTopo:
		return "TOPO"
	}
	return "OK"
}

// profile prints acct_gather_profile_to_string's spelling.
func profile(items []v0044.V0044JobInfoProfileItem) string {
	out := ""
	for _, it := range items {
		var n string
		switch it {
		case v0044.V0044JobInfoProfileItemNOTSET:
			return "NotSet"
		case v0044.V0044JobInfoProfileItemNONE:
			return "None"
		case v0044.V0044JobInfoProfileItemENERGY:
			n = "Energy"
		case v0044.V0044JobInfoProfileItemLUSTRE:
			n = "Lustre"
		case v0044.V0044JobInfoProfileItemNETWORK:
			n = "Network"
		case v0044.V0044JobInfoProfileItemTASK:
			n = "Task"
		default:
			continue
		}
		if out != "" {
			out += ","
		}
		out += n
	}
	if out == "" {
		return "NotSet"
	}
	return out
}

// exitCode reads the API's verbose exit code, which slurmrestd derives
// from the wait status (PENDING stands for NO_VAL).
func exitCode(o v0044.OptV0044ProcessExitCodeVerbose) ExitCode {
	v, ok := o.Get()
	if !ok {
		return ExitCode{}
	}
	e := ExitCode{Present: true, ReturnCode: u32(v.ReturnCode), SignalID: NoVal16}
	if sig, ok := v.Signal.Get(); ok {
		e.SignalID = u16(sig.ID)
	}
	for _, st := range v.Status {
		switch st {
		case v0044.V0044ProcessExitCodeVerboseStatusItemPENDING, v0044.V0044ProcessExitCodeVerboseStatusItemINVALID:
			e.Pending = true
		case v0044.V0044ProcessExitCodeVerboseStatusItemSIGNALED, v0044.V0044ProcessExitCodeVerboseStatusItemCOREDUMPED:
			e.Signaled = true
		case v0044.V0044ProcessExitCodeVerboseStatusItemSUCCESS, v0044.V0044ProcessExitCodeVerboseStatusItemERROR:
			e.Exited = true
		}
	}
	return e
}
