package scontrol

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// updateError is a refused update request, printed the way scontrol
// prints it: with "scontrol: error: " (Slurm's error()) or verbatim
// (scontrol's own fprintf messages, which may span lines).
type updateError struct {
	msg      string
	prefixed bool
}

func (e *updateError) Error() string { return e.msg }

func errorMsg(format string, args ...any) *updateError {
	return &updateError{msg: fmt.Sprintf(format, args...), prefixed: true}
}

func rawMsg(format string, args ...any) *updateError {
	return &updateError{msg: fmt.Sprintf(format, args...)}
}

func (c *cmd) report(e *updateError) {
	c.exitCode = 1
	if e.prefixed {
		fmt.Fprintf(c.env.Stderr, "%s: error: %s\n", c.prog, e.msg)
		return
	}
	fmt.Fprint(c.env.Stderr, e.msg)
}

// update is scontrol's _update_it: the words name the entity to update
// (JobId=, NodeName=...) and the changes.
func (c *cmd) update(ctx context.Context, argv []string) {
	var job, step, resv, node, part, debug bool
	for i := 0; i < len(argv); i++ {
		tag := argv[i]
		if k, _, ok := strings.Cut(tag, "="); ok {
			tag = strings.TrimRight(k, "+-")
		} else {
			i++
		}
		switch {
		case abbrev(tag, "NodeName", 3):
			node = true
		case abbrev(tag, "PartitionName", 3):
			part = true
		case abbrev(tag, "JobId", 3), abbrev(tag, "JobNAME", 3):
			job = true
		case abbrev(tag, "StepId", 4):
			step = true
		case abbrev(tag, "ReservationName", 3):
			resv = true
		case abbrev(tag, "SlurmctldDebug", 2), abbrev(tag, "SuspendExcNodes", 11),
			abbrev(tag, "SuspendExcParts", 11), abbrev(tag, "SuspendExcStates", 11):
			debug = true
		}
	}
	switch {
	case job:
		c.updateJob(ctx, argv)
	case node:
		c.updateNode(ctx, argv)
	case resv:
		c.updateReservation(ctx, argv)
	case part:
		c.setPartition(ctx, argv, false)
	case step, debug:
		c.errorf("this update is not supported by this controller")
	default:
		c.exitCode = 1
		fmt.Fprintln(c.env.Stderr, "No valid entity in update command")
		fmt.Fprint(c.env.Stderr, "Input line must include \"NodeName\", ")
		fmt.Fprintln(c.env.Stderr, "\"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"")
	}
}

// jobUpdate is a parsed "update JobId=..." request.
type jobUpdate struct {
	// JobID is the JobId= value as written (a list of ids, ranges and
	// array task specifications); empty when the job is named instead.
	JobID string
	// Name is Name=/JobName=, which also selects jobs when JobID is empty.
	Name string
	// UID restricts name lookups to one user (UserID=); -1 when unset.
	UID int64
	// Desc is the request body sent for every selected job.
	Desc v0044.V0044JobDescMsg
	// Changes counts the settings to change.
	Changes int
}

// jobUpdateEnv is what parsing needs from outside: the clock for
// StartTime=, and the current limit of a job for TimeLimit=+N/-N.
type jobUpdateEnv struct {
	now     time.Time
	jobTime func(jobID string) (uint64, *updateError)
}

// jobKey is one key of "scontrol update job", matched as scontrol does
// (a case-insensitive prefix at least min bytes long, in table order).
type jobKey struct {
	name string
	min  int
	set  func(u *jobUpdate, val string, a *keyArg) *updateError
}

// keyArg carries the parts of the current word the setters need.
type keyArg struct {
	word    string
	tag     string
	addInfo string // "+" or "-" for Key+=/Key-=, "" otherwise
	env     jobUpdateEnv
}

func setStr(dst *v0044.OptString) func(*jobUpdate, string, *keyArg) *updateError {
	return func(u *jobUpdate, val string, _ *keyArg) *updateError {
		*dst = v0044.NewOptString(val)
		u.Changes++
		return nil
	}
}

// parseUint parses Slurm's parse_uint32/parse_uint16: decimal digits only,
// within bits.
func parseUint(val string, bits int) (uint64, bool) {
	if val == "" {
		return 0, false
	}
	for i := 0; i < len(val); i++ {
		if val[i] < '0' || val[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(val, 10, bits)
	if err != nil {
		return 0, false
	}
	// Slurm reserves the top values (NO_VAL, INFINITE) of each width.
	if bits == 16 && v >= noVal16 || bits == 32 && v >= noVal {
		return 0, false
	}
	return v, true
}

func u32Struct(v uint64) v0044.OptV0044Uint32NoValStruct {
	return v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
		Set:      v0044.NewOptBool(true),
		Infinite: v0044.NewOptBool(false),
		Number:   v0044.NewOptInt32(int32(uint32(v))),
	})
}

func infiniteU32() v0044.OptV0044Uint32NoValStruct {
	return v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
		Set:      v0044.NewOptBool(false),
		Infinite: v0044.NewOptBool(true),
	})
}

