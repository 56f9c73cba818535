package scontrol

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/droverhq/drover/internal/hostlist"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// jobView carries what the job layout needs besides the job itself.
type jobView struct {
	oneLiner bool
	detail   bool
	// now is the clock RunTime and EndTime=Unknown are computed against.
	now time.Time
	// timeStr prints an epoch as slurm_make_time_str does.
	timeStr func(int64) string
	// arrayTask, when set, replaces the array task range of a pending
	// array record, as `scontrol show job 131_4` prints task 4 of the
	// meta-record.
	arrayTask *uint32
	// threadsPerCore returns a node's threads per core for the CPU_IDs of
	// the -d layout (1 when unknown).
	threadsPerCore func(node string) int
	// trackWCKey adds WCKey= as slurm.conf's TrackWCKey=yes does.
	trackWCKey bool
}

// lineWriter assembles a record the way scontrol does: fields joined by
// spaces, lines ended by "\n   " (or " " in one-liner mode).
type lineWriter struct {
	b       strings.Builder
	lineEnd string
}

func (w *lineWriter) printf(format string, args ...any) { fmt.Fprintf(&w.b, format, args...) }
func (w *lineWriter) end()                              { w.b.WriteString(w.lineEnd) }

// finish trims trailing blanks and ends the record as _sprint_job_info does:
// one newline in one-liner mode, a blank line otherwise.
func (w *lineWriter) finish(oneLiner bool) string {
	s := strings.TrimRightFunc(w.b.String(), unicode.IsSpace)
	if oneLiner {
		return s + "\n"
	}
	return s + "\n\n"
}

func newLineWriter(oneLiner bool) *lineWriter {
	if oneLiner {
		return &lineWriter{lineEnd: " "}
	}
	return &lineWriter{lineEnd: "\n   "}
}

// Job base states and the flags that job_state_string prints instead of
// the base state, in its order of precedence.
var jobStateFlagOrder = []string{
	"COMPLETING", "STAGE_OUT", "CONFIGURING", "EXPEDITING", "RESIZING",
	"REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED",
	"REVOKED", "RESV_DEL_HOLD", "SIGNALING",
}

var jobBaseStates = []string{
	"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
	"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
	"OUT_OF_MEMORY",
}

// jobStates splits slurmrestd's job_state list into the base state and the
// set of flags.
func jobStates(j *v0044.V0044JobInfo) (base string, flags map[string]bool) {
	flags = map[string]bool{}
	for _, s := range j.JobState {
		if slices.Contains(jobBaseStates, string(s)) {
			if base == "" {
				base = string(s)
			}
			continue
		}
		flags[string(s)] = true
	}
	return base, flags
}

// jobStateString is Slurm's job_state_string: a state flag such as
// COMPLETING wins over the base state.
func jobStateString(j *v0044.V0044JobInfo) string {
	base, flags := jobStates(j)
	for _, f := range jobStateFlagOrder {
		if flags[f] {
			return f
		}
	}
	if base == "" {
		return "?"
	}
	return base
}

func hasJobFlag(j *v0044.V0044JobInfo, f v0044.V0044JobInfoFlagsItem) bool {
	return slices.Contains(j.Flags, f)
}

// exitCode returns the "status:signal" pair scontrol prints for a
// slurmrestd exit code object.
func exitCode(o v0044.OptV0044ProcessExitCodeVerbose) string {
	v, ok := o.Get()
	if !ok {
		return "0:0"
	}
	signaled := false
	for _, s := range v.Status {
		if s == "SIGNALED" || s == "CORE_DUMPED" {
			signaled = true
		}
	}
	if signaled {
		sig := uint64(0)
		if s, ok := v.Signal.Get(); ok {
			if n := u16(s.ID); n != noVal16 && n != infinite16 {
				sig = n
			}
		}
		return fmt.Sprintf("0:%d", sig)
	}
	rc := u32(v.ReturnCode)
	if rc == noVal || rc == infinite {
		rc = 0
	}
	return fmt.Sprintf("%d:0", rc&0xff)
}

