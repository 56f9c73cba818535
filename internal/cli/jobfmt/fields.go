package jobfmt

import (
	"fmt"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
)

// Context is what rendering needs besides the job itself.
type Context struct {
	// Now is the command's clock: elapsed and remaining times count to it.
	Now time.Time
	// TimeFormat is SLURM_TIME_FORMAT.
	TimeFormat string
	// ExpandPatterns prints StdIn/StdOut/StdErr with %j-style patterns
	// replaced (squeue --expand-patterns).
	ExpandPatterns bool
	// NoConvert keeps memory sizes in MB (squeue --noconvert).
	NoConvert bool
	// FullArrayIDs prints array job ids of any length: squeue does when
	// SLURM_BITSTR_LEN is set, and cuts them to 31 bytes otherwise.
	FullArrayIDs bool
}

// Field is one job attribute squeue can print: its -O name, its -o letter
// (0 when it has none), its column header and how its value prints.
type Field struct {
	// Name is the -O/--Format name, matched case-insensitively.
	Name string
	// Letter is the -o/--format code, 0 when the field has none.
	Letter byte
	// Hidden fields work but are left out of --helpformat/--helpFormat
	// (aliases and vestigial names).
	Hidden bool
	// Header is the column title.
	Header string
	// headerWhole keeps long right-justified headers whole (NODELIST).
	headerWhole bool
	value       func(*Job, *Context) cell
}

