package readmodel

import v0044 "github.com/droverhq/drover/openapi/v0044"

// AcctJob is one run of a job as the accounting database records it
// (GET /slurmdb/job and /slurmdb/jobs): what seff and sacct read. Counts
// keep slurmrestd's widths; NoVal and Infinite stand for unset and
// infinite numbers. A record without a member reads as the zero value
// of its fields.
type AcctJob struct {
	JobID uint32
	// ArrayJobID is array.job_id (0 outside an array); ArrayTaskID is
	// array.task_id, NoVal when the run is no task of one. ArrayTasks is
	// array.task: the tasks an array's meta record still stands for
	// ("4-9%2").
	ArrayJobID  int32
	ArrayTaskID uint32
	ArrayTasks  string
	// HetJobID is het.job_id, the leader's id (0 outside a heterogeneous
	// job); HetJobOffset is the component's offset, read as given
	// whether or not it is marked set (slurmrestd writes 0 for unset).
	HetJobID     int32
	HetJobOffset uint32
	RestartCnt   int32

	Cluster, User, Group          string
	Name, Partition, Account, QOS string
	// State is state.current's first name as slurmrestd spells it
	// ("COMPLETED"), "" when there is none; StateReason is state.reason
	// ("None").
	State, StateReason string
	// KillRequestUser names who cancelled the run, "" when nobody did.
	KillRequestUser string
	ExitCode        ExitCode
	DerivedExitCode ExitCode

	AllocNodes int32
	// Nodes is the nodes the run was given ("None assigned" before).
	Nodes string
	// AllocTRES and ReqTRES are tres.allocated and tres.requested.
	AllocTRES, ReqTRES []TRES
	// ReqCPUs is required.CPUs.
	ReqCPUs int32
	// ReqMemPerNode and ReqMemPerCPU are the memory asked for in MB:
	// NoVal64 when unset, Infinite64.
	ReqMemPerNode, ReqMemPerCPU uint64

	// SubmitTime, EligibleTime, StartTime and EndTime are seconds since
	// the epoch, 0 for a time that has not come.
	SubmitTime, EligibleTime, StartTime, EndTime int64
	// Elapsed is the wall-clock time in seconds, Suspended the time
	// spent suspended.
	Elapsed, Suspended int32
	// TimeLimit is time.limit in minutes: NoVal when unset (the
	// partition's limit holds), Infinite. HasTimeLimit is false when
	// the record carries no limit at all.
	TimeLimit    uint32
	HasTimeLimit bool
	// Priority is priority's number as given, whether or not it is marked
	// set: slurmdbd records the last priority the job had, and
	// slurmrestd writes 0 for an unset one. HasPriority is false when the
	// record carries none.
	Priority    uint32
	HasPriority bool
	// The CPU time the run's steps used, in seconds and microseconds:
	// in user space, in the kernel, and both together.
	UserCPUSecs, UserCPUMicrosec   int64
	SysCPUSecs, SysCPUMicrosec     int64
	TotalCPUSecs, TotalCPUMicrosec int64

	// Flags are slurmdbd's job flags as it spells them
	// ("STARTED_ON_SCHEDULE").
	Flags []string
	// Comment is comment.job.
	Comment                             string
	Constraints, Container, Extra       string
	FailedNode, Licenses, QOSReq, WCKey string
	SubmitLine, WorkDir                 string
	Reservation                         string
	ReservationID, AssocID              int32
	// StdOut, StdErr and StdIn are the paths with their patterns
	// expanded, or as given where the record has no expanded path.
	StdOut, StdErr, StdIn string

	Steps []AcctStep
}