// sprintRange prints a count with its optional upper bound as scontrol's
// _sprint_range does: "1" or "1-4" (an upper bound of 0 means none).
func sprintRange(lower, upper uint64) string {
	if upper > 0 {
		return fmt.Sprintf("%d-%d", lower, upper)
	}
	return strconv.FormatUint(lower, 10)
}

// star prints a 16-bit count, or "*" when it is unset or infinite.
func star(v uint64) string {
	if v == noVal16 || v == infinite16 {
		return "*"
	}
	return strconv.FormatUint(v, 10)
}

// shareString is Slurm's job_share_string for slurmrestd's shared list.
func shareString(shared []v0044.V0044JobInfoSharedItem) string {
	if len(shared) == 0 {
		return "OK"
	}
	switch shared[0] {
	case "none":
		return "NO"
	case "oversubscribe":
		return "YES"
	case "user":
		return "USER"
	case "mcs":
		return "MCS"
	case "topo":
		return "TOPO"
	}
	return "OK"
}

// mailTypeString is Slurm's print_mail_type for slurmrestd's names.
func mailTypeString(types []v0044.V0044JobInfoMailTypeItem) string {
	if len(types) == 0 {
		return "NONE"
	}
	has := map[string]bool{}
	for _, t := range types {
		has[string(t)] = true
	}
	var out []string
	for _, m := range []struct{ rest, name string }{
		{"ARRAY_TASKS", "ARRAY_TASKS"}, {"INVALID_DEPENDENCY", "INVALID_DEPEND"},
		{"BEGIN", "BEGIN"}, {"END", "END"}, {"FAIL", "FAIL"},
		{"REQUEUE", "REQUEUE"}, {"STAGE_OUT", "STAGE_OUT"},
		{"TIME=50%", "TIME_LIMIT_50"}, {"TIME=80%", "TIME_LIMIT_80"},
		{"TIME=90%", "TIME_LIMIT_90"}, {"TIME=100%", "TIME_LIMIT"},
	} {
		if has[m.rest] {
			out = append(out, m.name)
		}
	}
	return strings.Join(out, ",")
}

// jobGres derives the job's total GRES ("gpu:1", "gpu:a100:2") from its
// allocated TRES, which is what slurmctld's gres_total holds; typed
// entries replace the untyped total of the same name.
func jobGres(tres string) string {
	type entry struct{ name, count string }
	var untyped, typed []entry
	typedNames := map[string]bool{}
	for _, item := range strings.Split(tres, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || !strings.HasPrefix(k, "gres/") {
			continue
		}
		name := strings.TrimPrefix(k, "gres/")
		if base, _, isTyped := strings.Cut(name, ":"); isTyped {
			typed = append(typed, entry{name, v})
			typedNames[base] = true
			continue
		}
		untyped = append(untyped, entry{name, v})
	}
	var out []string
	for _, e := range untyped {
		if typedNames[e.name] {
			for _, t := range typed {
				if strings.HasPrefix(t.name, e.name+":") {
					out = append(out, t.name+":"+t.count)
				}
			}
			continue
		}
		out = append(out, e.name+":"+e.count)
	}
	if len(out) == 0 {
		return "(null)"
	}
	return strings.Join(out, ",")
}

// sortedNodeList is slurm_sort_node_list_str: the job's nodes in host
// order, compressed.
func sortedNodeList(nodes string) string {
	if nodes == "" {
		return ""
	}
	names, err := hostlist.Expand(nodes)
	if err != nil {
		return nodes
	}
	return hostlist.CompressSorted(names)
}