func u64Struct(v uint64) v0044.OptV0044Uint64NoValStruct {
	return v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
		Set:      v0044.NewOptBool(true),
		Infinite: v0044.NewOptBool(false),
		Number:   v0044.NewOptInt64(int64(v)),
	})
}

// boolish parses the YES/NO/number values of Reboot=, Contiguous= and
// OverSubscribe=.
func boolish(val string) (bool, bool) {
	switch {
	case val != "" && abbrev(val, "YES", 1):
		return true, true
	case val != "" && abbrev(val, "NO", 1):
		return false, true
	}
	n, ok := parseUint(val, 16)
	return n != 0, ok
}

// limitMinutes parses a time limit as time_str2mins does.
func limitMinutes(val string) (uint64, bool) {
	l, err := timefmt.ParseLimit(val)
	if err != nil {
		return 0, false
	}
	if l.Infinite {
		return infinite, true
	}
	return uint64(l.Minutes), true
}

// nodeCount parses NumNodes= as verify_node_count does: "N", "N-M" or a
// list ("1,4-6"), with k/m suffixes on plain counts.
func nodeCount(val string) (lo, hi int64, err *updateError) {
	toNodes := func(s string) (int64, bool) {
		s = strings.TrimSpace(s)
		mult := int64(1)
		switch {
		case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
			mult, s = 1024, s[:len(s)-1]
		case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
			mult, s = 1024*1024, s[:len(s)-1]
		}
		n, e := strconv.ParseInt(s, 10, 32)
		if e != nil || n < 0 || n*mult > math.MaxInt32 {
			return 0, false
		}
		return n * mult, true
	}
	if strings.ContainsAny(val, ",:") {
		lo, hi = math.MaxInt32, -1
		for _, tok := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == '-' || r == ':' }) {
			n, e := strconv.ParseInt(tok, 10, 32)
			if e != nil || n < 0 || n >= 1<<16 {
				return 0, 0, errorMsg("\"%s\" is not a valid node count", tok)
			}
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi < 0 {
			return 0, 0, errorMsg("\"%s\" is not a valid node count", val)
		}
		return lo, hi, nil
	}
	if a, b, ok := strings.Cut(val, "-"); ok {
		l, ok1 := toNodes(a)
		if !ok1 {
			return 0, 0, errorMsg("\"%s\" is not a valid node count", a)
		}
		h, ok2 := toNodes(b)
		if !ok2 {
			return 0, 0, errorMsg("\"%s\" is not a valid node count", b)
		}
		return l, h, nil
	}
	n, ok := toNodes(val)
	if !ok {
		return 0, 0, errorMsg("\"%s\" is not a valid node count", val)
	}
	return n, n, nil
}

// mailTypes parses MailType= as parse_mail_type does; ok is false for a
// value without any known type.
func mailTypes(val string) ([]v0044.V0044JobDescMsgMailTypeItem, bool) {
	set := map[v0044.V0044JobDescMsgMailTypeItem]bool{}
	for _, tok := range strings.Split(val, ",") {
		switch strings.ToUpper(tok) {
		case "NONE":
			return []v0044.V0044JobDescMsgMailTypeItem{}, true
		case "ARRAY_TASKS":
			set[v0044.V0044JobDescMsgMailTypeItemARRAYTASKS] = true
		case "BEGIN":
			set[v0044.V0044JobDescMsgMailTypeItemBEGIN] = true
		case "END":
			set[v0044.V0044JobDescMsgMailTypeItemEND] = true
		case "FAIL":
			set[v0044.V0044JobDescMsgMailTypeItemFAIL] = true
		case "INVALID_DEPEND":
			set[v0044.V0044JobDescMsgMailTypeItemINVALIDDEPENDENCY] = true
		case "REQUEUE":
			set[v0044.V0044JobDescMsgMailTypeItemREQUEUE] = true
		case "ALL":
			for _, t := range []v0044.V0044JobDescMsgMailTypeItem{
				v0044.V0044JobDescMsgMailTypeItemINVALIDDEPENDENCY, v0044.V0044JobDescMsgMailTypeItemBEGIN,
				v0044.V0044JobDescMsgMailTypeItemEND, v0044.V0044JobDescMsgMailTypeItemFAIL,
				v0044.V0044JobDescMsgMailTypeItemREQUEUE, v0044.V0044JobDescMsgMailTypeItemSTAGEOUT,
			} {
				set[t] = true
			}
		case "STAGE_OUT":
			set[v0044.V0044JobDescMsgMailTypeItemSTAGEOUT] = true
		case "TIME_LIMIT":
			set[v0044.V0044JobDescMsgMailTypeItemTIME100] = true
		case "TIME_LIMIT_90":
			set[v0044.V0044JobDescMsgMailTypeItemTIME90] = true
		case "TIME_LIMIT_80":
			set[v0044.V0044JobDescMsgMailTypeItemTIME80] = true
		case "TIME_LIMIT_50":
			set[v0044.V0044JobDescMsgMailTypeItemTIME50] = true
		}
	}
	if len(set) == 0 {
		return nil, false
	}
	// Keep the spec's order so that requests are reproducible.
	var out []v0044.V0044JobDescMsgMailTypeItem
	for _, t := range []v0044.V0044JobDescMsgMailTypeItem{
		v0044.V0044JobDescMsgMailTypeItemBEGIN, v0044.V0044JobDescMsgMailTypeItemEND,
		v0044.V0044JobDescMsgMailTypeItemFAIL, v0044.V0044JobDescMsgMailTypeItemREQUEUE,
		v0044.V0044JobDescMsgMailTypeItemTIME100, v0044.V0044JobDescMsgMailTypeItemTIME90,
		v0044.V0044JobDescMsgMailTypeItemTIME80, v0044.V0044JobDescMsgMailTypeItemTIME50,
		v0044.V0044JobDescMsgMailTypeItemSTAGEOUT, v0044.V0044JobDescMsgMailTypeItemARRAYTASKS,
		v0044.V0044JobDescMsgMailTypeItemINVALIDDEPENDENCY,
	} {
		if set[t] {
			out = append(out, t)
		}
	}
	return out, true
}

