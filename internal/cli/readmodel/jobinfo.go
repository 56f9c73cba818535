package readmodel

import (
	"slices"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// JobInfo is a job record whole, as `scontrol show job` and salloc read
// it: the listing's Job and the members only they use. squeue never
// fills one, so its per-record cost does not carry these.
type JobInfo struct {
	Job

	FailedNode     string
	BatchFeatures  string
	Cron           string
	SubmitLine     string
	Extra          string
	MailUser       string
	SELinuxContext string
	Hold           bool
	// PreemptableTime is preemptable_time: 0 when unset or infinite.
	PreemptableTime int64
	// Flags are slurmrestd's job flags as it spells them
	// ("CRON_JOB", "BACKFILL_ATTEMPTED").
	Flags []string
	// SizeStr is job_size_str, the node counts of a pending job's
	// --nodes list ("1,4-6").
	SizeStr []string
	// MailType lists --mail-type as slurmrestd spells it ("TIME=50%").
	MailType     []string
	TasksPerTres uint16 // NoVal16 when unset
	// CPUFreqMin, CPUFreqMax and CPUFreqGov are --cpu-freq's parts,
	// NoVal when unset.
	CPUFreqMin, CPUFreqMax, CPUFreqGov uint32
	// MemPerNode and MemPerCPU are the two halves of pn_min_memory as
	// given (NoVal64 when unset); Job.MinMemory is the one in force.
	MemPerNode, MemPerCPU uint64
	// GresDetail is the GRES allocated on each node of Alloc, in order.
	GresDetail []string
	// Alloc is job_resources' nodes, in the record's order; AllocNodes
	// is its node list.
	Alloc      []NodeAlloc
	AllocNodes string

	// NoBaseState is set when job_state names no base state. Job.State
	// reads that as PENDING, which is what squeue prints; scontrol prints
	// "?" and holds the job neither pending, running nor suspended, as
	// job_state_string and the IS_JOB_* tests do with a base state out of
	// range.
	NoBaseState bool
	// Unfolded is what Job folds to 0 for squeue, as scontrol reads it.
	Unfolded Unfolded
}

// Unfolded holds members of a job record with the sentinels that Job
// folds to 0, because scontrol shows them: slurm_make_time_str prints an
// INFINITE time differently from an unset one and _sprint_job_info counts
// RunTime from it, NumCPUs= prints an unset count as NO_VAL, a pending
// job's unset node count gives way to its maximum, and `show job 5+0`
// matches het_job_offset as given.
type Unfolded struct {
	// The timestamps in seconds since the epoch: 0 when absent or unset,
	// int64(Infinite) when slurmrestd reports INFINITE. A set number
	// wins over the infinite mark, as scontrol has always read them.
	SubmitTime, EligibleTime, AccrueTime, StartTime, EndTime int64
	Deadline, ResizeTime, SuspendTime, PreSusTime            int64
	LastSchedEval, PreemptableTime, PreemptTime              int64
	// NumNodes, NumCPUs and HetJobOffset are node_count, cpus and
	// het_job_offset: NoVal when absent or unset, Infinite when infinite.
	NumNodes, NumCPUs, HetJobOffset uint32
}

// StateString names the state as scontrol's JobState= does
// (job_state_string): a printed flag first, then the base state, "?"
// for a record that names none.
func (j *JobInfo) StateString() string {
	if j.NoBaseState && !j.State.printsFlag() {
		return "?"
	}
	return j.State.String()
}

// BaseState returns the job's base state; ok is false when the record
// names none (see NoBaseState).
func (j *JobInfo) BaseState() (s State, ok bool) {
	return j.State.Base(), !j.NoBaseState
}

// NodeAlloc is the part of one node a job was given.
type NodeAlloc struct {
	// Index is the node's place in the job's allocation.
	Index int
	Name  string
	// CPUs is the CPU count given on the node.
	CPUs int
	// Memory is the memory given in MB.
	Memory int64
	// Sockets lists, per socket, which of its cores the job holds.
	Sockets [][]CoreAlloc
}

// CoreAlloc is one core of a NodeAlloc's socket.
type CoreAlloc struct {
	Index     int
	Allocated bool
}

// HasFlag reports whether slurmrestd's flag list holds f.
func (j *JobInfo) HasFlag(f string) bool { return slices.Contains(j.Flags, f) }

// FromV0044JobInfo reads one slurmrestd v0.0.44 job record whole.
func FromV0044JobInfo(w *v0044.V0044JobInfo) JobInfo {
	j := JobInfo{
		Job:            FromV0044Job(w),
		FailedNode:     w.FailedNode.Or(""),
		BatchFeatures:  w.BatchFeatures.Or(""),
		Cron:           w.Cron.Or(""),
		SubmitLine:     w.SubmitLine.Or(""),
		Extra:          w.Extra.Or(""),
		MailUser:       w.MailUser.Or(""),
		SELinuxContext: w.SelinuxContext.Or(""),
		Hold:           w.Hold.Or(false),
		// slurmctld keeps it as a time_t; unset and infinite mean none.
		PreemptableTime: epoch(w.PreemptableTime),
		SizeStr:         w.JobSizeStr,
		TasksPerTres:    u16(w.TasksPerTres),
		CPUFreqMin:      u32(w.CPUFrequencyMinimum),
		CPUFreqMax:      u32(w.CPUFrequencyMaximum),
		CPUFreqGov:      u32(w.CPUFrequencyGovernor),
		MemPerNode:      u64(w.MemoryPerNode),
		MemPerCPU:       u64(w.MemoryPerCPU),
		GresDetail:      w.GresDetail,
		NoBaseState:     !hasBaseState(w.JobState),
		Unfolded: Unfolded{
			SubmitTime:      slurmTime(w.SubmitTime),
			EligibleTime:    slurmTime(w.EligibleTime),
			AccrueTime:      slurmTime(w.AccrueTime),
			StartTime:       slurmTime(w.StartTime),
			EndTime:         slurmTime(w.EndTime),
			Deadline:        slurmTime(w.Deadline),
			ResizeTime:      slurmTime(w.ResizeTime),
			SuspendTime:     slurmTime(w.SuspendTime),
			PreSusTime:      slurmTime(w.PreSusTime),
			LastSchedEval:   slurmTime(w.LastSchedEvaluation),
			PreemptableTime: slurmTime(w.PreemptableTime),
			PreemptTime:     slurmTime(w.PreemptTime),
			NumNodes:        u32(w.NodeCount),
			NumCPUs:         u32(w.Cpus),
			HetJobOffset:    u32(w.HetJobOffset),
		},
	}
	for _, f := range w.Flags {
		j.Flags = append(j.Flags, string(f))
	}
	for _, m := range w.MailType {
		j.MailType = append(j.MailType, string(m))
	}
	res, ok := w.JobResources.Get()
	if !ok {
		return j
	}
	nodes, ok := res.Nodes.Get()
	if !ok {
		return j
	}
	j.AllocNodes = nodes.List.Or("")
	for _, n := range nodes.Allocation {
		a := NodeAlloc{Index: int(n.Index), Name: n.Name}
		if c, ok := n.Cpus.Get(); ok {
			a.CPUs = int(c.Count.Or(0))
		}
		if m, ok := n.Memory.Get(); ok {
			a.Memory = m.Allocated.Or(0)
		}
		for _, s := range n.Sockets {
			cores := make([]CoreAlloc, len(s.Cores))
			for i, c := range s.Cores {
				cores[i] = CoreAlloc{Index: int(c.Index), Allocated: slices.Contains(c.Status, v0044.V0044JobResCoreStatusItemALLOCATED)}
			}
			a.Sockets = append(a.Sockets, cores)
		}
		j.Alloc = append(j.Alloc, a)
	}
	return j
}

// slurmTime reads a timestamp keeping INFINITE, which epoch folds to 0.
func slurmTime(o v0044.OptV0044Uint64NoValStruct) int64 {
	v, ok := o.Get()
	switch {
	case !ok:
		return 0
	case v.Set.Or(false):
		return v.Number.Or(0)
	case v.Infinite.Or(false):
		return int64(Infinite)
	}
	return 0
}

func hasBaseState(items []v0044.V0044JobInfoJobStateItem) bool {
	for _, it := range items {
		if slices.Contains(baseNames[:], string(it)) {
			return true
		}
	}
	return false
}

// FromV0044JobInfos reads a REST job list whole, in its order.
func FromV0044JobInfos(ws []v0044.V0044JobInfo) []JobInfo {
	out := make([]JobInfo, len(ws))
	for i := range ws {
		out[i] = FromV0044JobInfo(&ws[i])
	}
	return out
}
