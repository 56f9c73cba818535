package readmodel

import v0044 "github.com/droverhq/drover/openapi/v0044"

// AcctJob is one run of a job as the accounting database records it
// (GET /slurmdb/job): what seff reads, and the start of what sacct will.
// Counts keep slurmrestd's widths; NoVal and Infinite stand for unset and
// infinite numbers.
type AcctJob struct {
	JobID uint32
	// ArrayJobID is array.job_id (0 outside an array); ArrayTaskID is
	// array.task_id, NoVal when the run is no task of one.
	ArrayJobID  int32
	ArrayTaskID uint32
	RestartCnt  int32

	Cluster, User, Group string
	// State is state.current's first name as slurmrestd spells it
	// ("COMPLETED"), "" when there is none.
	State    string
	ExitCode ExitCode

	AllocNodes int32
	// AllocTRES is tres.allocated.
	AllocTRES []TRES
	// Elapsed is the wall-clock time in seconds; TotalCPU the CPU time
	// its steps used, in seconds and microseconds.
	Elapsed                        int32
	TotalCPUSecs, TotalCPUMicrosec int64
	// ReqMemPerNode and ReqMemPerCPU are the memory asked for in MB:
	// NoVal64 when unset, Infinite64.
	ReqMemPerNode, ReqMemPerCPU uint64

	Steps []AcctStep
}

// AcctStep is one step of an AcctJob.
type AcctStep struct {
	// MaxTRES is tres.requested.max: the largest use of each TRES by one
	// task ("mem" is the largest resident set, in bytes).
	MaxTRES []TRES
}

// TRES is one counted trackable resource of a TRES list.
type TRES struct {
	Type, Name string
	ID         int32
	Count      int64
}

// Count returns the count of the first TRES of type typ, 0 when the list
// holds none.
func Count(list []TRES, typ string) int64 {
	for _, t := range list {
		if t.Type == typ {
			return t.Count
		}
	}
	return 0
}

// FromV0044AcctJob reads one slurmrestd v0.0.44 accounting job record.
func FromV0044AcctJob(w *v0044.V0044Job) AcctJob {
	arr := w.Array.Or(v0044.V0044JobArray{})
	t := w.Time.Or(v0044.V0044JobTime{})
	total := t.Total.Or(v0044.V0044JobTimeTotal{})
	req := w.Required.Or(v0044.V0044JobRequired{})
	j := AcctJob{
		JobID:       uint32(w.JobID.Or(0)),
		ArrayJobID:  arr.JobID.Or(0),
		ArrayTaskID: u32(arr.TaskID),
		RestartCnt:  w.RestartCnt.Or(0),

		Cluster:  w.Cluster.Or(""),
		User:     w.User.Or(""),
		Group:    w.Group.Or(""),
		ExitCode: exitCode(w.ExitCode),

		AllocNodes:       w.AllocationNodes.Or(0),
		AllocTRES:        tresList(w.Tres.Or(v0044.V0044JobTres{}).Allocated),
		Elapsed:          t.Elapsed.Or(0),
		TotalCPUSecs:     total.Seconds.Or(0),
		TotalCPUMicrosec: total.Microseconds.Or(0),
		ReqMemPerNode:    u64(req.MemoryPerNode),
		ReqMemPerCPU:     u64(req.MemoryPerCPU),
	}
	if cur := w.State.Or(v0044.V0044JobState{}).Current; len(cur) > 0 {
		j.State = string(cur[0])
	}
	for _, s := range w.Steps {
		in := s.Tres.Or(v0044.V0044StepTres{}).Requested.Or(v0044.V0044StepTresRequested{})
		j.Steps = append(j.Steps, AcctStep{MaxTRES: tresList(in.Max)})
	}
	return j
}

func tresList(ws []v0044.V0044Tres) []TRES {
	if len(ws) == 0 {
		return nil
	}
	out := make([]TRES, len(ws))
	for i, t := range ws {
		out[i] = TRES{Type: t.Type, Name: t.Name.Or(""), ID: t.ID.Or(0), Count: t.Count.Or(0)}
	}
	return out
}
