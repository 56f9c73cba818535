package scontrol

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
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

// exitCode returns the "status:signal" pair scontrol prints of a wait
// status.
func exitCode(e readmodel.ExitCode) string {
	status, signal := e.WaitPair()
	return fmt.Sprintf("%d:%d", status, signal)
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
func star(v uint16) string {
	if v == noVal16 || v == infinite16 {
		return "*"
	}
	return strconv.FormatUint(uint64(v), 10)
}

// mailTypeString is Slurm's print_mail_type for slurmrestd's names.
func mailTypeString(types []string) string {
	if len(types) == 0 {
		return "NONE"
	}
	has := map[string]bool{}
	for _, t := range types {
		has[t] = true
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
func formatJob(j *readmodel.JobInfo, v jobView) string {
	w := newLineWriter(v.oneLiner)
	base, known := j.BaseState()
	pending := known && base == readmodel.StatePending
	times := &j.Unfolded

	// Line 1: identity.
	w.printf("JobId=%d ", j.JobID)
	if j.ArrayJobID != 0 {
		taskStr, taskID := j.ArrayTaskStr, j.ArrayTaskID
		if v.arrayTask != nil {
			taskStr, taskID = "", *v.arrayTask
		}
		if taskStr != "" {
			w.printf("ArrayJobId=%d ArrayTaskId=%s ", j.ArrayJobID, taskStr)
		} else {
			w.printf("ArrayJobId=%d ArrayTaskId=%d ", j.ArrayJobID, taskID)
		}
		if j.ArrayMaxTasks != 0 {
			w.printf("ArrayTaskThrottle=%d ", j.ArrayMaxTasks)
		}
	} else if j.HetJobID != 0 {
		w.printf("HetJobId=%d HetJobOffset=%d ", j.HetJobID, j.Unfolded.HetJobOffset)
	}
	w.printf("JobName=%s", j.Name)
	w.end()

	if v.detail && j.SLUID != "" {
		w.printf("SLUID=%s", j.SLUID)
		w.end()
	}
	if j.HetJobIDSet != "" {
		w.printf("HetJobIdSet=%s", j.HetJobIDSet)
		w.end()
	}

	user := j.UserName
	if user == "" {
		user = strconv.FormatUint(uint64(j.UserID), 10)
	}
	group := j.GroupName
	if group == "" {
		group = strconv.FormatUint(uint64(j.GroupID), 10)
	}
	mcs := j.MCSLabel
	if mcs == "" {
		mcs = "N/A"
	}
	w.printf("UserId=%s(%d) GroupId=%s(%d) MCS_label=%s", user, j.UserID, group, j.GroupID, mcs)
	w.end()

	w.printf("Priority=%d Nice=%d Account=%s QOS=%s", j.Priority, j.Nice, orNull(j.Account), orNull(j.QOS))
	if v.trackWCKey {
		w.printf(" WCKey=%s", orNull(j.WCKey))
	}
	w.end()

	w.printf("JobState=%s ", j.StateString())
	if j.StateDesc != "" {
		w.printf("Reason=%s ", strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return '_'
			}
			return r
		}, j.StateDesc))
	} else {
		w.printf("Reason=%s ", orNull(j.Reason))
	}
	if j.FailedNode != "" {
		w.printf("FailedNode=%s ", j.FailedNode)
	}
	w.printf("Dependency=%s", orNull(j.Dependency))
	w.end()

	w.printf("Requeue=%d Restarts=%d BatchFlag=%d Reboot=%d ExitCode=%s",
		b2i(j.Requeue), j.RestartCnt, b2i(j.BatchFlag), b2i(j.Reboot), exitCode(j.ExitCode))
	w.end()
	if v.detail {
		w.printf("DerivedExitCode=%s", exitCode(j.DerivedExitCode))
		w.end()
	}

	// RunTime as _sprint_job_info computes it, INFINITE times included.
	start, end := times.StartTime, times.EndTime
	suspendTime, preSus := times.SuspendTime, times.PreSusTime
	var runTime int64
	switch {
	case pending || start == 0:
	case known && base == readmodel.StateSuspended:
		runTime = preSus
	default:
		until := end
		if (known && base == readmodel.StateRunning) || end == 0 {
			until = v.now.Unix()
		}
		if suspendTime != 0 {
			runTime = until - suspendTime + preSus
		} else {
			runTime = until - start
		}
	}
	w.printf("RunTime=%s TimeLimit=%s ", secs2time(runTime), mins2time(uint64(j.TimeLimit)))
	if j.TimeMin == 0 {
		w.printf("TimeMin=N/A")
	} else {
		w.printf("TimeMin=%s", mins2time(uint64(j.TimeMin)))
	}
	w.end()

	w.printf("SubmitTime=%s EligibleTime=%s", v.timeStr(times.SubmitTime), v.timeStr(times.EligibleTime))
	w.end()
	w.printf("AccrueTime=%s", v.timeStr(times.AccrueTime))
	w.end()
	if rt := times.ResizeTime; rt != 0 {
		w.printf("ResizeTime=%s", v.timeStr(rt))
		w.end()
	}
	w.printf("StartTime=%s ", v.timeStr(start))
	if j.TimeLimit == infinite && end > v.now.Unix() {
		w.printf("EndTime=Unknown ")
	} else {
		w.printf("EndTime=%s ", v.timeStr(end))
	}
	if dl := times.Deadline; dl != 0 {
		w.printf("Deadline=%s", v.timeStr(dl))
	} else {
		w.printf("Deadline=N/A")
	}
	w.end()

	if cronJob := j.HasFlag("CRON_JOB"); cronJob || j.Cron != "" {
		if cronJob {
			w.printf("CronJob=Yes ")
		}
		w.printf("CrontabSpec=\"%s\"", orNull(j.Cron))
		w.end()
	}
	if pt := times.PreemptableTime; pt != 0 {
		w.printf("PreemptEligibleTime=%s ", v.timeStr(pt))
		if p := times.PreemptTime; p == 0 {
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
	if j.HasFlag("BACKFILL_ATTEMPTED") {
		sched = "Backfill"
	}
	if j.HasFlag("SCHEDULING_ATTEMPTED") {
		sched += ":*"
	}
	w.printf("SecsPreSuspend=%d LastSchedEval=%s Scheduler=%s", preSus, v.timeStr(times.LastSchedEval), sched)
	w.end()

	// slurmrestd does not report the allocating session id (alloc_sid), so
	// it prints as 0.
	w.printf("Partition=%s AllocNode:Sid=%s:0", orNull(j.Partition), orNull(j.AllocNode))
	w.end()
	w.printf("ReqNodeList=%s ExcNodeList=%s", orNull(j.ReqNodes), orNull(j.ExcNodes))
	w.end()
	w.printf("NodeList=%s", sortedNodeList(j.Nodes))
	if j.SchedNodes != "" {
		w.printf(" SchedNodeList=%s", j.SchedNodes)
	}
	w.end()

	var opt []string
	if j.BatchFeatures != "" {
		opt = append(opt, "BatchFeatures="+j.BatchFeatures)
	}
	if j.BatchHost != "" {
		opt = append(opt, "BatchHost="+j.BatchHost)
	}
	if len(opt) > 0 {
		w.printf("%s", strings.Join(opt, " "))
		w.end()
	}
	if j.HasFlag("STEPMGR_ENABLED") {
		w.printf("StepMgrEnabled=Yes")
		w.end()
	}
	if j.FedSiblingsActive != "" || j.FedSiblingsViable != "" {
		w.printf("FedOrigin=%s FedViableSiblings=%s FedActiveSiblings=%s", orNull(j.FedOrigin), orNull(j.FedSiblingsViable), orNull(j.FedSiblingsActive))
		w.end()
	}

	// Line 15: sizes. An unset node count stays NO_VAL until a pending
	// job's maximum bounds it.
	minNodes, maxNodes := uint64(j.Unfolded.NumNodes), uint64(0)
	sizeStr := ""
	if pending {
		maxNodes = uint64(j.MaxNodes)
		sizeStr = strings.Join(j.SizeStr, ",")
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
	w.printf("NumCPUs=%s ", sprintRange(uint64(j.Unfolded.NumCPUs), uint64(j.MaxCPUs)))
	if j.NumTasks == noVal {
		w.printf("NumTasks=N/A ")
	} else {
		w.printf("NumTasks=%d ", j.NumTasks)
	}
	if j.CPUsPerTask == noVal16 {
		w.printf("CPUs/Task=N/A ")
	} else {
		w.printf("CPUs/Task=%d ", j.CPUsPerTask)
	}
	// slurmrestd has no boards_per_node; jobs that do not ask for boards
	// carry 0, which is what Slurm prints for them. sockets_per_board is
	// a 16-bit count in slurmctld.
	w.printf("ReqB:S:C:T=0:%s:%s:%s", star(uint16(j.SocketsPerBoard)), star(j.CoresPerSocket), star(j.ThreadsPerCore))
	w.end()

	w.printf("ReqTRES=%s", orNull(j.TresReq))
	w.end()
	w.printf("AllocTRES=%s", orNull(j.TresAlloc))
	w.end()

	w.printf("Socks/Node=%s ", star(j.SocketsPerNode))
	w.printf("NtasksPerN:B:S:C=%s:%s:%s:%s ", star(j.NTasksPerNode), star(j.NTasksPerBoard), star(j.NTasksPerSocket), star(j.NTasksPerCore))
	w.printf("%s", coreSpec(j.CoreSpec))
	w.end()

	if v.detail {
		writeJobResources(w, j, v)
	}

	// The memory kind follows the halves as given, not Job.MinMemory:
	// --mem-per-gpu wins and prints the per-node number.
	memKind, mem := "Node", j.MemPerNode
	switch {
	case j.MemPerTres != "":
		memKind = "TRES"
	case j.MemPerCPU != noVal64 && j.MemPerCPU != infinite64:
		memKind, mem = "CPU", j.MemPerCPU
	}
	if mem == noVal64 || mem == infinite64 {
		mem = 0
	}
	disk := uint64(j.MinTmpDisk)
	if disk == infinite {
		disk = 0
	}
	minCPUs := j.MinCPUsPerNode
	if minCPUs == noVal16 {
		minCPUs = 0
	}
	w.printf("MinCPUsNode=%d MinMemory%s=%s MinTmpDiskNode=%s", minCPUs, memKind, convertNumUnitExact(mem, unitMega), convertNumUnitExact(disk, unitMega))
	w.end()

	w.printf("Features=%s DelayBoot=%s", orNull(j.Features), secs2time(int64(j.DelayBoot)))
	w.end()
	for _, f := range []struct{ key, val string }{
		{"ClusterFeatures", j.ClusterFeatures},
		{"Prefer", j.Prefer},
		{"Reservation", j.Reservation},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}

	w.printf("OverSubscribe=%s Contiguous=%d Licenses=%s LicensesAlloc=%s Network=%s",
		j.OverSubscribe, b2i(j.Contiguous), orNull(j.Licenses), orNull(j.LicensesAlloc), orNull(j.Network))
	w.end()
	w.printf("Command=%s", orNull(j.Command))
	w.end()
	w.printf("SubmitLine=%s", orNull(j.SubmitLine))
	w.end()
	w.printf("WorkDir=%s", orNull(j.WorkDir))
	w.end()
	for _, f := range []struct{ key, val string }{
		{"AdminComment", j.AdminComment},
		{"SystemComment", j.SystemComment},
		{"Comment", j.Comment},
		{"Extra", j.Extra},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}
	if j.BatchFlag {
		// slurmrestd already expands the patterns (%j, %A_%a...) the way
		// slurm_get_job_stdout does.
		w.printf("StdErr=%s", j.StdErrExpanded)
		w.end()
		w.printf("StdIn=%s", j.StdInExpanded)
		w.end()
		w.printf("StdOut=%s", j.StdOutExpanded)
		w.end()
	}
	if j.SegmentSize != 0 {
		w.printf("SegmentSize=%d", j.SegmentSize)
		if j.HasFlag("SPREAD_SEGMENTS") {
			w.printf(" SpreadSegments=Yes")
		}
		if j.HasFlag("CONSOLIDATE_SEGMENTS") {
			w.printf(" ConsolidateSegments=Yes")
		}
		w.end()
	}
	if j.ReqSwitch != 0 {
		w.printf("Switches=%d@%s", j.ReqSwitch, secs2time(int64(j.Wait4Switch)))
		w.end()
	}
	for _, f := range []struct{ key, val string }{
		{"BurstBuffer", j.BurstBuffer},
		{"BurstBufferState", j.BurstBufferState},
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
	for _, f := range []struct{ flag, text string }{
		{"GRES_BINDING_DISABLED", "GresEnforceBind=No"},
		{"GRES_BINDING_ENFORCED", "GresEnforceBind=Yes"},
		{"KILL_INVALID_DEPENDENCY", "KillOnInvalidDependent=Yes"},
		{"NO_KILL_INVALID_DEPENDENCY", "KillOnInvalidDependent=No"},
		{"SPREAD_JOB", "SpreadJob=Yes"},
		{"EXPEDITED_REQUEUE", "ExpeditedRequeue=Yes"},
	} {
		if j.HasFlag(f.flag) {
			gresFlags = append(gresFlags, f.text)
		}
	}
	if len(gresFlags) > 0 {
		w.printf("%s", strings.Join(gresFlags, " "))
		w.end()
	}
	for _, f := range []struct{ key, val string }{
		{"CpusPerTres", j.CPUsPerTres},
		{"MemPerTres", j.MemPerTres},
		{"TresBind", j.TresBind},
		{"TresFreq", j.TresFreq},
		{"TresPerJob", j.TresPerJob},
		{"TresPerNode", j.TresPerNode},
		{"TresPerSocket", j.TresPerSocket},
		{"TresPerTask", j.TresPerTask},
	} {
		if f.val != "" {
			w.printf("%s=%s", f.key, f.val)
			w.end()
		}
	}
	if len(j.MailType) > 0 && j.MailUser != "" {
		w.printf("MailUser=%s MailType=%s", j.MailUser, mailTypeString(j.MailType))
		w.end()
	}
	if n := j.TasksPerTres; n != 0 && n != noVal16 && n != infinite16 {
		w.printf("NtasksPerTRES=%d", n)
		w.end()
	}
	if j.Container != "" || j.ContainerID != "" {
		w.printf("Container=%s ContainerID=%s", orNull(j.Container), orNull(j.ContainerID))
		w.end()
	}
	if j.SELinuxContext != "" {
		w.printf("SELinuxContext=%s", j.SELinuxContext)
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

// coreSpec prints slurmctld's core_spec as scontrol does: a count of
// cores, or of threads with CORE_SPEC_THREAD.
func coreSpec(raw uint16) string {
	switch {
	case raw == noVal16:
		return "CoreSpec=*"
	case raw&readmodel.CoreSpecThread != 0:
		return fmt.Sprintf("ThreadSpec=%d", raw&^readmodel.CoreSpecThread)
	}
	return fmt.Sprintf("CoreSpec=%d", raw)
}

// cpuFreq prints the --cpu-freq request as cpu_freq_debug does for numeric
// limits; governors print by name.
func cpuFreq(j *readmodel.JobInfo) string {
	set := func(v uint32) bool { return v != noVal && v != 0 && v != infinite }
	var parts []string
	if set(j.CPUFreqMin) {
		parts = append(parts, fmt.Sprintf("CPU_min_freq=%d", j.CPUFreqMin))
	}
	if set(j.CPUFreqMax) {
		parts = append(parts, fmt.Sprintf("CPU_max_freq=%d", j.CPUFreqMax))
	}
	if set(j.CPUFreqGov) {
		parts = append(parts, "Governor="+cpuFreqGovernor(uint64(j.CPUFreqGov)))
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
func writeJobResources(w *lineWriter, j *readmodel.JobInfo, v jobView) {
	if len(j.Alloc) == 0 {
		return
	}
	w.printf("JOB_GRES=%s", jobGres(j.TresAlloc))
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
	for i, n := range j.Alloc {
		threads := 1
		if v.threadsPerCore != nil {
			threads = max(v.threadsPerCore(n.Name), 1)
		}
		var ids []int
		coreBase := 0
		for _, cores := range n.Sockets {
			for _, core := range cores {
				if core.Allocated {
					for t := 0; t < threads; t++ {
						ids = append(ids, (coreBase+core.Index)*threads+t)
					}
				}
			}
			coreBase += len(cores)
		}
		slices.Sort(ids)
		gres := ""
		if i < len(j.GresDetail) {
			gres = j.GresDetail[i]
		}
		cpus := bitFmt(ids)
		if last := len(groups) - 1; last >= 0 && groups[last].cpus == cpus && groups[last].mem == n.Memory && groups[last].gres == gres {
			groups[last].hosts = append(groups[last].hosts, n.Name)
			continue
		}
		groups = append(groups, &group{hosts: []string{n.Name}, cpus: cpus, mem: n.Memory, gres: gres})
	}
	for _, g := range groups {
		w.printf("%sNodes=%s CPU_IDs=%s Mem=%d GRES=%s", indent, hostlist.Compress(g.hosts), g.cpus, g.mem, g.gres)
		w.end()
	}
}