// jobKeys is scontrol_update_job's table of keys, in its matching order.
// Keys Slurm accepts but the v0.0.44 job description cannot carry are left
// out, so they are refused as unsupported.
var jobKeys = []jobKey{
	{"JobId", 3, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		u.JobID = val
		return nil
	}},
	{"AdminComment", 6, func(u *jobUpdate, val string, a *keyArg) *updateError {
		if a.addInfo != "" {
			return errorMsg("Invalid syntax, AdminComment can not be added/subtracted from.")
		}
		u.Desc.AdminComment = v0044.NewOptString(val)
		u.Changes++
		return nil
	}},
	{"SiteFactor", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n := atoll(val)
		if n > nicePeak || n < -nicePeak {
			return errorMsg("SiteFactor value out of range (+/- %d). Value ignored", nicePeak)
		}
		u.Desc.SiteFactor = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"ArrayTaskThrottle", 10, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		if atoll(val) < 0 {
			return errorMsg("Invalid ArrayTaskThrottle value")
		}
		u.Desc.Array = v0044.NewOptString(val)
		u.Changes++
		return nil
	}},
	{"Comment", 3, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Comment)(u, val, a) }},
	{"Clusters", 8, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Clusters)(u, val, a) }},
	{"ClusterFeatures", 8, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.ClusterConstraint)(u, val, a)
	}},
	{"DelayBoot", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		secs, inf, err := timefmt.ParseSeconds(val)
		if err != nil || inf || secs > math.MaxInt32 {
			return errorMsg("Invalid DelayBoot value")
		}
		u.Desc.DelayBoot = v0044.NewOptInt32(int32(secs))
		u.Changes++
		return nil
	}},
	{"Extra", 3, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Extra)(u, val, a) }},
	{"TimeLimit", 5, setTimeLimit},
	{"TimeMin", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		m, ok := limitMinutes(val)
		if !ok {
			return errorMsg("Invalid TimeMin value")
		}
		if m == infinite {
			u.Desc.TimeMinimum = infiniteU32()
		} else {
			u.Desc.TimeMinimum = u32Struct(m)
		}
		u.Changes++
		return nil
	}},
	{"Priority", 2, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 32)
		if !ok {
			return errorMsg("Invalid Priority value: %s", val)
		}
		// As slurmrestd's own clients send it (job_update_priority_zero).
		u.Desc.Priority = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
			Set:    v0044.NewOptBool(true),
			Number: v0044.NewOptInt32(int32(uint32(n))),
		})
		u.Changes++
		return nil
	}},
	{"Nice", 2, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n := atoll(val)
		if n > nicePeak || n < -nicePeak {
			return errorMsg("Nice value out of range (+/- %d). Value ignored", nicePeak)
		}
		u.Desc.Nice = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"CPUsPerTask", 9, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid CPUsPerTask value: %s", val)
		}
		u.Desc.CpusPerTask = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"CpusPerTres", 9, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.CpusPerTres)(u, val, a) }},
	{"NumCPUs", 6, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		lo, hi, ok := cpuRange(val)
		if !ok {
			return errorMsg("Invalid NumCPUs value: %s", val)
		}
		u.Desc.MinimumCpus = v0044.NewOptInt32(int32(lo))
		if hi != 0 {
			u.Desc.MaximumCpus = v0044.NewOptInt32(int32(hi))
		}
		u.Changes++
		return nil
	}},
	{"NumTasks", 8, setTasks},
	{"ReqProcs", 8, setTasks},
	{"Requeue", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid Requeue value: %s", val)
		}
		u.Desc.Requeue = v0044.NewOptBool(n != 0)
		u.Changes++
		return nil
	}},
	{"ReqNodes", 8, setNodes},
	{"NumNodes", 8, setNodes},
	{"ReqSockets", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid ReqSockets value: %s", val)
		}
		u.Desc.SocketsPerNode = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"TasksPerNode", 2, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid TasksPerNode value: %s", val)
		}
		u.Desc.TasksPerNode = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"ReqThreads", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid ReqThreads value: %s", val)
		}
		u.Desc.ThreadsPerCore = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"MinCPUsNode", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid MinCPUsNode value: %s", val)
		}
		u.Desc.MinimumCpusPerNode = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"MinMemoryNode", 10, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 64)
		if !ok {
			return errorMsg("Invalid MinMemoryNode value: %s", val)
		}
		u.Desc.MemoryPerNode = u64Struct(n)
		u.Changes++
		return nil
	}},
	{"MinMemoryCPU", 10, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 64)
		if !ok {
			return errorMsg("Invalid MinMemoryCPU value: %s", val)
		}
		u.Desc.MemoryPerCPU = u64Struct(n)
		u.Changes++
		return nil
	}},
	{"MinTmpDiskNode", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 32)
		if !ok || n > math.MaxInt32 {
			return errorMsg("Invalid MinTmpDiskNode value: %s", val)
		}
		u.Desc.TemporaryDiskPerNode = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"Partition", 2, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Partition)(u, val, a) }},
	{"QOS", 2, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Qos)(u, val, a) }},
	{"ReservationName", 3, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Reservation)(u, val, a) }},
	{"Name", 2, setName},
	{"JobName", 4, setName},
	{"WCKey", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Wckey)(u, val, a) }},
	{"StdErr", 6, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.StandardError)(u, val, a)
	}},
	{"StdIn", 5, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.StandardInput)(u, val, a)
	}},
	{"StdOut", 6, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.StandardOutput)(u, val, a)
	}},
	{"Switches", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		num, wait, hasWait := strings.Cut(val, "@")
		u.Desc.RequiredSwitches = u32Struct(uint64(uint32(atoll(num))))
		if hasWait {
			if m, ok := limitMinutes(wait); ok && m != infinite && m*60 <= math.MaxInt32 {
				u.Desc.WaitForSwitch = v0044.NewOptInt32(int32(m * 60))
			}
		}
		u.Changes++
		return nil
	}},
	{"wait-for-switch", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 32)
		if !ok || n > math.MaxInt32 {
			return errorMsg("Invalid wait-for-switch value: %s", val)
		}
		u.Desc.WaitForSwitch = v0044.NewOptInt32(int32(n))
		u.Changes++
		return nil
	}},
	{"OverSubscribe", 2, setShared},
	{"Shared", 2, setShared},
	{"Contiguous", 3, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		b, ok := boolish(val)
		if !ok {
			return errorMsg("Invalid Contiguous value: %s", val)
		}
		u.Desc.Contiguous = v0044.NewOptBool(b)
		u.Changes++
		return nil
	}},
	{"CoreSpec", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		if val == "-1" || val == "*" {
			u.Desc.CoreSpecification = v0044.NewOptInt32(infinite16)
		} else if n, ok := parseUint(val, 16); ok {
			u.Desc.CoreSpecification = v0044.NewOptInt32(int32(n))
		} else {
			return errorMsg("Invalid CoreSpec value: %s", val)
		}
		u.Changes++
		return nil
	}},
	{"MemPerTres", 5, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.MemoryPerTres)(u, val, a)
	}},
	{"ThreadSpec", 4, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		if val == "-1" || val == "*" {
			u.Desc.ThreadSpecification = v0044.NewOptInt32(infinite16)
		} else if n, ok := parseUint(val, 16); ok {
			u.Desc.ThreadSpecification = v0044.NewOptInt32(int32(n))
		} else {
			return errorMsg("Invalid ThreadSpec value: %s", val)
		}
		u.Changes++
		return nil
	}},
	{"TresBind", 5, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.TresBind)(u, val, a) }},
	{"TresFreq", 5, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.TresFreq)(u, val, a) }},
	{"TresPerJob", 8, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.TresPerJob)(u, val, a) }},
	{"TresPerNode", 8, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		appendTresPerNode(u, val)
		return nil
	}},
	{"TresPerSocket", 8, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.TresPerSocket)(u, val, a)
	}},
	{"TresPerTask", 8, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.TresPerTask)(u, val, a) }},
	{"ExcNodeList", 3, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		u.Desc.ExcludedNodes = v0044.V0044CsvString{val}
		u.Changes++
		return nil
	}},
	{"NodeList", 8, setReqNodes},
	{"ReqNodeList", 8, setReqNodes},
	{"Features", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Constraints)(u, val, a) }},
	{"Prefer", 3, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Prefer)(u, val, a) }},
	{"Gres", 2, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		var parts []string
		for _, g := range strings.Split(val, ",") {
			if g != "" && !strings.HasPrefix(g, "gres/") && !strings.HasPrefix(g, "license/") {
				g = "gres/" + g
			}
			parts = append(parts, g)
		}
		appendTresPerNode(u, strings.Join(parts, ","))
		return nil
	}},
	{"Account", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Account)(u, val, a) }},
	{"BurstBuffer", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.BurstBuffer)(u, val, a) }},
	{"Dependency", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Dependency)(u, val, a) }},
	{"Licenses", 1, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.Licenses)(u, val, a) }},
	{"EligibleTime", 2, setBegin},
	{"StartTime", 2, setBegin},
	{"EndTime", 2, func(u *jobUpdate, val string, a *keyArg) *updateError {
		t, err := timefmt.ParseTime(val, a.env.now)
		if err != nil {
			u.Desc.EndTime = v0044.NewOptInt64(0)
		} else {
			u.Desc.EndTime = v0044.NewOptInt64(t.Unix())
		}
		u.Changes++
		return nil
	}},
	{"Reboot", 3, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		b, ok := boolish(val)
		if !ok {
			return errorMsg("Invalid reboot value: %s", val)
		}
		u.Desc.Reboot = v0044.NewOptBool(b)
		u.Changes++
		return nil
	}},
	{"UserID", 3, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		n, ok := parseUint(val, 32)
		if !ok {
			return rawMsg("Invalid UserID: %s\nRequest aborted\n", val)
		}
		u.UID = int64(n)
		return nil
	}},
	{"Deadline", 3, func(u *jobUpdate, val string, a *keyArg) *updateError {
		if t, err := timefmt.ParseTime(val, a.env.now); err == nil && t.Unix() != 0 {
			u.Desc.Deadline = v0044.NewOptInt64(t.Unix())
			u.Changes++
		}
		return nil
	}},
	{"WorkDir", 2, func(u *jobUpdate, val string, a *keyArg) *updateError {
		return setStr(&u.Desc.CurrentWorkingDirectory)(u, val, a)
	}},
	{"MailType", 5, func(u *jobUpdate, val string, _ *keyArg) *updateError {
		types, ok := mailTypes(val)
		if !ok {
			return rawMsg("Invalid MailType: %s\n", val)
		}
		u.Desc.MailType = types
		u.Changes++
		return nil
	}},
	{"MailUser", 5, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.MailUser)(u, val, a) }},
	{"MCSLabel", 4, func(u *jobUpdate, val string, a *keyArg) *updateError { return setStr(&u.Desc.McsLabel)(u, val, a) }},
}