// formatJob prints one job record in `scontrol show job` layout.
func formatJob(j *v0044.V0044JobInfo, v jobView) string {
	w := newLineWriter(v.oneLiner)
	base, _ := jobStates(j)
	pending := base == "PENDING"

	// Line 1: identity.
	w.printf("JobId=%d ", j.JobID.Or(0))
	arrayJobID := u32(j.ArrayJobID)
	if arrayJobID != 0 && arrayJobID != noVal {
		taskStr := j.ArrayTaskString.Or("")
		taskID := u32(j.ArrayTaskID)
		if v.arrayTask != nil {
			taskStr, taskID = "", uint64(*v.arrayTask)
		}
		if taskStr != "" {
			w.printf("ArrayJobId=%d ArrayTaskId=%s ", arrayJobID, taskStr)
		} else {
			w.printf("ArrayJobId=%d ArrayTaskId=%d ", arrayJobID, taskID)
		}
		if m := u32(j.ArrayMaxTasks); m != 0 && m != noVal {
			w.printf("ArrayTaskThrottle=%d ", m)
		}
	} else if het := u32(j.HetJobID); het != 0 && het != noVal {
		w.printf("HetJobId=%d HetJobOffset=%d ", het, u32(j.HetJobOffset))
	}
	w.printf("JobName=%s", j.Name.Or(""))
	w.end()

	if v.detail {
		if step, ok := j.StepID.Get(); ok && step.Sluid.Or("") != "" {
			w.printf("SLUID=%s", step.Sluid.Or(""))
			w.end()
		}
	}
	if s := j.HetJobIDSet.Or(""); s != "" {
		w.printf("HetJobIdSet=%s", s)
		w.end()
	}

	user := j.UserName.Or("")
	if user == "" {
		user = strconv.Itoa(int(j.UserID.Or(0)))
	}
	group := j.GroupName.Or("")
	if group == "" {
		group = strconv.Itoa(int(j.GroupID.Or(0)))
	}
	mcs := j.McsLabel.Or("")
	if mcs == "" {
		mcs = "N/A"
	}
	w.printf("UserId=%s(%d) GroupId=%s(%d) MCS_label=%s", user, j.UserID.Or(0), group, j.GroupID.Or(0), mcs)
	w.end()

	prio := u32(j.Priority)
	if prio == noVal {
		prio = 0
	}
	w.printf("Priority=%d Nice=%d Account=%s QOS=%s", prio, j.Nice.Or(0), orNull(j.Account.Or("")), orNull(j.Qos.Or("")))
	if v.trackWCKey {
		w.printf(" WCKey=%s", orNull(j.Wckey.Or("")))
	}
	w.end()

	w.printf("JobState=%s ", jobStateString(j))
	if desc := j.StateDescription.Or(""); desc != "" {
		w.printf("Reason=%s ", strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return '_'
			}
			return r
		}, desc))
	} else {
		w.printf("Reason=%s ", orNull(j.StateReason.Or("")))
	}
	if fn := j.FailedNode.Or(""); fn != "" {
		w.printf("FailedNode=%s ", fn)
	}
	w.printf("Dependency=%s", orNull(j.Dependency.Or("")))
	w.end()

	w.printf("Requeue=%d Restarts=%d BatchFlag=%d Reboot=%d ExitCode=%s",
		b2i(j.Requeue.Or(false)), j.RestartCnt.Or(0), b2i(j.BatchFlag.Or(false)), b2i(j.Reboot.Or(false)), exitCode(j.ExitCode))
	w.end()
	if v.detail {
		w.printf("DerivedExitCode=%s", exitCode(j.DerivedExitCode))
		w.end()
	}

	// RunTime as _sprint_job_info computes it.
	start, end := epoch(j.StartTime), epoch(j.EndTime)
	suspendTime, preSus := epoch(j.SuspendTime), epoch(j.PreSusTime)
	var runTime int64
	switch {
	case pending || start == 0:
	case base == "SUSPENDED":
		runTime = preSus
	default:
		until := end
		if base == "RUNNING" || end == 0 {
			until = v.now.Unix()
		}
		if suspendTime != 0 {
			runTime = until - suspendTime + preSus
		} else {
			runTime = until - start
		}
	}
	limit := u32(j.TimeLimit)
	w.printf("RunTime=%s TimeLimit=%s ", secs2time(runTime), mins2time(limit))
	if tmin := u32(j.TimeMinimum); tmin == 0 || tmin == noVal {
		w.printf("TimeMin=N/A")
	} else {
		w.printf("TimeMin=%s", mins2time(tmin))
	}
	w.end()

	w.printf("SubmitTime=%s EligibleTime=%s", v.timeStr(epoch(j.SubmitTime)), v.timeStr(epoch(j.EligibleTime)))
	w.end()
	w.printf("AccrueTime=%s", v.timeStr(epoch(j.AccrueTime)))
	w.end()
	if rt := epoch(j.ResizeTime); rt != 0 {
		w.printf("ResizeTime=%s", v.timeStr(rt))
		w.end()
	}
	w.printf("StartTime=%s ", v.timeStr(start))
	if limit == infinite && end > v.now.Unix() {
		w.printf("EndTime=Unknown ")
	} else {
		w.printf("EndTime=%s ", v.timeStr(end))
	}
	if dl := epoch(j.Deadline); dl != 0 {
		w.printf("Deadline=%s", v.timeStr(dl))
	} else {
		w.printf("Deadline=N/A")
	}
	w.end()

	if cron := j.Cron.Or(""); hasJobFlag(j, v0044.V0044JobInfoFlagsItemCRONJOB) || cron != "" {
		if hasJobFlag(j, v0044.V0044JobInfoFlagsItemCRONJOB) {
			w.printf("CronJob=Yes ")
		}
		w.printf("CrontabSpec=\"%s\"", orNull(cron))
		w.end()
	}
	if pt := epoch(j.PreemptableTime); pt != 0 {
		w.printf("PreemptEligibleTime=%s ", v.timeStr(pt))
		if p := epoch(j.PreemptTime); p == 0 {
			w.printf("PreemptTime=None")
		} else {
			w.printf("PreemptTime=%s", v.timeStr(p))
		}
		w.end()
	}

	if suspendTime != 0 {
		w.printf("SuspendTime=%s ", v.timeStr(suspendTime))
	} else {
		w.printf("SuspendTime=None ")
	}
	sched := "Main"
	if hasJobFlag(j, v0044.V0044JobInfoFlagsItemBACKFILLATTEMPTED) {
		sched = "Backfill"
	}
	if hasJobFlag(j, v0044.V0044JobInfoFlagsItemSCHEDULINGATTEMPTED) {
		sched += ":*"
	}
	w.printf("SecsPreSuspend=%d LastSchedEval=%s Scheduler=%s", preSus, v.timeStr(epoch(j.LastSchedEvaluation)), sched)
	w.end()

	// slurmrestd does not report the allocating session id (alloc_sid), so
	// it prints as 0.
	w.printf("Partition=%s AllocNode:Sid=%s:0", orNull(j.Partition.Or("")), orNull(j.AllocatingNode.Or("")))
	w.end()
	w.printf("ReqNodeList=%s ExcNodeList=%s", orNull(j.RequiredNodes.Or("")), orNull(j.ExcludedNodes.Or("")))
	w.end()
	w.printf("NodeList=%s", sortedNodeList(j.Nodes.Or("")))
	if s := j.ScheduledNodes.Or(""); s != "" {
		w.printf(" SchedNodeList=%s", s)
	}
	w.end()

	var opt []string
	if s := j.BatchFeatures.Or(""); s != "" {
		opt = append(opt, "BatchFeatures="+s)
	}
	if s := j.BatchHost.Or(""); s != "" {
		opt = append(opt, "BatchHost="+s)
	}
	if len(opt) > 0 {
		w.printf("%s", strings.Join(opt, " "))
		w.end()
	}
	if hasJobFlag(j, v0044.V0044JobInfoFlagsItemSTEPMGRENABLED) {
		w.printf("StepMgrEnabled=Yes")
		w.end()
	}
	if a, vi := j.FederationSiblingsActive.Or(""), j.FederationSiblingsViable.Or(""); a != "" || vi != "" {
		w.printf("FedOrigin=%s FedViableSiblings=%s FedActiveSiblings=%s", orNull(j.FederationOrigin.Or("")), orNull(vi), orNull(a))
		w.end()
	}

	// Line 15: sizes.
	minNodes, maxNodes := u32(j.NodeCount), uint64(0)
	sizeStr := ""
	if pending {
		maxNodes = u32(j.MaxNodes)
		if maxNodes == noVal {
			maxNodes = 0
		}
		sizeStr = strings.Join(j.JobSizeStr, ",")
		if maxNodes != 0 && maxNodes < minNodes {
			minNodes = maxNodes
		}
	}
	if minNodes == noVal {
		minNodes = 0
	}
	if sizeStr != "" {
		w.printf("NumNodes=%s ", sizeStr)
	} else {
		w.printf("NumNodes=%s ", sprintRange(minNodes, maxNodes))
	}
	maxCPUs := u32(j.MaxCpus)
	if maxCPUs == noVal {
		maxCPUs = 0
	}
	w.printf("NumCPUs=%s ", sprintRange(u32(j.Cpus), maxCPUs))
	if t := u32(j.Tasks); t == noVal {
		w.printf("NumTasks=N/A ")
	} else {
		w.printf("NumTasks=%d ", t)
	}
	if cpt := u16(j.CpusPerTask); cpt == noVal16 {
		w.printf("CPUs/Task=N/A ")
	} else {
		w.printf("CPUs/Task=%d ", cpt)
	}
	// slurmrestd has no boards_per_node; jobs that do not ask for boards
	// carry 0, which is what Slurm prints for them.
	w.printf("ReqB:S:C:T=0:%s:%s:%s", star(uint64(uint16(j.SocketsPerBoard.Or(0)))), star(u16(j.CoresPerSocket)), star(u16(j.ThreadsPerCore)))
	w.end()

	w.printf("ReqTRES=%s", orNull(j.TresReqStr.Or("")))
	w.end()
	w.printf("AllocTRES=%s", orNull(j.TresAllocStr.Or("")))
	w.end()

	w.printf("Socks/Node=%s ", star(u16(j.SocketsPerNode)))
	w.printf("NtasksPerN:B:S:C=%s:%s:%s:%s ", star(u16(j.TasksPerNode)), star(u16(j.TasksPerBoard)), star(u16(j.TasksPerSocket)), star(u16(j.TasksPerCore)))
	w.printf("%s", coreSpec(j))
	w.end()

	if v.detail {
		writeJobResources(w, j, v)
	}

	memKind, mem := "Node", u64(j.MemoryPerNode)
	switch {
	case j.MemoryPerTres.Or("") != "":
		memKind = "TRES"
	case u64(j.MemoryPerCPU) != noVal64 && u64(j.MemoryPerCPU) != infinite64:
		memKind, mem = "CPU", u64(j.MemoryPerCPU)
	}
	if mem == noVal64 || mem == infinite64 {
		mem = 0
	}
	disk := u32(j.MinimumTmpDiskPerNode)
	if disk == noVal || disk == infinite {
		disk = 0
	}
	minCPUs := u16(j.MinimumCpusPerNode)
	if minCPUs == noVal16 {
		minCPUs = 0
	}
	w.printf("MinCPUsNode=%d MinMemory%s=%s MinTmpDiskNode=%s", minCPUs, memKind, convertNumUnitExact(mem, unitMega), convertNumUnitExact(disk, unitMega))
	w.end()

	delay := u32(j.DelayBoot)
	if delay == noVal {
		delay = 0
	}
	w.printf("Features=%s DelayBoot=%s", orNull(j.Features.Or("")), secs2time(int64(delay)))
	w.end()
	for _, f := range []struct{ key, val string }{
		{"ClusterFeatures", j.ClusterFeatures.Or("")},
		{"Prefer", j.Prefer.Or("")},
		{"Reservation", j.ResvName.Or("")},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}

	w.printf("OverSubscribe=%s Contiguous=%d Licenses=%s LicensesAlloc=%s Network=%s",
		shareString(j.Shared), b2i(j.Contiguous.Or(false)), orNull(j.Licenses.Or("")),
		orNull(j.LicensesAllocated.Or("")), orNull(j.Network.Or("")))
	w.end()
	w.printf("Command=%s", orNull(j.Command.Or("")))
	w.end()
	w.printf("SubmitLine=%s", orNull(j.SubmitLine.Or("")))
	w.end()
	w.printf("WorkDir=%s", orNull(j.CurrentWorkingDirectory.Or("")))
	w.end()
	for _, f := range []struct{ key, val string }{
		{"AdminComment", j.AdminComment.Or("")},
		{"SystemComment", j.SystemComment.Or("")},
		{"Comment", j.Comment.Or("")},
		{"Extra", j.Extra.Or("")},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}
	if j.BatchFlag.Or(false) {
		// slurmrestd already expands the patterns (%j, %A_%a...) the way
		// slurm_get_job_stdout does.
		w.printf("StdErr=%s", j.StderrExpanded.Or(""))
		w.end()
		w.printf("StdIn=%s", j.StdinExpanded.Or(""))
		w.end()
		w.printf("StdOut=%s", j.StdoutExpanded.Or(""))
		w.end()
	}
	if seg := j.SegmentSize.Or(0); seg != 0 {
		w.printf("SegmentSize=%d", seg)
		if hasJobFlag(j, v0044.V0044JobInfoFlagsItemSPREADSEGMENTS) {
			w.printf(" SpreadSegments=Yes")
		}
		if hasJobFlag(j, v0044.V0044JobInfoFlagsItemCONSOLIDATESEGMENTS) {
			w.printf(" ConsolidateSegments=Yes")
		}
		w.end()
	}
	if sw := j.RequiredSwitches.Or(0); sw != 0 {
		w.printf("Switches=%d@%s", sw, secs2time(int64(j.MaximumSwitchWaitTime.Or(0))))
		w.end()
	}
	for _, f := range []struct{ key, val string }{
		{"BurstBuffer", j.BurstBuffer.Or("")},
		{"BurstBufferState", j.BurstBufferState.Or("")},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}
	if s := cpuFreq(j); s != "" {
		w.printf("%s", s)
		w.end()
	}
	var gresFlags []string
	for _, f := range []struct {
		flag v0044.V0044JobInfoFlagsItem
		text string
	}{
		{v0044.V0044JobInfoFlagsItemGRESBINDINGDISABLED, "GresEnforceBind=No"},
		{v0044.V0044JobInfoFlagsItemGRESBINDINGENFORCED, "GresEnforceBind=Yes"},
		{v0044.V0044JobInfoFlagsItemKILLINVALIDDEPENDENCY, "KillOnInvalidDependent=Yes"},
		{v0044.V0044JobInfoFlagsItemNOKILLINVALIDDEPENDENCY, "KillOnInvalidDependent=No"},
		{v0044.V0044JobInfoFlagsItemSPREADJOB, "SpreadJob=Yes"},
		{v0044.V0044JobInfoFlagsItemEXPEDITEDREQUEUE, "ExpeditedRequeue=Yes"},
	} {
		if hasJobFlag(j, f.flag) {
			gresFlags = append(gresFlags, f.text)
		}
	}
	if len(gresFlags) > 0 {
		w.printf("%s", strings.Join(gresFlags, " "))
		w.end()
	}
	for _, f := range []struct{ key, val string }{
		{"CpusPerTres", j.CpusPerTres.Or("")},
		{"MemPerTres", j.MemoryPerTres.Or("")},
		{"TresBind", j.TresBind.Or("")},
		{"TresFreq", j.TresFreq.Or("")},
		{"TresPerJob", j.TresPerJob.Or("")},
		{"TresPerNode", j.TresPerNode.Or("")},
		{"TresPerSocket", j.TresPerSocket.Or("")},
		{"TresPerTask", j.TresPerTask.Or("")},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}
	if len(j.MailType) > 0 && j.MailUser.Or("") != "" {
		w.printf("MailUser=%s MailType=%s", j.MailUser.Or(""), mailTypeString(j.MailType))
		w.end()
	}
	if n := u16(j.TasksPerTres); n != 0 && n != noVal16 && n != infinite16 {
		w.printf("NtasksPerTRES=%d", n)
		w.end()
	}
	if c, id := j.Container.Or(""), j.ContainerID.Or(""); c != "" || id != "" {
		w.printf("Container=%s ContainerID=%s", orNull(c), orNull(id))
		w.end()
	}
	if s := j.SelinuxContext.Or(""); s != "" {
		w.printf("SELinuxContext=%s", s)
		w.end()
	}
	return w.finish(v.oneLiner)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// coreSpec rebuilds Slurm's core_spec from slurmrestd's split fields
