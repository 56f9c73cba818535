package v0044

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/go-faster/jx"

	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	api "github.com/droverhq/drover/openapi/v0044"
)

// jobTemplate is a job answer with every member present and empty; each
// answer starts from a copy of it (see fillUnset). A pending job has no
// job_resources (slurmrestd sends null there), so that one stays unset.
// Templates are built on first use, not at start-up: the drop-in commands
// share the binary and never need them.
var jobTemplate = sync.OnceValue(func() api.V0044JobInfo {
	w := filled[api.V0044JobInfo]()
	w.JobResources.Reset()
	return w
})

// jobMember renders one top-level member of a job record. Each setter
// writes its own member only, so that a record can be built member by
// member when a client selects some (fieldsel).
type jobMember struct {
	name string
	set  func(s *Server, j *job.Job, w *api.V0044JobInfo)
}

// jobMembers are the members Drover knows values for, in the order of the
// record; the others keep the template's empty value.
var jobMembers = []jobMember{
	{"account", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Account = api.NewOptString(j.Req.Account) }},
	{"accrue_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.AccrueTime = eligibleTime(j) }},
	{"admin_comment", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.AdminComment = api.NewOptString("") }},
	{"allocating_node", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.AllocatingNode = api.NewOptString(j.Req.SubmitHost)
	}},
	{"array_job_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.ArrayJobID = api.NewOptV0044Uint32NoValStruct(u32(uint32(j.ArrayJobID)))
	}},
	{"array_max_tasks", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.ArrayMaxTasks = api.NewOptV0044Uint32NoValStruct(u32(j.Req.Array.MaxRunning))
	}},
	{"array_task_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.IsArray() && !j.IsArrayMeta() {
			w.ArrayTaskID = api.NewOptV0044Uint32NoValStruct(u32(j.ArrayTaskID))
		} else {
			w.ArrayTaskID = api.NewOptV0044Uint32NoValStruct(u32Unset())
		}
	}},
	{"array_task_string", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.IsArrayMeta() {
			w.ArrayTaskString = api.NewOptString(arrayspec.Format(j.PendingTasks, j.Req.Array.MaxRunning))
		} else {
			w.ArrayTaskString = api.NewOptString("")
		}
	}},
	{"batch_flag", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.BatchFlag = api.NewOptBool(true) }},
	{"batch_host", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.BatchHost = api.NewOptString(j.BatchHost) }},
	{"cluster", func(s *Server, _ *job.Job, w *api.V0044JobInfo) { w.Cluster = api.NewOptString(s.ctl.ClusterName()) }},
	{"command", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Command = api.NewOptString(commandOf(&j.Req)) }},
	{"comment", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Comment = api.NewOptString(j.Req.Comment) }},
	{"contiguous", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.Contiguous = api.NewOptBool(false) }},
	{"core_spec", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.CoreSpec = api.NewOptInt32(0) }},
	{"cpus", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.Cpus = api.NewOptV0044Uint32NoValStruct(u32(j.CPUCount()))
	}},
	{"cpus_per_task", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.CpusPerTask = api.NewOptV0044Uint16NoValStruct(u16(max(j.Req.CPUsPerTask, 1)))
	}},
	{"current_working_directory", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.CurrentWorkingDirectory = api.NewOptString(j.Req.WorkDir)
	}},
	{"dependency", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Dependency = api.NewOptString(j.Req.Dependency) }},
	{"derived_exit_code", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.DerivedExitCode = api.NewOptV0044ProcessExitCodeVerbose(exitCode(j))
	}},
	{"eligible_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.EligibleTime = eligibleTime(j) }},
	{"end_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.EndTime = api.NewOptV0044Uint64NoValStruct(u64(unix(j.EndTime)))
	}},
	{"excluded_nodes", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.ExcludedNodes = api.NewOptString(hostlist.Compress(j.Req.Exclude))
	}},
	{"exit_code", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.ExitCode = api.NewOptV0044ProcessExitCodeVerbose(exitCode(j))
	}},
	{"flags", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Flags = jobFlags(j) }},
	{"gres_detail", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.GresDetail = api.V0044JobInfoGresDetail{} }},
	{"group_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.GroupID = api.NewOptInt32(int32(j.Req.GroupID)) }},
	{"group_name", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.GroupName = api.NewOptString(j.Req.GroupName) }},
	{"het_job_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.HetJobID = api.NewOptV0044Uint32NoValStruct(u32(uint32(j.HetJobID)))
	}},
	{"het_job_id_set", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.HetJobIDSet = api.NewOptString(j.HetJobIDSet()) }},
	{"het_job_offset", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.HetJobOffset = api.NewOptV0044Uint32NoValStruct(u32(j.HetJobOffset))
	}},
	{"hold", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Hold = api.NewOptBool(j.Hold != job.NotHeld) }},
	{"job_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.JobID = api.NewOptInt32(int32(j.ID)) }},
	{"job_resources", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Alloc != nil {
			w.JobResources = api.NewOptV0044JobRes(jobResources(j))
		}
	}},
	{"job_size_str", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.JobSizeStr = api.V0044CsvString{} }},
	{"job_state", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.JobState = jobStateItems(j) }},
	{"last_sched_evaluation", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) {
		w.LastSchedEvaluation = api.NewOptV0044Uint64NoValStruct(u64(0))
	}},
	{"mail_type", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.MailType = []api.V0044JobInfoMailTypeItem{} }},
	{"mail_user", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.MailUser = api.NewOptString(j.Req.UserName) }},
	{"max_nodes", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		maxNodes := j.Req.MaxNodes
		if j.State == job.Pending && maxNodes == 0 {
			maxNodes = max(j.NodeCount(), j.NodeGuess)
		}
		w.MaxNodes = api.NewOptV0044Uint32NoValStruct(u32(maxNodes))
	}},
	{"maximum_switch_wait_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.MaximumSwitchWaitTime = api.NewOptInt32(int32(j.Req.SwitchWait / time.Second))
	}},
	// slurmctld keeps one pn_min_memory with a per-CPU flag; the API
	// shows it in one of two members and the other unset.
	{"memory_per_cpu", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Req.MemPerCPU > 0 {
			w.MemoryPerCPU = api.NewOptV0044Uint64NoValStruct(u64(int64(j.Req.MemPerCPU)))
		} else {
			w.MemoryPerCPU = api.NewOptV0044Uint64NoValStruct(u64Unset())
		}
	}},
	{"memory_per_node", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Req.MemPerCPU > 0 {
			w.MemoryPerNode = api.NewOptV0044Uint64NoValStruct(u64Unset())
		} else {
			w.MemoryPerNode = api.NewOptV0044Uint64NoValStruct(u64(int64(memPerNode(j))))
		}
	}},
	{"minimum_cpus_per_node", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.MinimumCpusPerNode = api.NewOptV0044Uint16NoValStruct(u16(max(j.Req.CPUsPerTask, 1)))
	}},
	{"name", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Name = api.NewOptString(j.Req.Name) }},
	{"nice", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Nice = api.NewOptInt32(j.Req.Nice) }},
	{"node_count", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		n := j.NodeCount()
		if j.Alloc == nil && j.NodeGuess > 0 {
			n = j.NodeGuess
		}
		w.NodeCount = api.NewOptV0044Uint32NoValStruct(u32(n))
	}},
	{"nodes", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Alloc != nil {
			w.Nodes = api.NewOptString(hostlist.Compress(j.Alloc.NodeNames()))
		} else {
			w.Nodes = api.NewOptString("")
		}
	}},
	{"partition", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Partition = api.NewOptString(j.Req.Partition) }},
	{"priority", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.Priority = api.NewOptV0044Uint32NoValStruct(u32(j.Priority))
	}},
	{"priority_by_partition", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) {
		w.PriorityByPartition = api.V0044PriorityByPartition{}
	}},
	{"profile", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) {
		w.Profile = []api.V0044JobInfoProfileItem{api.V0044JobInfoProfileItemNOTSET}
	}},
	{"qos", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Qos = api.NewOptString(j.Req.QOS) }},
	{"requeue", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.Requeue = api.NewOptBool(j.Req.Requeue) }},
	{"required_nodes", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.RequiredNodes = api.NewOptString(hostlist.Compress(j.Req.NodeList))
	}},
	{"required_switches", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.RequiredSwitches = api.NewOptInt32(int32(j.Req.MaxSwitches))
	}},
	{"restart_cnt", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.RestartCnt = api.NewOptInt32(int32(j.RestartCount))
	}},
	{"resv_name", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.ResvName = api.NewOptString(j.Req.Reservation) }},
	{"scheduled_nodes", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.ScheduledNodes = api.NewOptString(hostlist.Compress(j.SchedNodes))
	}},
	// --exclusive and the default (shared when it fits) both show an
	// empty list, as slurmctld's job_share_string does for them.
	{"shared", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.Shared = []api.V0044JobInfoSharedItem{} }},
	{"standard_error", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.StandardError = api.NewOptString(j.Req.StdErr) }},
	{"standard_input", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.StandardInput = api.NewOptString(stdinOf(&j.Req)) }},
	{"standard_output", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.StandardOutput = api.NewOptString(stdoutOf(j)) }},
	{"start_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.StartTime = api.NewOptV0044Uint64NoValStruct(u64(unix(startTimeOf(j))))
	}},
	{"state_description", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.StateDescription = api.NewOptString("") }},
	{"state_reason", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.StateReason = api.NewOptString(string(j.Reason)) }},
	// Without -e, stderr goes to the stdout file, and slurmctld reports
	// standard_error and stderr_expanded empty.
	{"stderr_expanded", func(s *Server, j *job.Job, w *api.V0044JobInfo) {
		w.StderrExpanded = api.NewOptString(s.expand(j, j.Req.StdErr))
	}},
	{"stdin_expanded", func(s *Server, j *job.Job, w *api.V0044JobInfo) {
		w.StdinExpanded = api.NewOptString(s.expand(j, stdinOf(&j.Req)))
	}},
	{"stdout_expanded", func(s *Server, j *job.Job, w *api.V0044JobInfo) {
		w.StdoutExpanded = api.NewOptString(s.expand(j, stdoutOf(j)))
	}},
	{"submit_time", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.SubmitTime = api.NewOptV0044Uint64NoValStruct(u64(unix(j.SubmitTime)))
	}},
	{"suspend_time", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) {
		w.SuspendTime = api.NewOptV0044Uint64NoValStruct(u64(0))
	}},
	{"tasks", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.Tasks = api.NewOptV0044Uint32NoValStruct(u32(j.TaskCount()))
	}},
	{"tasks_per_board", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) {
		w.TasksPerBoard = api.NewOptV0044Uint16NoValStruct(u16(0))
	}},
	{"tasks_per_node", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.TasksPerNode = api.NewOptV0044Uint16NoValStruct(u16(j.Req.TasksPerNode))
	}},
	{"thread_spec", func(_ *Server, _ *job.Job, w *api.V0044JobInfo) { w.ThreadSpec = api.NewOptInt32(32766) }},
	{"time_limit", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Req.TimeLimit == job.Infinite {
			w.TimeLimit = api.NewOptV0044Uint32NoValStruct(u32Inf())
		} else {
			w.TimeLimit = api.NewOptV0044Uint32NoValStruct(u32(j.Req.TimeLimit))
		}
	}},
	{"time_minimum", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.TimeMinimum = api.NewOptV0044Uint32NoValStruct(u32(j.Req.TimeMin))
	}},
	{"tres_alloc_str", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		if j.Alloc == nil {
			w.TresAllocStr = api.NewOptString("")
			return
		}
		w.TresAllocStr = api.NewOptString(j.AllocTRES().String())
	}},
	{"tres_per_job", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.TresPerJob = api.NewOptString(tresPerJob(&j.Req)) }},
	{"tres_per_node", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.TresPerNode = api.NewOptString(tresPerNode(&j.Req))
	}},
	{"tres_req_str", func(_ *Server, j *job.Job, w *api.V0044JobInfo) {
		w.TresReqStr = api.NewOptString(j.ReqTRES().String())
	}},
	{"user_id", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.UserID = api.NewOptInt32(int32(j.Req.UserID)) }},
	{"user_name", func(_ *Server, j *job.Job, w *api.V0044JobInfo) { w.UserName = api.NewOptString(j.Req.UserName) }},
}

