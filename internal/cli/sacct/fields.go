package sacct

import (
	"fmt"
	"github.com/droverhq/drover/internal/cli/coltable"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/internal/timefmt"
)

// row is one line of sacct: a job's run, or one of its steps.
type row struct {
	step bool
	// jobID is the line's JobID ("125", "131_0", "131_[2-9%2]",
	// "125.batch"); rawID is JobIDRaw's.
	jobID, rawID string
	name         string
	partition    string
	account      string
	user, group  string
	cluster      string
	qos          string
	allocCPUs    int64
	reqCPUs      int64
	state        string
	// exitCode and derived are "code:signal".
	exitCode, derived string
	nodes             string
	nnodes            int64
	ntasks            string
	submit, eligible  int64
	start, end        int64
	elapsed           int64
	timelimit         string
	timelimitRaw      string
	priority          string
	reason            string
	workDir           string
	submitLine        string
	allocTRES         string
	reqTRES           string
	reqMem            string
	restarts          int64
	userCPU, sysCPU   float64
	totalCPU          float64
	killUser          string
	// use is a step's usage; hasUsage says its nodes reported it.
	hasUsage bool
	use      stepUse
	// batch marks a batch step's line; jobNum, run and stepNum name
	// the record (the job's id as a number, JobIDRaw's).
	batch   bool
	jobNum  string
	run     uint32
	stepNum uint32
	// What sacct's other fields show, as the record has them.
	comment, constraints, container, extra, failedNode string
	flags, licenses, qosReq, reservation, layout       string
	stdout, stderr, stdin, wckey                       string
	assocID, reservationID, reqNodes, suspended        int64
}

// field is a column -o can name, with sacct's default width; left says
// the values are aligned left (JobID's), the others right.
type field struct {
	name  string
	width int
	left  bool
	cell  func(r *row, c *cellCtx) string
}

// ctx is what cells need besides the row.
type cellCtx struct {
	now        int64
	timeFormat string
	units      string
	noConvert  bool
}