// (core_spec, and thread_spec for values with CORE_SPEC_THREAD) and prints
// it as scontrol does.
func coreSpec(j *v0044.V0044JobInfo) string {
	const coreSpecThread = 0x8000
	raw := uint16(j.CoreSpec.Or(0))
	if ts := j.ThreadSpec.Or(0); ts != 0 {
		raw = uint16(ts) | coreSpecThread
	}
	switch {
	case raw == noVal16:
		return "CoreSpec=*"
	case raw&coreSpecThread != 0:
		return fmt.Sprintf("ThreadSpec=%d", raw&^coreSpecThread)
	}
	return fmt.Sprintf("CoreSpec=%d", raw)
}

// cpuFreq prints the --cpu-freq request as cpu_freq_debug does for numeric
// limits; governors print by name.
func cpuFreq(j *v0044.V0044JobInfo) string {
	var parts []string
	if v := u32(j.CPUFrequencyMinimum); v != noVal && v != 0 && v != infinite {
		parts = append(parts, fmt.Sprintf("CPU_min_freq=%d", v))
	}
	if v := u32(j.CPUFrequencyMaximum); v != noVal && v != 0 && v != infinite {
		parts = append(parts, fmt.Sprintf("CPU_max_freq=%d", v))
	}
	if v := u32(j.CPUFrequencyGovernor); v != noVal && v != 0 && v != infinite {
		parts = append(parts, "Governor="+cpuFreqGovernor(v))
	}
	return strings.Join(parts, " ")
}