// fields is squeue's field table in Slurm's order, which decides the
// -O lookup (first case-insensitive match) and the help listings.
var fields = []Field{
	{Name: "Account", Letter: 'a', Header: "ACCOUNT", value: func(j *Job, _ *Context) cell { return str(j.Account) }},
	{Name: "AccrueTime", Header: "ACCRUE_TIME", value: func(j *Job, c *Context) cell { return c.time(j.AccrueTime) }},
	{Name: "admin_comment", Header: "ADMIN_COMMENT", value: func(j *Job, _ *Context) cell { return str(j.AdminComment) }},
	{Name: "AllocNodes", Header: "ALLOC_NODES", value: func(j *Job, _ *Context) cell { return str(j.AllocNode) }},
	// The v0.0.44 API does not carry the allocating session id.
	{Name: "AllocSID", Header: "ALLOC_SID", value: func(*Job, *Context) cell { return text("0") }},
	{Name: "ArrayJobId", Letter: 'F', Header: "ARRAY_JOB_ID", value: func(j *Job, _ *Context) cell {
		if j.ArrayTaskStr != "" || j.IsArrayTask() {
			return text(utoa(j.ArrayJobID))
		}
		return text(utoa(j.JobID))
	}},
	{Name: "ArrayTaskId", Letter: 'K', Header: "ARRAY_TASK_ID", value: func(j *Job, _ *Context) cell {
		switch {
		case j.ArrayTaskStr != "":
			return text(j.ArrayTaskStr)
		case j.IsArrayTask():
			return text(utoa(j.ArrayTaskID))
		}
		return text("N/A")
	}},
	{Name: "AssocId", Header: "ASSOC_ID", value: func(j *Job, _ *Context) cell { return text(utoa(j.AssocID)) }},
	{Name: "BatchFlag", Header: "BATCH_FLAG", value: func(j *Job, _ *Context) cell { return boolInt(j.BatchFlag) }},
	{Name: "BatchHost", Letter: 'B', Header: "EXEC_HOST", value: func(j *Job, _ *Context) cell {
		h := j.AllocNode
		if j.BatchFlag {
			h = j.BatchHost
		}
		if h == "" {
			return text("n/a")
		}
		return text(h)
	}},
	{Name: "BoardsPerNode", Header: "BOARDS_PER_NODE", value: func(j *Job, _ *Context) cell { return u16OrNA(j.BoardsPerNode, false) }},
	{Name: "BurstBuffer", Header: "BURST_BUFFER", value: func(j *Job, _ *Context) cell { return str(j.BurstBuffer) }},
	{Name: "BurstBufferState", Header: "BURST_BUFFER_STATE", value: func(j *Job, _ *Context) cell { return str(j.BurstBufferState) }},
	{Name: "Cluster", Header: "CLUSTER", value: func(j *Job, _ *Context) cell { return str(j.Cluster) }},
	{Name: "ClusterFeature", Header: "CLUSTER_FEATURES", value: func(j *Job, _ *Context) cell { return str(j.ClusterFeatures) }},
	{Name: "Command", Letter: 'o', Header: "COMMAND", value: func(j *Job, _ *Context) cell { return str(j.Command) }},
	{Name: "Comment", Letter: 'k', Header: "COMMENT", value: func(j *Job, _ *Context) cell { return str(j.Comment) }},
	{Name: "Container", Header: "CONTAINER", value: func(j *Job, _ *Context) cell { return str(j.Container) }},
	{Name: "ContainerId", Header: "CONTAINERID", value: func(j *Job, _ *Context) cell { return str(j.ContainerID) }},
	{Name: "Contiguous", Letter: 'O', Header: "CONTIGUOUS", value: func(j *Job, _ *Context) cell { return boolInt(j.Contiguous) }},
	{Name: "Cores", Letter: 'I', Header: "CORES_PER_SOCKET", value: func(j *Job, c *Context) cell { return c.sct(j.CoresPerSocket, 8) }},
	{Name: "CoreSpec", Letter: 'X', Header: "CORE_SPEC", value: func(j *Job, _ *Context) cell {
		switch {
		case j.CoreSpec == NoVal16:
			return text("N/A")
		case j.CoreSpec&coreSpecThread != 0:
			return text(fmt.Sprintf("%d Threads", j.CoreSpec&^coreSpecThread))
		}
		return text(strconv.Itoa(int(j.CoreSpec)))
	}},
	{Name: "CPUsPerTask", Header: "CPUS_PER_TASK", value: cpusPerTask},
	{Name: "cpus-per-task", Header: "CPUS_PER_TASK", value: cpusPerTask},
	{Name: "cpus-per-tres", Header: "CPUS_PER_TRES", value: func(j *Job, _ *Context) cell { return orNA(j.CPUsPerTres) }},
	{Name: "CronJob", Header: "CRON_JOB", value: func(j *Job, _ *Context) cell {
		if j.CronJob {
			return text("Yes")
		}
		return text("No")
	}},
	{Name: "Deadline", Header: "DEADLINE", value: func(j *Job, c *Context) cell { return c.time(j.Deadline) }},
	{Name: "DelayBoot", Header: "DELAY_BOOT", value: func(j *Job, _ *Context) cell { return secs(int64(j.DelayBoot), true) }},
	{Name: "Dependency", Letter: 'E', Header: "DEPENDENCY", value: func(j *Job, _ *Context) cell { return str(j.Dependency) }},
	{Name: "DerivedEC", Header: "DERIVED_EC", value: func(j *Job, _ *Context) cell { return exit(j.DerivedExitCode) }},
	{Name: "EligibleTime", Header: "ELIGIBLE_TIME", value: func(j *Job, c *Context) cell { return c.time(j.EligibleTime) }},
	{Name: "EndTime", Letter: 'e', Header: "END_TIME", value: func(j *Job, c *Context) cell {
		if j.TimeLimit == Infinite && j.EndTime > c.Now.Unix() {
			return text("NONE")
		}
		return c.time(j.EndTime)
	}},
	{Name: "ExcNodes", Letter: 'x', Header: "EXC_NODES", value: func(j *Job, _ *Context) cell { return nodes(j.ExcNodes) }},
	{Name: "exit_code", Header: "EXIT_CODE", value: func(j *Job, _ *Context) cell { return exit(j.ExitCode) }},
	{Name: "Feature", Letter: 'f', Header: "FEATURES", value: func(j *Job, _ *Context) cell { return str(j.Features) }},
	{Name: "Gres", Letter: 'b', Hidden: true, Header: "TRES_PER_NODE", value: tresPerNode},
	{Name: "GroupId", Letter: 'G', Header: "GROUP", value: func(j *Job, _ *Context) cell { return text(utoa(j.GroupID)) }},
	{Name: "GroupName", Letter: 'g', Header: "GROUP", value: func(j *Job, _ *Context) cell {
		if j.GroupName == "" {
			return text(utoa(j.GroupID))
		}
		return text(j.GroupName)
	}},
	{Name: "HetJobId", Header: "HET_JOB_ID", value: hetJobID},
	{Name: "HetJobIdSet", Header: "HET_JOB_ID_SET", value: hetJobIDSet},
	{Name: "HetJobOffset", Header: "HET_JOB_OFFSET", value: hetJobOffset},
	{Name: "JobArrayId", Letter: 'i', Header: "JOBID", value: func(j *Job, c *Context) cell { return c.jobArrayID(j) }},
	{Name: "JobId", Letter: 'A', Header: "JOBID", value: func(j *Job, _ *Context) cell { return text(utoa(j.JobID)) }},
	{Name: "LastSchedEval", Header: "LAST_SCHED_EVAL", value: func(j *Job, c *Context) cell { return c.time(j.LastSchedEval) }},
	{Name: "Licenses", Letter: 'W', Header: "LICENSES", value: func(j *Job, _ *Context) cell { return str(j.Licenses) }},
	{Name: "LicensesAlloc", Header: "LICENSES_ALLOC", value: func(j *Job, _ *Context) cell { return str(j.LicensesAlloc) }},
	{Name: "MaxCPUs", Header: "MAX_CPUS", value: func(j *Job, _ *Context) cell {
		if j.MaxCPUs != 0 {
			return text(utoa(j.MaxCPUs))
		}
		return text(utoa(j.NumCPUs))
	}},
	{Name: "MaxNodes", Header: "MAX_NODES", value: func(j *Job, _ *Context) cell {
		if j.MaxNodes != 0 {
			return text(utoa(j.MaxNodes))
		}
		return text(utoa(j.NumNodes))
	}},
	{Name: "mem-per-tres", Header: "MEM_PER_TRES", value: func(j *Job, _ *Context) cell { return orNA(j.MemPerTres) }},
	{Name: "MCSLabel", Header: "MCSLABEL", value: func(j *Job, _ *Context) cell { return str(j.MCSLabel) }},
	{Name: "MinCPUs", Letter: 'c', Header: "MIN_CPUS", value: func(j *Job, c *Context) cell {
		return text(ConvertNumUnit(float64(j.MinCPUsPerNode), UnitNone, c.convert(), 8))
	}},
	{Name: "MinMemory", Letter: 'm', Header: "MIN_MEMORY", value: func(j *Job, c *Context) cell {
		return text(ConvertNumUnit(float64(j.MinMemory), UnitMega, c.convert(), 10))
	}},
	{Name: "MinTime", Header: "TIME_MIN", value: func(j *Job, _ *Context) cell { return secs(int64(j.TimeMin)*60, true) }},
	{Name: "MinTmpDisk", Letter: 'd', Header: "MIN_TMP_DISK", value: func(j *Job, c *Context) cell {
		return text(ConvertNumUnit(float64(j.MinTmpDisk), UnitMega, c.convert(), 10))
	}},
	{Name: "Name", Letter: 'j', Header: "NAME", value: func(j *Job, _ *Context) cell { return str(j.Name) }},
	{Name: "Network", Header: "NETWORK", value: func(j *Job, _ *Context) cell { return str(j.Network) }},
	{Name: "Nice", Letter: 'y', Header: "NICE", value: func(j *Job, _ *Context) cell { return text(strconv.Itoa(int(j.Nice))) }},
	{Name: "NodeList", Letter: 'N', Header: "NODELIST", headerWhole: true, value: func(j *Job, _ *Context) cell { return nodes(j.Nodes) }},
	{Name: "NTPerCore", Header: "NTASKS_PER_CORE", value: func(j *Job, _ *Context) cell { return u16OrNA(j.NTasksPerCore, true) }},
	{Name: "NTPerNode", Header: "NTASKS_PER_NODE", value: func(j *Job, _ *Context) cell { return u16OrNA(j.NTasksPerNode, true) }},
	{Name: "NTPerSocket", Header: "NTASKS_PER_SOCKET", value: func(j *Job, _ *Context) cell { return u16OrNA(j.NTasksPerSocket, true) }},
	{Name: "NTPerBoard", Header: "NTASKS_PER_BOARD", value: func(j *Job, _ *Context) cell { return u16OrNA(j.NTasksPerBoard, true) }},
	{Name: "NumCPUs", Letter: 'C', Header: "CPUS", value: func(j *Job, _ *Context) cell { return text(utoa(j.NumCPUs)) }},
	{Name: "NumNodes", Letter: 'D', Header: "NODES", value: func(j *Job, _ *Context) cell { return text(utoa(j.NumNodes)) }},
	{Name: "NumTasks", Header: "TASKS", value: func(j *Job, _ *Context) cell { return text(utoa(zeroIfUnset(j.NumTasks))) }},
	{Name: "Origin", Header: "ORIGIN", value: func(j *Job, _ *Context) cell { return orNA2(j.FedOrigin) }},
	{Name: "OriginRaw", Header: "ORIGIN_RAW", value: func(j *Job, _ *Context) cell {
		if id := j.JobID >> 26; id != 0 {
			return text(utoa(id))
		}
		return text("NA")
	}},
	{Name: "OverSubscribe", Letter: 'h', Header: "OVER_SUBSCRIBE", value: overSubscribeCell},
	{Name: "PackJobId", Hidden: true, Header: "HET_JOB_ID", value: hetJobID},
	{Name: "PackJobIdSet", Hidden: true, Header: "HET_JOB_ID_SET", value: hetJobIDSet},
	{Name: "PackJobOffset", Hidden: true, Header: "HET_JOB_OFFSET", value: hetJobOffset},
	{Name: "Partition", Letter: 'P', Header: "PARTITION", value: func(j *Job, _ *Context) cell { return str(j.Partition) }},
	{Name: "PendingTime", Header: "PENDING_TIME", value: func(j *Job, c *Context) cell {
		now := c.Now.Unix()
		if j.StartTime != 0 && j.StartTime < now {
			return text(strconv.FormatInt(int64(int32(j.StartTime-j.SubmitTime)), 10))
		}
		return text(strconv.FormatInt(int64(int32(now-j.SubmitTime)), 10))
	}},
	{Name: "PreemptTime", Header: "PREEMPT_TIME", value: func(j *Job, c *Context) cell {
		switch j.PreemptTime {
		case int64(Infinite):
			return text("UNLIMITED")
		case int64(NoVal):
			return text("NOT_SET")
		}
		return c.time(j.PreemptTime)
	}},
	{Name: "Prefer", Header: "PREFER", value: func(j *Job, _ *Context) cell { return str(j.Prefer) }},
	{Name: "Priority", Letter: 'p', Header: "PRIORITY", value: func(j *Job, _ *Context) cell {
		return text(fmt.Sprintf("%16.14f", float64(j.Priority)/float64(uint32(0xffffffff))))
	}},
	{Name: "PriorityLong", Letter: 'Q', Header: "PRIORITY", value: func(j *Job, _ *Context) cell { return text(utoa(j.Priority)) }},
	{Name: "Profile", Header: "PROFILE", value: func(j *Job, _ *Context) cell { return text(j.Profile) }},
	{Name: "QOS", Letter: 'q', Header: "QOS", value: func(j *Job, _ *Context) cell { return str(j.QOS) }},
	{Name: "Reason", Letter: 'r', Header: "REASON", value: func(j *Job, _ *Context) cell { return str(reason(j)) }},
	{Name: "ReasonList", Letter: 'R', Header: "NODELIST(REASON)", headerWhole: true, value: func(j *Job, _ *Context) cell {
		s := j.State
		if !s.IsCompleting() && (s.IsPending() || s.IsStageOut() || s.Base() == StateTimeout ||
			s.Base() == StateOutOfMemory || s.Base() == StateDeadline || s.Base() == StateFailed) {
			return text("(" + reasonOrNull(j) + ")")
		}
		return nodes(j.Nodes)
	}},
	{Name: "Reboot", Header: "REBOOT", value: func(j *Job, _ *Context) cell { return boolInt(j.Reboot) }},
	{Name: "ReqNodes", Letter: 'n', Header: "REQ_NODES", value: func(j *Job, _ *Context) cell { return nodes(j.ReqNodes) }},
	{Name: "ReqSwitch", Header: "REQ_SWITCH", value: func(j *Job, _ *Context) cell { return text(strconv.Itoa(int(int32(j.ReqSwitch)))) }},
	{Name: "Requeue", Header: "REQUEUE", value: func(j *Job, _ *Context) cell { return boolInt(j.Requeue) }},
	{Name: "Reservation", Letter: 'v', Header: "RESERVATION", value: func(j *Job, _ *Context) cell { return str(j.Reservation) }},
	{Name: "ResizeTime", Header: "RESIZE_TIME", value: func(j *Job, _ *Context) cell {
		// Slurm prints the resize timestamp times 60 as a duration; kept.
		if j.ResizeTime != 0 {
			return secs(j.ResizeTime*60, true)
		}
		return whole("N/A")
	}},
	{Name: "RestartCnt", Header: "RESTART_COUNT", value: func(j *Job, _ *Context) cell { return text(strconv.Itoa(int(int32(j.RestartCnt)))) }},
	{Name: "SchedNodes", Letter: 'Y', Header: "SCHEDNODES", headerWhole: true, value: func(j *Job, _ *Context) cell {
		return cell{text: j.SchedNodes, null: j.SchedNodes == ""}
	}},
	{Name: "SCT", Letter: 'z', Header: "S:C:T", value: func(j *Job, c *Context) cell {
		return text(c.sct(j.SocketsPerNode, 10).text + ":" + c.sct(j.CoresPerSocket, 10).text + ":" + c.sct(j.ThreadsPerCore, 10).text)
	}},
	{Name: "SegmentSize", Header: "SEGMENT_SIZE", value: func(j *Job, _ *Context) cell {
		if j.SegmentSize != 0 {
			return text(strconv.Itoa(int(int32(j.SegmentSize))))
		}
		return text("N/A")
	}},
	{Name: "SiblingsActive", Header: "ACTIVE_SIBLINGS", value: func(j *Job, _ *Context) cell { return orNA2(j.FedSiblingsActive) }},
	// The API reports sibling names only, not the raw cluster bitmaps.
	{Name: "SiblingsActiveRaw", Header: "ACTIVE_SIBLINGS_RAW", value: func(*Job, *Context) cell { return text("NA") }},
	{Name: "SiblingsViable", Header: "VIABLE_SIBLINGS", value: func(j *Job, _ *Context) cell { return orNA2(j.FedSiblingsViable) }},
	{Name: "SiblingsViableRaw", Header: "VIALBLE_SIBLINGS_RAW", value: func(*Job, *Context) cell { return text("NA") }},
	{Name: "Shared", Letter: 'h', Hidden: true, Header: "OVER_SUBSCRIBE", value: overSubscribeCell},
	{Name: "SLUID", Letter: 's', Header: "SLUID", value: func(j *Job, _ *Context) cell { return str(j.SLUID) }},
	{Name: "Sockets", Letter: 'H', Header: "SOCKETS_PER_NODE", value: func(j *Job, c *Context) cell { return c.sct(j.SocketsPerNode, 8) }},
	{Name: "SPerBoard", Header: "SOCKETS_PER_BOARD", value: func(j *Job, _ *Context) cell { return text(strconv.Itoa(int(int32(j.SocketsPerBoard)))) }},
	{Name: "StartTime", Letter: 'S', Header: "START_TIME", value: func(j *Job, c *Context) cell { return c.time(j.StartTime) }},
	{Name: "State", Letter: 'T', Header: "STATE", value: func(j *Job, _ *Context) cell { return text(j.State.String()) }},
	{Name: "StateCompact", Letter: 't', Header: "ST", value: func(j *Job, _ *Context) cell { return text(j.State.Compact()) }},
	{Name: "StdErr", Header: "STDERR", value: func(j *Job, c *Context) cell { return c.stdio(j.StdErr, j.StdErrExpanded) }},
	{Name: "StdIn", Header: "STDIN", value: func(j *Job, c *Context) cell { return c.stdio(j.StdIn, j.StdInExpanded) }},
	{Name: "StdOut", Header: "STDOUT", value: func(j *Job, c *Context) cell { return c.stdio(j.StdOut, j.StdOutExpanded) }},
	{Name: "SubmitTime", Letter: 'V', Header: "SUBMIT_TIME", value: func(j *Job, c *Context) cell { return c.time(j.SubmitTime) }},
	{Name: "system_comment", Header: "SYSTEM_COMMENT", value: func(j *Job, _ *Context) cell { return str(j.SystemComment) }},
	{Name: "Threads", Letter: 'J', Header: "THREADS_PER_CORE", value: func(j *Job, c *Context) cell { return c.sct(j.ThreadsPerCore, 8) }},
	{Name: "TimeLeft", Letter: 'L', Header: "TIME_LEFT", value: func(j *Job, c *Context) cell {
		switch j.TimeLimit {
		case Infinite:
			return text("UNLIMITED")
		case NoVal:
			return text("NOT_SET")
		}
		return secs(int64(j.TimeLimit)*60-TimeUsed(j, c.Now), false)
	}},
	{Name: "TimeLimit", Letter: 'l', Header: "TIME_LIMIT", value: func(j *Job, _ *Context) cell {
		switch j.TimeLimit {
		case Infinite:
			return text("UNLIMITED")
		case NoVal:
			return text("NOT_SET")
		}
		return secs(int64(j.TimeLimit)*60, false)
	}},
	{Name: "TimeUsed", Letter: 'M', Header: "TIME", value: func(j *Job, c *Context) cell { return secs(TimeUsed(j, c.Now), false) }},
	{Name: "Tres", Hidden: true, Header: "TRES_ALLOC", value: tresAlloc},
	{Name: "tres-alloc", Header: "TRES_ALLOC", value: tresAlloc},
	{Name: "tres-bind", Header: "TRES_BIND", value: func(j *Job, _ *Context) cell { return orNA(j.TresBind) }},
	{Name: "tres-freq", Header: "TRES_FREQ", value: func(j *Job, _ *Context) cell { return orNA(j.TresFreq) }},
	{Name: "tres-per-job", Header: "TRES_PER_JOB", value: func(j *Job, _ *Context) cell { return orNA(j.TresPerJob) }},
	{Name: "tres-per-node", Hidden: true, Header: "TRES_PER_NODE", value: tresPerNode},
	{Name: "tres-per-socket", Header: "TRES_PER_SOCKET", value: func(j *Job, _ *Context) cell { return orNA(j.TresPerSocket) }},
	{Name: "tres-per-task", Header: "TRES_PER_TASK", value: func(j *Job, _ *Context) cell { return orNA(j.TresPerTask) }},
	{Name: "UserId", Letter: 'U', Header: "UID", value: func(j *Job, _ *Context) cell { return text(utoa(j.UserID)) }},
	{Name: "UserName", Letter: 'u', Header: "USER", value: func(j *Job, _ *Context) cell { return text(UserName(j)) }},
	{Name: "Wait4Switch", Header: "WAIT4SWITCH", value: func(j *Job, _ *Context) cell { return secs(int64(j.Wait4Switch), true) }},
	{Name: "WCKey", Letter: 'w', Header: "WCKEY", value: func(j *Job, _ *Context) cell { return str(j.WCKey) }},
	{Name: "WorkDir", Letter: 'Z', Header: "WORK_DIR", value: func(j *Job, _ *Context) cell { return str(j.WorkDir) }},
}