// eligibleTime is when the job became eligible; a held job has never
// been, and slurmctld reports 0 for it (eligible_time and accrue_time).
func eligibleTime(j *job.Job) api.OptV0044Uint64NoValStruct {
	if j.Hold != job.NotHeld {
		return api.NewOptV0044Uint64NoValStruct(u64(0))
	}
	return api.NewOptV0044Uint64NoValStruct(u64(unix(j.EligibleTime)))
}

// jobToWire renders a job record as slurmrestd shows it.
func (s *Server) jobToWire(j *job.Job) api.V0044JobInfo {
	var w api.V0044JobInfo
	s.fillJob(j, &w)
	return w
}

// fillJob overwrites *w with j's whole record.
func (s *Server) fillJob(j *job.Job, w *api.V0044JobInfo) {
	*w = jobTemplate()
	for i := range jobMembers {
		jobMembers[i].set(s, j, w)
	}
}

// jobWriter renders job records with every member, or with the members a
// client selected (fieldsel) and nothing else.
type jobWriter struct {
	s *Server
	// setters of the selected members Drover has values for, and the
	// struct fields of the selected members it leaves empty (copied from
	// the template); nil setters and fields mean a whole record.
	setters []func(s *Server, j *job.Job, w *api.V0044JobInfo)
	empty   []int
	tmpl    reflect.Value
	sparse  bool
}