// cpuFreqGovernor names a governor flag value as cpu_freq_to_string does.
func cpuFreqGovernor(v uint64) string {
	var names []string
	for _, g := range []struct {
		bit  uint64
		name string
	}{
		{0x80000001, "Conservative"}, {0x80000002, "Performance"},
		{0x80000004, "PowerSave"}, {0x80000008, "OnDemand"},
		{0x80000010, "UserSpace"}, {0x80000020, "SchedUtil"},
	} {
		if v&g.bit == g.bit {
			names = append(names, g.name)
		}
	}
	if len(names) == 0 {
		return strconv.FormatUint(v, 10)
	}
	return strings.Join(names, ",")
}

// writeJobResources prints the JOB_GRES line and the per-node allocation
// lines of `scontrol -d show job`, grouping consecutive nodes with the same
// CPU ids, memory and GRES.
func writeJobResources(w *lineWriter, j *v0044.V0044JobInfo, v jobView) {
	res, ok := j.JobResources.Get()
	if !ok {
		return
	}
	nodes, ok := res.Nodes.Get()
	if !ok || len(nodes.Allocation) == 0 {
		return
	}
	w.printf("JOB_GRES=%s", jobGres(j.TresAllocStr.Or("")))
	w.end()
	indent := "  "
	if v.oneLiner {
		indent = ""
	}
	type group struct {
		hosts []string
		cpus  string
		mem   int64
		gres  string
	}
	var groups []*group
	for i, n := range nodes.Allocation {
		threads := 1
		if v.threadsPerCore != nil {
			threads = max(v.threadsPerCore(n.Name), 1)
		}
		var ids []int
		coreBase := 0
		for _, s := range n.Sockets {
			for _, core := range s.Cores {
				if slices.Contains(core.Status, "ALLOCATED") {
					for t := 0; t < threads; t++ {
						ids = append(ids, (coreBase+int(core.Index))*threads+t)
					}
				}
			}
			coreBase += len(s.Cores)
		}
		slices.Sort(ids)
		var mem int64
		if m, ok := n.Memory.Get(); ok {
			mem = m.Allocated.Or(0)
		}
		gres := ""
		if i < len(j.GresDetail) {
			gres = j.GresDetail[i]
		}
		cpus := bitFmt(ids)
		if last := len(groups) - 1; last >= 0 && groups[last].cpus == cpus && groups[last].mem == mem && groups[last].gres == gres {
			groups[last].hosts = append(groups[last].hosts, n.Name)
			continue
		}
		groups = append(groups, &group{hosts: []string{n.Name}, cpus: cpus, mem: mem, gres: gres})
	}
	for _, g := range groups {
		w.printf("%sNodes=%s CPU_IDs=%s Mem=%d GRES=%s", indent, hostlist.Compress(g.hosts), g.cpus, g.mem, g.gres)
		w.end()
	}
}