// nicePeak is NICE_OFFSET - 3, the largest |Nice| scontrol accepts.
const nicePeak = 0x80000000 - 3

// atoll is strtoll(val, NULL, 10): leading digits with an optional sign,
// 0 when there are none.
func atoll(val string) int64 {
	i := 0
	for i < len(val) && (val[i] == ' ' || val[i] == '\t') {
		i++
	}
	j := i
	if j < len(val) && (val[j] == '+' || val[j] == '-') {
		j++
	}
	for j < len(val) && val[j] >= '0' && val[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(val[i:j], 10, 64)
	if err != nil {
		if strings.HasPrefix(val[i:j], "-") && len(val[i:j]) > 1 {
			return math.MinInt64
		}
		if len(val[i:j]) > 1 || (j > i && val[i] != '+' && val[i] != '-') {
			return math.MaxInt64
		}
		return 0
	}
	return n
}

func cpuRange(val string) (lo, hi int64, ok bool) {
	a, b, isRange := strings.Cut(val, "-")
	l, err := strconv.ParseInt(a, 10, 32)
	if err != nil || l <= 0 {
		return 0, 0, false
	}
	if !isRange {
		return l, 0, true
	}
	h, err := strconv.ParseInt(b, 10, 32)
	if err != nil || h < l {
		return 0, 0, false
	}
	return l, h, true
}

func setTasks(u *jobUpdate, val string, _ *keyArg) *updateError {
	n, ok := parseUint(val, 32)
	if !ok || n > math.MaxInt32 {
		return errorMsg("Invalid NumTasks value: %s", val)
	}
	u.Desc.Tasks = v0044.NewOptInt32(int32(n))
	u.Changes++
	return nil
}

func setNodes(u *jobUpdate, val string, _ *keyArg) *updateError {
	switch {
	case val == "0":
		u.Desc.MinimumNodes = v0044.NewOptInt32(0)
	case strings.EqualFold(val, "ALL"):
		u.Desc.MinimumNodes = v0044.NewOptInt32(-1) // INFINITE
	default:
		lo, hi, err := nodeCount(val)
		if err != nil {
			return err
		}
		u.Desc.MinimumNodes = v0044.NewOptInt32(int32(lo))
		u.Desc.MaximumNodes = v0044.NewOptInt32(int32(hi))
	}
	u.Changes++
	return nil
}

func setName(u *jobUpdate, val string, _ *keyArg) *updateError {
	u.Name = val
	u.Desc.Name = v0044.NewOptString(val)
	u.Changes++
	return nil
}

func setShared(u *jobUpdate, val string, _ *keyArg) *updateError {
	switch {
	case val != "" && abbrev(val, "YES", 1):
		u.Desc.Shared = []v0044.V0044JobDescMsgSharedItem{v0044.V0044JobDescMsgSharedItemOversubscribe}
	case val != "" && abbrev(val, "NO", 1):
		u.Desc.Shared = []v0044.V0044JobDescMsgSharedItem{v0044.V0044JobDescMsgSharedItemNone}
	default:
		n, ok := parseUint(val, 16)
		if !ok {
			return errorMsg("Invalid OverSubscribe value: %s", val)
		}
		item := v0044.V0044JobDescMsgSharedItemOversubscribe
		switch n {
		case 0:
			item = v0044.V0044JobDescMsgSharedItemNone
		case 2:
			item = v0044.V0044JobDescMsgSharedItemUser
		case 3:
			item = v0044.V0044JobDescMsgSharedItemMcs
		case 4:
			item = v0044.V0044JobDescMsgSharedItemTopo
		}
		u.Desc.Shared = []v0044.V0044JobDescMsgSharedItem{item}
	}
	u.Changes++
	return nil
}

func setReqNodes(u *jobUpdate, val string, _ *keyArg) *updateError {
	u.Desc.RequiredNodes = v0044.V0044CsvString{val}
	u.Changes++
	return nil
}

func setBegin(u *jobUpdate, val string, a *keyArg) *updateError {
	t, err := timefmt.ParseTime(val, a.env.now)
	if err != nil || t.Unix() == 0 {
		return nil
	}
	if t.Before(a.env.now) {
		t = a.env.now
	}
	u.Desc.BeginTime = u64Struct(uint64(t.Unix()))
	u.Changes++
	return nil
}

func appendTresPerNode(u *jobUpdate, val string) {
	if cur := u.Desc.TresPerNode.Or(""); u.Desc.TresPerNode.Set {
		val = cur + "," + val
	}
	u.Desc.TresPerNode = v0044.NewOptString(val)
	u.Changes++
}

// setTimeLimit handles TimeLimit=, TimeLimit=+N/-N and TimeLimit+=/-=N,
// the last two relative to the job's current limit.
func setTimeLimit(u *jobUpdate, val string, a *keyArg) *updateError {
	add := a.addInfo
	if val != "" && (val[0] == '+' || val[0] == '-') {
		if add != "" {
			return errorMsg("Invalid syntax, variations of +=- are not accepted.")
		}
		add, val = val[:1], val[1:]
	}
	limit, ok := limitMinutes(val)
	if !ok {
		return errorMsg("Invalid TimeLimit value")
	}
	if add != "" {
		if u.JobID == "" {
			return errorMsg("JobId must precede TimeLimit increment or decrement")
		}
		if a.env.jobTime == nil {
			return errorMsg("Could not load state information for job %s", u.JobID)
		}
		cur, err := a.env.jobTime(u.JobID)
		if err != nil {
			return err
		}
		if cur == infinite {
			return errorMsg("Cannot increment/decrement TimeLimit when set to UNLIMITED.")
		}
		switch {
		case add == "+":
			limit += cur
		case limit > cur:
			return errorMsg("TimeLimit decrement larger than current time limit (%d > %d)", limit, cur)
		default:
			limit = cur - limit
		}
		a.addInfo = ""
	}
	if limit == infinite {
		u.Desc.TimeLimit = infiniteU32()
	} else {
		u.Desc.TimeLimit = u32Struct(limit)
	}
	u.Changes++
	return nil
}

// parseJobUpdate parses the words of "update JobId=..." as
// scontrol_update_job does, without sending anything.
func parseJobUpdate(argv []string, env jobUpdateEnv) (*jobUpdate, *updateError) {
	u := &jobUpdate{UID: -1}
	for i := 0; i < len(argv); i++ {
		word := argv[i]
		tag, val, hasEq := strings.Cut(word, "=")
		a := &keyArg{word: word, env: env}
		switch {
		case hasEq:
			if tag != "" && (tag[len(tag)-1] == '+' || tag[len(tag)-1] == '-') {
				a.addInfo = tag[len(tag)-1:]
				tag = tag[:len(tag)-1]
			}
		case abbrev(word, "Nice", 2):
			u.Desc.Nice = v0044.NewOptInt32(100)
			u.Changes++
			continue
		case abbrev(word, "ResetAccrueTime", 3):
			// v0.0.44 job descriptions have no RESET_ACCRUE_TIME flag.
			return nil, rawMsg("Update of this parameter is not supported: %s\nRequest aborted\n", word)
		case i+1 < len(argv):
			tag, val = word, argv[i+1]
			i++
		default:
			return nil, rawMsg("Invalid input: %s\nRequest aborted\n", word)
		}
		a.tag = tag
		var key *jobKey
		for k := range jobKeys {
			if abbrev(tag, jobKeys[k].name, jobKeys[k].min) {
				key = &jobKeys[k]
				break
			}
		}
		if key == nil {
			return nil, rawMsg("Update of this parameter is not supported: %s\nRequest aborted\n", word)
		}
		if err := key.set(u, val, a); err != nil {
			return nil, err
		}
		if a.addInfo != "" {
			return nil, errorMsg("Option %s does not accept [+|-]= syntax", word)
		}
	}
	if u.Changes == 0 {
		return nil, rawMsg("No changes specified\n")
	}
	return u, nil
}

// expandJobIDs splits a job id list as scontrol's _is_job_id and
// _next_job_id do: ids separated by commas or blanks, "[1-3]" ranges of
// job ids, and array task specifications ("12_[1-3]" is one id "12_1-3").
// ok is false for anything else.
func expandJobIDs(s string) ([]string, bool) {
	var toks []string
	depth, start := 0, 0
	plus, under := false, false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '+':
			if plus {
				return nil, false
			}
			plus = true
		case ch == '_':
			if under {
				return nil, false
			}
			under = true
		case ch == '[':
			depth++
		case ch == ']':
			depth--
			if depth < 0 {
				return nil, false
			}
		case ch == '-':
			if depth == 0 && !under {
				return nil, false
			}
		case ch == ',' || ch == ' ':
			if depth == 0 {
				toks = append(toks, s[start:i])
				start = i + 1
				plus, under = false, false
			}
		case ch < '0' || ch > '9':
			return nil, false
		}
	}
	if depth != 0 {
		return nil, false
	}
	toks = append(toks, s[start:])
	var out []string
	for _, tok := range toks {
		if tok == "" {
			continue
		}
		task := ""
		jobPart := tok
		if u := strings.IndexByte(tok, '_'); u >= 0 {
			jobPart, task = tok[:u], tok[u+1:]
			if strings.HasPrefix(task, "[") {
				task = strings.TrimPrefix(task, "[")
				if e := strings.IndexByte(task, ']'); e >= 0 {
					task = task[:e]
				}
			}
		}
		ids := []string{jobPart}
		if strings.Contains(jobPart, "[") {
			names, err := hostlist.Expand(jobPart)
			if err != nil || len(names) == 0 {
				return nil, false
			}
			ids = names
		}
		if strings.Contains(tok, "_") && (strings.Trim(task, "0123456789,-") != "" || !strings.ContainsAny(task, "0123456789")) {
			return nil, false
		}
		for _, id := range ids {
			// The controller would refuse an id without a leading job
			// number ("_", "+1"); refuse it here with the same message.
			if !validJobNumber(id) {
				return nil, false
			}
			if task != "" {
				id += "_" + task
			}
			out = append(out, id)
		}
	}
	return out, len(out) > 0
}