func (s *Server) jobWriter(sel fieldsel.Set) jobWriter {
	if sel == nil {
		return jobWriter{s: s}
	}
	tmpl := jobTemplate()
	jw := jobWriter{s: s, sparse: true, tmpl: reflect.ValueOf(&tmpl).Elem()}
	known := map[string]bool{}
	for _, m := range jobMembers {
		known[m.name] = true
		if sel.Has(m.name) {
			jw.setters = append(jw.setters, m.set)
		}
	}
	for name := range sel {
		if i, ok := jobFieldIndex()[name]; ok && !known[name] {
			jw.empty = append(jw.empty, i)
		}
	}
	return jw
}

func (jw jobWriter) write(j *job.Job) api.V0044JobInfo {
	var w api.V0044JobInfo
	jw.fill(j, &w)
	return w
}

// fill overwrites *w with j's record, so that one record can be reused
// for a whole listing.
func (jw jobWriter) fill(j *job.Job, w *api.V0044JobInfo) {
	if !jw.sparse {
		jw.s.fillJob(j, w)
		return
	}
	*w = api.V0044JobInfo{}
	for _, set := range jw.setters {
		set(jw.s, j, w)
	}
	if len(jw.empty) > 0 {
		dst := reflect.ValueOf(w).Elem()
		for _, i := range jw.empty {
			dst.Field(i).Set(jw.tmpl.Field(i))
		}
	}
}