// Fields returns squeue's job fields in Slurm's table order.
func Fields() []Field { return fields }

// LookupLetter finds the field a -o code names.
func LookupLetter(c byte) (*Field, bool) {
	for i := range fields {
		if fields[i].Letter == c && c != 0 {
			return &fields[i], true
		}
	}
	return nil, false
}

// LookupName finds the field a -O name names, case-insensitively.
func LookupName(name string) (*Field, bool) {
	for i := range fields {
		if equalFoldASCII(fields[i].Name, name) {
			return &fields[i], true
		}
	}
	return nil, false
}

// TimeUsed returns a job's elapsed run time in seconds at now, as squeue's
// job_time_used computes it: 0 while pending, the time before suspension
// while suspended, up to now while running, up to the end time otherwise.
func TimeUsed(j *Job, now time.Time) int64 {
	if j.StartTime == 0 || j.State.IsPending() {
		return 0
	}
	if j.State.IsSuspended() {
		return j.PreSusTime
	}
	end := j.EndTime
	if j.State.IsRunning() || j.EndTime == 0 {
		end = now.Unix()
	}
	if j.SuspendTime != 0 {
		return end - j.SuspendTime + j.PreSusTime
	}
	return end - j.StartTime
}

// UserName returns the job owner's name, or the numeric uid when the
// controller could not resolve it (uid_to_string).
func UserName(j *Job) string {
	if j.UserName == "" {
		return utoa(j.UserID)
	}
	return j.UserName
}