// AcctStep is one step of an AcctJob.
type AcctStep struct {
	// ID is step.id, the job's id and the step's ("125.batch", "131.0").
	ID, Name string
	// State is the first of the step's state names ("COMPLETED").
	State    string
	ExitCode ExitCode
	// Nodes is nodes.range ("n[1-2]"), NodeCount its count; Tasks is
	// tasks.count.
	Nodes            string
	NodeCount, Tasks int32
	// Distribution is task.distribution ("Block", "Unknown").
	Distribution string
	// StartTime and EndTime are time.start and time.end in seconds
	// since the epoch, read as given whether or not they are marked set:
	// slurmdbd keeps 0 for a step that has not started or ended.
	StartTime, EndTime int64
	// Elapsed and Suspended are in seconds; the CPU times in seconds and
	// microseconds.
	Elapsed, Suspended           int32
	UserCPUSecs, UserCPUMicrosec int64
	SysCPUSecs, SysCPUMicrosec   int64

	// AllocTRES is tres.allocated.
	AllocTRES []TRES
	// MaxTRES, MinTRES, AveTRES and TotTRES are tres.requested's max,
	// min, average and total: each TRES's use by the step's tasks
	// (sacct's TRESUsageIn; "mem" is the resident set, in bytes). MaxTRES
	// is the largest use by one task.
	MaxTRES, MinTRES, AveTRES, TotTRES []TRES
	// OutMaxTRES... are tres.consumed's: what the tasks wrote
	// (TRESUsageOut).
	OutMaxTRES, OutMinTRES, OutAveTRES, OutTotTRES []TRES
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
	het := w.Het.Or(v0044.V0044JobHet{})
	t := w.Time.Or(v0044.V0044JobTime{})
	user := t.User.Or(v0044.V0044JobTimeUser{})
	sys := t.System.Or(v0044.V0044JobTimeSystem{})
	total := t.Total.Or(v0044.V0044JobTimeTotal{})
	req := w.Required.Or(v0044.V0044JobRequired{})
	tres := w.Tres.Or(v0044.V0044JobTres{})
	st := w.State.Or(v0044.V0044JobState{})
	res := w.Reservation.Or(v0044.V0044JobReservation{})
	j := AcctJob{
		JobID:        uint32(w.JobID.Or(0)),
		ArrayJobID:   arr.JobID.Or(0),
		ArrayTaskID:  u32(arr.TaskID),
		ArrayTasks:   arr.Task.Or(""),
		HetJobID:     het.JobID.Or(0),
		HetJobOffset: number32(het.JobOffset),
		RestartCnt:   w.RestartCnt.Or(0),

		Cluster:         w.Cluster.Or(""),
		User:            w.User.Or(""),
		Group:           w.Group.Or(""),
		Name:            w.Name.Or(""),
		Partition:       w.Partition.Or(""),
		Account:         w.Account.Or(""),
		QOS:             w.Qos.Or(""),
		StateReason:     st.Reason.Or(""),
		KillRequestUser: w.KillRequestUser.Or(""),
		ExitCode:        exitCode(w.ExitCode),
		DerivedExitCode: exitCode(w.DerivedExitCode),

		AllocNodes:    w.AllocationNodes.Or(0),
		Nodes:         w.Nodes.Or(""),
		AllocTRES:     tresList(tres.Allocated),
		ReqTRES:       tresList(tres.Requested),
		ReqCPUs:       req.CPUs.Or(0),
		ReqMemPerNode: u64(req.MemoryPerNode),
		ReqMemPerCPU:  u64(req.MemoryPerCPU),

		SubmitTime:       t.Submission.Or(0),
		EligibleTime:     t.Eligible.Or(0),
		StartTime:        t.Start.Or(0),
		EndTime:          t.End.Or(0),
		Elapsed:          t.Elapsed.Or(0),
		Suspended:        t.Suspended.Or(0),
		UserCPUSecs:      user.Seconds.Or(0),
		UserCPUMicrosec:  user.Microseconds.Or(0),
		SysCPUSecs:       sys.Seconds.Or(0),
		SysCPUMicrosec:   sys.Microseconds.Or(0),
		TotalCPUSecs:     total.Seconds.Or(0),
		TotalCPUMicrosec: total.Microseconds.Or(0),

		Comment:       w.Comment.Or(v0044.V0044JobComment{}).Job.Or(""),
		Constraints:   w.Constraints.Or(""),
		Container:     w.Container.Or(""),
		Extra:         w.Extra.Or(""),
		FailedNode:    w.FailedNode.Or(""),
		Licenses:      w.Licenses.Or(""),
		QOSReq:        w.Qosreq.Or(""),
		WCKey:         w.Wckey.Or(v0044.V0044WckeyTagStruct{}).Wckey,
		SubmitLine:    w.SubmitLine.Or(""),
		WorkDir:       w.WorkingDirectory.Or(""),
		Reservation:   res.Name.Or(""),
		ReservationID: res.ID.Or(0),
		AssocID:       w.Association.Or(v0044.V0044AssocShort{}).ID.Or(0),
		StdOut:        w.StdoutExpanded.Or(w.Stdout.Or("")),
		StdErr:        w.StderrExpanded.Or(w.Stderr.Or("")),
		StdIn:         w.StdinExpanded.Or(w.Stdin.Or("")),
	}
	if len(st.Current) > 0 {
		j.State = string(st.Current[0])
	}
	if t.Limit.IsSet() {
		j.TimeLimit, j.HasTimeLimit = u32(t.Limit), true
	}
	if w.Priority.IsSet() {
		j.Priority, j.HasPriority = number32(w.Priority), true
	}
	if len(w.Flags) > 0 {
		j.Flags = make([]string, len(w.Flags))
		for i, f := range w.Flags {
			j.Flags[i] = string(f)
		}
	}
	if len(w.Steps) > 0 {
		j.Steps = make([]AcctStep, len(w.Steps))
		for i := range w.Steps {
			j.Steps[i] = fromV0044AcctStep(&w.Steps[i])
		}
	}
	return j
}