// jobFieldIndex maps each member name of a job record to its field of
// api.V0044JobInfo, found by encoding each field of the template alone:
// the generated encoder is the one place that knows the names. It is
// built on first use: the drop-in commands share the binary and never
// need it.
var jobFieldIndex = sync.OnceValue(func() map[string]int {
	tmpl := jobTemplate()
	t := reflect.TypeOf(tmpl)
	src := reflect.ValueOf(&tmpl).Elem()
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		var w api.V0044JobInfo
		f := reflect.ValueOf(&w).Elem().Field(i)
		if !f.CanSet() {
			continue
		}
		f.Set(src.Field(i))
		names := topLevelNames(&w)
		switch len(names) {
		case 0:
			// job_resources: unset (null) in the template.
			continue
		case 1:
			out[names[0]] = i
		default:
			panic(fmt.Sprintf("v0044: field %s of V0044JobInfo encodes as %d members", t.Field(i).Name, len(names)))
		}
	}
	return out
})

// topLevelNames lists the members w encodes as.
func topLevelNames(w *api.V0044JobInfo) []string {
	var e jx.Encoder
	w.Encode(&e)
	var names []string
	err := jx.DecodeBytes(e.Bytes()).ObjBytes(func(d *jx.Decoder, key []byte) error {
		names = append(names, string(key))
		return d.Skip()
	})
	if err != nil {
		panic(fmt.Sprintf("v0044: decode an encoded job record: %v", err))
	}
	return names
}

// jobFlags are the scheduling flags slurmctld reports: a job the backfill
// pass started or planned carries BACKFILL_ATTEMPTED (scontrol's
// Scheduler=Backfill), a pending one it planned SCHEDULING_ATTEMPTED too.
func jobFlags(j *job.Job) []api.V0044JobInfoFlagsItem {
	switch {
	case j.State == job.Pending && !j.PlannedStart.IsZero():
		return []api.V0044JobInfoFlagsItem{api.V0044JobInfoFlagsItemBACKFILLATTEMPTED, api.V0044JobInfoFlagsItemSCHEDULINGATTEMPTED}
	case j.Backfilled:
		return []api.V0044JobInfoFlagsItem{api.V0044JobInfoFlagsItemBACKFILLATTEMPTED}
	}
	return []api.V0044JobInfoFlagsItem{}
}