// validJobNumber reports whether s is a job number with an optional
// heterogeneous component ("12", "12+1").
func validJobNumber(s string) bool {
	job, het, hasHet := strings.Cut(s, "+")
	digits := func(p string) bool { return p != "" && strings.Trim(p, "0123456789") == "" }
	return digits(job) && (!hasHet || digits(het))
}

// updateJob runs "update JobId=... <changes>".
func (c *cmd) updateJob(ctx context.Context, argv []string) {
	env := jobUpdateEnv{now: c.now(), jobTime: func(id string) (uint64, *updateError) { return c.jobTimeLimit(ctx, id) }}
	u, perr := parseJobUpdate(argv, env)
	if perr != nil {
		c.report(perr)
		return
	}
	if u.JobID == "" && u.Name != "" {
		ids, err := c.jobNameToIDs(ctx, u.Name, u.UID)
		if err != nil {
			c.report(err)
			return
		}
		u.JobID = ids
	}
	if u.JobID == "" {
		c.report(errorMsg("No job ID specified"))
		return
	}
	ids, ok := expandJobIDs(u.JobID)
	if !ok {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "Invalid job id specified for job %s\n", u.JobID)
		}
		return
	}
	for _, id := range ids {
		c.postJob(ctx, id, u.Desc)
	}
}