func (c *cellCtx) time(epoch int64) string {
	if epoch == 0 {
		return "Unknown"
	}
	return timefmt.FormatEpoch(epoch, nowTime(c.now), c.timeFormat)
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

// cpuTime prints a CPU time as sacct does ("00:01.234", "01:02:03").
func cpuTime(secs float64) string {
	if secs < 3600 {
		m := int64(secs) / 60
		s := secs - float64(m*60)
		return fmt.Sprintf("%02d:%06.3f", m, s)
	}
	return timefmt.FormatDurationPadded(int64(secs))
}

// fields are the ones this sacct knows, by their names in lower case;
// the table is built when a command first needs it, not as every command
// starts.
var fields = sync.OnceValue(func() map[string]field {
	fields := map[string]field{}
	for _, f := range []field{
		{"JobID", 12, true, func(r *row, _ *cellCtx) string { return r.jobID }},
		{"JobIDRaw", 12, true, func(r *row, _ *cellCtx) string { return r.rawID }},
		{"JobName", 10, false, func(r *row, _ *cellCtx) string { return r.name }},
		{"Partition", 10, false, func(r *row, _ *cellCtx) string { return r.partition }},
		{"Account", 10, false, func(r *row, _ *cellCtx) string { return r.account }},
		{"AllocCPUS", 10, false, func(r *row, _ *cellCtx) string { return num(r.allocCPUs) }},
		{"NCPUS", 10, false, func(r *row, _ *cellCtx) string { return num(r.allocCPUs) }},
		{"ReqCPUS", 8, false, func(r *row, _ *cellCtx) string { return stepBlank(r, num(r.reqCPUs)) }},
		{"State", 10, false, func(r *row, _ *cellCtx) string { return r.state }},
		{"ExitCode", 8, false, func(r *row, _ *cellCtx) string { return r.exitCode }},
		{"DerivedExitCode", 15, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.derived) }},
		{"User", 9, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.user) }},
		{"UID", 6, false, func(r *row, _ *cellCtx) string {
			id, _ := lookupID(r.user, false)
			return stepBlank(r, num(max(id, 0)))
		}},
		{"Group", 9, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.group) }},
		{"GID", 6, false, func(r *row, _ *cellCtx) string {
			id, _ := lookupID(r.group, true)
			return stepBlank(r, num(max(id, 0)))
		}},
		{"Cluster", 10, false, func(r *row, _ *cellCtx) string { return r.cluster }},
		{"QOS", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.qos) }},
		{"NodeList", 15, false, func(r *row, _ *cellCtx) string { return r.nodes }},
		{"NNodes", 8, false, func(r *row, _ *cellCtx) string { return num(r.nnodes) }},
		{"NTasks", 8, false, func(r *row, _ *cellCtx) string { return r.ntasks }},
		{"Submit", 19, false, func(r *row, c *cellCtx) string { return c.time(r.submit) }},
		{"Eligible", 19, false, func(r *row, c *cellCtx) string { return c.time(r.eligible) }},
		{"Start", 19, false, func(r *row, c *cellCtx) string { return c.time(r.start) }},
		{"End", 19, false, func(r *row, c *cellCtx) string { return c.time(r.end) }},
		{"Elapsed", 10, false, func(r *row, _ *cellCtx) string { return timefmt.FormatDurationPadded(r.elapsed) }},
		{"ElapsedRaw", 10, false, func(r *row, _ *cellCtx) string { return num(r.elapsed) }},
		{"CPUTime", 10, false, func(r *row, _ *cellCtx) string { return timefmt.FormatDurationPadded(r.elapsed * r.allocCPUs) }},
		{"CPUTimeRAW", 10, false, func(r *row, _ *cellCtx) string { return num(r.elapsed * r.allocCPUs) }},
		{"Timelimit", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.timelimit) }},
		{"TimelimitRaw", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.timelimitRaw) }},
		{"Priority", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.priority) }},
		{"Reason", 22, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.reason) }},
		{"WorkDir", 20, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.workDir) }},
		{"SubmitLine", 20, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.submitLine) }},
		{"AllocTRES", 10, false, func(r *row, _ *cellCtx) string { return r.allocTRES }},
		{"ReqTRES", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.reqTRES) }},
		{"ReqMem", 10, false, func(r *row, _ *cellCtx) string { return r.reqMem }},
		{"Restarts", 8, false, func(r *row, _ *cellCtx) string { return stepBlank(r, num(r.restarts)) }},
		{"UserCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.userCPU) }},
		{"SystemCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.sysCPU) }},
		{"TotalCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.totalCPU) }},
		{"KillRequestUser", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.killUser) }},
	} {
		fields[strings.ToLower(f.name)] = f
	}
	for _, f := range append(usageFields(), otherFields()...) {
		fields[strings.ToLower(f.name)] = f
	}
	return fields
})