// reason is the pending reason squeue prints: the description when the
// controller set one (merged array task reasons), else the reason name.
func reason(j *Job) string {
	if j.StateDesc != "" {
		return j.StateDesc
	}
	return j.Reason
}

func reasonOrNull(j *Job) string {
	if r := reason(j); r != "" {
		return r
	}
	return "(null)"
}

func (c *Context) time(epoch int64) cell {
	if epoch == 0 {
		return text("N/A")
	}
	return text(timefmt.FormatEpoch(epoch, c.Now, c.TimeFormat))
}

func (c *Context) convert() Convert {
	if c.NoConvert {
		return ConvertNone
	}
	return ConvertExact
}

// sct prints a sockets/cores/threads count: "*" when unset.
func (c *Context) sct(v uint16, bufSize int) cell {
	if v == NoVal16 {
		return text("*")
	}
	return text(ConvertNumUnit(float64(v), UnitNone, c.convert(), bufSize))
}

func (c *Context) stdio(pattern, expanded string) cell {
	if c.ExpandPatterns {
		return str(expanded)
	}
	return str(pattern)
}

// idBufSize is squeue's FORMAT_STRING_SIZE: ids are built in a buffer of
// that many bytes, so longer ones lose their tail.
const idBufSize = 32

func (c *Context) jobArrayID(j *Job) cell {
	var s string
	switch {
	case j.ArrayTaskStr != "":
		s = utoa(j.ArrayJobID) + "_[" + j.ArrayTaskStr + "]"
		if c.FullArrayIDs {
			return whole(s)
		}
	case j.IsArrayTask():
		s = utoa(j.ArrayJobID) + "_" + utoa(j.ArrayTaskID)
	case j.HetJobID != 0:
		s = utoa(j.HetJobID) + "+" + utoa(j.HetJobOffset)
	default:
		s = utoa(j.JobID)
	}
	if len(s) > idBufSize-1 {
		s = s[:idBufSize-1]
	}
	return text(s)
}