func fromV0044AcctStep(w *v0044.V0044Step) AcctStep {
	id := w.Step.Or(v0044.V0044StepStep{})
	nodes := w.Nodes.Or(v0044.V0044StepNodes{})
	t := w.Time.Or(v0044.V0044StepTime{})
	user := t.User.Or(v0044.V0044StepTimeUser{})
	sys := t.System.Or(v0044.V0044StepTimeSystem{})
	tres := w.Tres.Or(v0044.V0044StepTres{})
	in := tres.Requested.Or(v0044.V0044StepTresRequested{})
	out := tres.Consumed.Or(v0044.V0044StepTresConsumed{})
	s := AcctStep{
		ID:              id.ID.Or(""),
		Name:            id.Name.Or(""),
		ExitCode:        exitCode(w.ExitCode),
		Nodes:           nodes.Range.Or(""),
		NodeCount:       nodes.Count.Or(0),
		Tasks:           w.Tasks.Or(v0044.V0044StepTasks{}).Count.Or(0),
		Distribution:    w.Task.Or(v0044.V0044StepTask{}).Distribution.Or(""),
		StartTime:       number64(t.Start),
		EndTime:         number64(t.End),
		Elapsed:         t.Elapsed.Or(0),
		Suspended:       t.Suspended.Or(0),
		UserCPUSecs:     user.Seconds.Or(0),
		UserCPUMicrosec: int64(user.Microseconds.Or(0)),
		SysCPUSecs:      sys.Seconds.Or(0),
		SysCPUMicrosec:  int64(sys.Microseconds.Or(0)),
		AllocTRES:       tresList(tres.Allocated),
		MaxTRES:         tresList(in.Max),
		MinTRES:         tresList(in.Min),
		AveTRES:         tresList(in.Average),
		TotTRES:         tresList(in.Total),
		OutMaxTRES:      tresList(out.Max),
		OutMinTRES:      tresList(out.Min),
		OutAveTRES:      tresList(out.Average),
		OutTotTRES:      tresList(out.Total),
	}
	if len(w.State) > 0 {
		s.State = string(w.State[0])
	}
	return s
}

// number32 and number64 read a number struct's number whether or not it
// is marked set or infinite, for the fields slurmdbd keeps as plain
// numbers (0 when none).
func number32(o v0044.OptV0044Uint32NoValStruct) uint32 {
	return uint32(o.Or(v0044.V0044Uint32NoValStruct{}).Number.Or(0))
}

func number64(o v0044.OptV0044Uint64NoValStruct) int64 {
	return o.Or(v0044.V0044Uint64NoValStruct{}).Number.Or(0)
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