// otherFields are the rest of sacct -e's fields.
func otherFields() []field {
	str := func(get func(r *row) string) func(*row, *cellCtx) string {
		return func(r *row, _ *cellCtx) string { return stepBlank(r, get(r)) }
	}
	// A step line shows 0 where its job's shows nothing, and the batch
	// step 0 where srun's steps say Unknown (no --cpu-freq).
	stepZero := func(r *row, _ *cellCtx) string {
		if r.step {
			return "0"
		}
		return ""
	}
	freq := func(r *row, _ *cellCtx) string {
		if r.batch {
			return "0"
		}
		return "Unknown"
	}
	planned := func(r *row, c *cellCtx) int64 {
		switch {
		case r.eligible == 0:
			return 0
		case r.start != 0:
			return max(r.start-r.eligible, 0)
		case r.end != 0:
			return max(r.end-r.eligible, 0)
		}
		return max(c.now-r.eligible, 0)
	}
	plannedTime := func(r *row, c *cellCtx) string {
		return stepBlank(r, timefmt.FormatDurationPadded(planned(r, c)))
	}
	plannedCPU := func(r *row, c *cellCtx) string {
		return stepBlank(r, timefmt.FormatDurationPadded(planned(r, c)*r.reqCPUs))
	}
	plannedRaw := func(r *row, c *cellCtx) string { return stepBlank(r, num(planned(r, c)*r.reqCPUs)) }
	return []field{
		{"AdminComment", 15, false, str(func(*row) string { return "" })},
		{"AllocNodes", 10, false, func(r *row, _ *cellCtx) string {
			if !r.step && r.start == 0 {
				return "0"
			}
			return num(r.nnodes)
		}},
		{"AssocID", 7, false, func(r *row, _ *cellCtx) string { return num(r.assocID) }},
		{"AveCPUFreq", 10, false, stepZero},
		{"BlockID", 16, false, str(func(*row) string { return "" })},
		{"Comment", 14, false, str(func(r *row) string { return r.comment })},
		{"Constraints", 19, false, str(func(r *row) string { return r.constraints })},
		{"ConsumedEnergy", 14, false, stepZero},
		{"ConsumedEnergyRaw", 17, false, stepZero},
		{"Container", 19, false, str(func(r *row) string { return r.container })},
		{"DBIndex", 10, false, func(r *row, _ *cellCtx) string { return r.rawID[:strings.IndexAny(r.rawID+".", ".")] }},
		{"Extra", 20, false, str(func(r *row) string { return r.extra })},
		{"FailedNode", 20, false, str(func(r *row) string { return r.failedNode })},
		{"Flags", 19, false, str(func(r *row) string { return r.flags })},
		{"Layout", 9, false, func(r *row, _ *cellCtx) string { return r.layout }},
		{"Licenses", 20, false, str(func(r *row) string { return r.licenses })},
		{"McsLabel", 12, false, str(func(*row) string { return "" })},
		{"Planned", 10, false, plannedTime},
		{"PlannedCPU", 10, false, plannedCPU},
		{"PlannedCPURAW", 13, false, plannedRaw},
		{"QOSRAW", 6, false, str(func(*row) string { return "" })},
		{"QOSREQ", 10, false, str(func(r *row) string { return r.qosReq })},
		{"ReqCPUFreq", 10, false, freq},
		{"ReqCPUFreqGov", 13, false, freq},
		{"ReqCPUFreqMax", 13, false, freq},
		{"ReqCPUFreqMin", 13, false, freq},
		{"ReqNodes", 8, false, func(r *row, _ *cellCtx) string {
			if r.step {
				return num(r.nnodes)
			}
			return num(r.reqNodes)
		}},
		{"Reservation", 20, false, str(func(r *row) string { return r.reservation })},
		{"ReservationId", 8, false, str(func(r *row) string {
			if r.reservation == "" {
				return ""
			}
			return num(r.reservationID)
		})},
		{"Reserved", 10, false, plannedTime},
		{"ResvCPU", 10, false, plannedCPU},
		{"ResvCPURAW", 10, false, plannedRaw},
		{"StdErr", 20, false, str(func(r *row) string { return r.stderr })},
		{"StdIn", 20, false, str(func(r *row) string { return r.stdin })},
		{"StdOut", 20, false, str(func(r *row) string { return r.stdout })},
		{"Suspended", 10, false, func(r *row, _ *cellCtx) string { return timefmt.FormatDurationPadded(r.suspended) }},
		{"SystemComment", 15, false, str(func(*row) string { return "" })},
		{"WCKey", 10, false, str(func(r *row) string { return r.wckey })},
		{"WCKeyID", 10, false, str(func(*row) string { return "0" })},
	}
}

// stepBlank leaves a job-only field empty on a step's line.
func stepBlank(r *row, v string) string {
	if r.step {
		return ""
	}
	return v
}

// column is a field as -o asked for it.
type column = coltable.Spec[field]

// defaultFormat is sacct's default columns.
const defaultFormat = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"

// brief is -b's.
const briefFormat = "JobID,State,ExitCode"

// parseFormat reads a -o list: names, each with an optional %WIDTH.
func parseFormat(s string) ([]column, error) {
	return coltable.ParseFormat(s, func(name string) (field, int, bool) {
		f, ok := fields()[name]
		return f, f.width, ok
	})
}