// secs prints a duration as squeue's _print_secs does.
func secs(v int64, cut bool) cell {
	return cell{text: timefmt.FormatDuration(v), cut: cut}
}

// nodes prints a node list sorted and compressed as
// slurm_sort_node_list_str does; node lists are never cut.
func nodes(list string) cell {
	if list == "" {
		return whole("")
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		return whole(list)
	}
	seen := make(map[string]bool, len(names))
	uniq := names[:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			uniq = append(uniq, n)
		}
	}
	return whole(hostlist.CompressSorted(uniq))
}

func boolInt(b bool) cell {
	if b {
		return text("1")
	}
	return text("0")
}

// u16OrNA prints a 16-bit count, "N/A" when unset (or infinite when
// infiniteToo).
func u16OrNA(v uint16, infiniteToo bool) cell {
	if v == NoVal16 || (infiniteToo && v == Infinite16) {
		return text("N/A")
	}
	return text(strconv.Itoa(int(v)))
}

func orNA(s string) cell {
	if s == "" {
		return text("N/A")
	}
	return text(s)
}

// orNA2 is the federation fields' spelling of unset.
func orNA2(s string) cell {
	if s == "" {
		return text("NA")
	}
	return text(s)
}

func exit(e ExitCode) cell {
	if !e.Valid() {
		return cell{omit: true}
	}
	return text(e.String())
}

func cpusPerTask(j *Job, _ *Context) cell { return u16OrNA(j.CPUsPerTask, false) }

func tresPerNode(j *Job, _ *Context) cell { return orNA(j.TresPerNode) }

func tresAlloc(j *Job, _ *Context) cell {
	switch {
	case j.TresAlloc != "":
		return text(j.TresAlloc)
	case j.TresReq != "":
		return text(j.TresReq)
	}
	return text("N/A")
}

func hetJobID(j *Job, _ *Context) cell {
	if j.HetJobID == 0 {
		return text("N/A")
	}
	return text(utoa(j.HetJobID))
}

func hetJobIDSet(j *Job, _ *Context) cell {
	if j.HetJobID == 0 {
		return text("N/A")
	}
	return str(j.HetJobIDSet)
}

func hetJobOffset(j *Job, _ *Context) cell {
	if j.HetJobID == 0 {
		return text("N/A")
	}
	return text(utoa(j.HetJobOffset))
}

func overSubscribeCell(j *Job, _ *Context) cell { return text(j.OverSubscribe) }

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