// postJob sends one job update and reports failures as scontrol does
// ("<slurm_strerror> for job <id>", or per array task).
func (c *cmd) postJob(ctx context.Context, id string, desc v0044.V0044JobDescMsg) bool {
	res, err := c.env.Client.SlurmV0044PostJob(ctx, v0044.NewOptV0044JobDescMsg(desc), v0044.SlurmV0044PostJobParams{JobID: id})
	var re *restError
	var results v0044.V0044JobArrayResponseArray
	if err != nil {
		var failed bool
		re, failed = fromTransport(err)
		if !failed {
			return true
		}
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiJobPostResponse:
			if e := fromErrors(r.Errors, 200); e != nil && e.Code != 0 {
				re = e
			}
			results = r.Results
		case *v0044.V0044OpenapiJobPostResponseStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		default:
			re = fromStatus(0)
		}
	}
	if re != nil {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "%s for job %s\n", re.Message, id)
		}
		return false
	}
	ok := true
	for _, r := range results {
		code := r.ErrorCode.Or(0)
		why := r.Why.Or("")
		if code == 0 {
			if why != "" && c.quiet == 0 {
				fmt.Fprintf(c.env.Stdout, "%s: %s\n", resultID(r), why)
			}
			continue
		}
		ok = false
		c.exitCode = 1
		if c.quiet == 1 {
			continue
		}
		msg := r.Error.Or("")
		if msg == "" {
			msg = fmt.Sprintf("Unknown error %d", code)
		}
		if why != "" {
			fmt.Fprintf(c.env.Stderr, "%s: %s (%s)\n", resultID(r), msg, why)
		} else {
			fmt.Fprintf(c.env.Stderr, "%s: %s\n", resultID(r), msg)
		}
	}
	return ok
}

