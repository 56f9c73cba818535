package sacct

import (
	"fmt"
	"github.com/droverhq/drover/internal/cli/coltable"
	"slices"
	"strconv"
	"strings"

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
	// Usage of a step, in bytes; hasUsage says its node reported it.
	hasUsage                  bool
	maxRSS, aveRSS            int64
	maxDiskRead, maxDiskWrite int64
	maxVMSize, maxPages       int64
	maxRSSNode                string
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

// fields are the ones this sacct knows, by their names in lower case.
var fields = map[string]field{}

func init() {
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
		{"Reason", 25, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.reason) }},
		{"WorkDir", 15, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.workDir) }},
		{"SubmitLine", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.submitLine) }},
		{"AllocTRES", 10, false, func(r *row, _ *cellCtx) string { return r.allocTRES }},
		{"ReqTRES", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.reqTRES) }},
		{"ReqMem", 10, false, func(r *row, _ *cellCtx) string { return r.reqMem }},
		{"Restarts", 8, false, func(r *row, _ *cellCtx) string { return stepBlank(r, num(r.restarts)) }},
		{"UserCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.userCPU) }},
		{"SystemCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.sysCPU) }},
		{"TotalCPU", 10, false, func(r *row, _ *cellCtx) string { return cpuTime(r.totalCPU) }},
		{"KillRequestUser", 10, false, func(r *row, _ *cellCtx) string { return stepBlank(r, r.killUser) }},
		{"MaxRSS", 10, false, func(r *row, c *cellCtx) string { return usage(r, c, r.maxRSS) }},
		{"AveRSS", 10, false, func(r *row, c *cellCtx) string { return usage(r, c, r.aveRSS) }},
		{"MaxRSSNode", 10, false, func(r *row, _ *cellCtx) string { return r.maxRSSNode }},
		{"MaxDiskRead", 12, false, func(r *row, c *cellCtx) string { return usage(r, c, r.maxDiskRead) }},
		{"MaxDiskWrite", 12, false, func(r *row, c *cellCtx) string { return usage(r, c, r.maxDiskWrite) }},
		{"MaxVMSize", 10, false, func(r *row, c *cellCtx) string { return usage(r, c, r.maxVMSize) }},
		{"MaxPages", 8, false, func(r *row, _ *cellCtx) string {
			if !r.hasUsage {
				return ""
			}
			return num(r.maxPages)
		}},
	} {
		fields[strings.ToLower(f.name)] = f
	}
}

// usage prints a step's byte count as sacct does (convert_num_unit:
// divided by 1024 while it is 1024 or more, "5.01M"; with --units, in
// that unit; with --noconvert, as it is), empty on lines without usage.
func usage(r *row, c *cellCtx, bytes int64) string {
	if !r.hasUsage {
		return ""
	}
	if c.noConvert {
		return strconv.FormatInt(bytes, 10)
	}
	v := float64(bytes)
	units := []string{"", "K", "M", "G", "T", "P"}
	i := 0
	if want := slices.Index(units, c.units); c.units != "" && want > 0 {
		for ; i < want; i++ {
			v /= 1024
		}
	} else {
		for v >= 1024 && i < len(units)-1 {
			v /= 1024
			i++
		}
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + units[i]
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + units[i]
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
		f, ok := fields[name]
		return f, f.width, ok
	})
}