func resultID(r v0044.V0044JobArrayResponseMsgEntry) string {
	if s := r.StepID.Or(""); s != "" {
		return s
	}
	return strconv.Itoa(int(r.JobID.Or(0)))
}

// jobTimeLimit returns a job's current time limit for TimeLimit=+N, as
// scontrol's _get_job_time does.
func (c *cmd) jobTimeLimit(ctx context.Context, idStr string) (uint64, *updateError) {
	jobPart, taskPart, hasTask := strings.Cut(idStr, "_")
	jobID, err := strconv.ParseUint(jobPart, 10, 32)
	var taskID uint64
	if err == nil && hasTask {
		taskID, err = strconv.ParseUint(taskPart, 10, 32)
	}
	if err != nil {
		return 0, errorMsg("Invalid job ID %s", idStr)
	}
	jobs, re := c.loadJobs(ctx, jobID)
	if re != nil {
		return 0, errorMsg("Could not load state information for job %s: %s", idStr, re.Message)
	}
	switch {
	case len(jobs) == 0:
		return 0, errorMsg("Job ID %s not found", idStr)
	case len(jobs) == 1:
		return uint64(jobs[0].TimeLimit), nil
	case !hasTask:
		return 0, errorMsg("TimeLimit increment/decrement not supported for job arrays")
	}
	for i := range jobs {
		j := &jobs[i]
		if uint64(j.ArrayJobID) != jobID {
			continue
		}
		if j.HoldsTask(uint32(taskID)) {
			return uint64(j.TimeLimit), nil
		}
	}
	return 0, errorMsg("Job ID %s not found", idStr)
}

// jobNameToIDs is scontrol's _job_name2id: the ids of the jobs with a
// name (and owner, when uid >= 0).
func (c *cmd) jobNameToIDs(ctx context.Context, name string, uid int64) (string, *updateError) {
	jobs, re := c.loadJobs(ctx, 0)
	if re != nil {
		return "", errorMsg("Could not load state information: %s", re.Message)
	}
	if len(jobs) == 0 {
		return "", errorMsg("JobName %s not found", name)
	}
	var ids []string
	for i := range jobs {
		j := &jobs[i]
		if uid >= 0 && int64(j.UserID) != uid {
			continue
		}
		if j.Name != name {
			continue
		}
		if j.IsArrayTask() {
			ids = append(ids, fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID))
		} else {
			ids = append(ids, strconv.FormatUint(uint64(j.JobID), 10))
		}
	}
	if len(ids) == 0 {
		if uid < 0 {
			return "", errorMsg("No jobs with name '%s'", name)
		}
		return "", errorMsg("No jobs with user ID %d and name '%s'", uid, name)
	}
	return strings.Join(ids, ","), nil
}
