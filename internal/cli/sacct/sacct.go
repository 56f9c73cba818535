// Package sacct is the drop-in `sacct` command: job accounting records
// from GET /slurmdb/v0.0.44/jobs, each run of a job and each of its
// steps a line, laid out as Slurm's sacct lays them out.
package sacct

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/coltable"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/reportproto"
	stepproto "github.com/droverhq/drover/internal/step/proto"
	"github.com/droverhq/drover/internal/timefmt"
)

var longOptions = []string{"allusers", "accounts", "account", "allocations", "brief", "clusters", "cluster", "delimiter", "duplicates",
	"endtime", "format", "helpformat", "help", "jobs", "job", "long", "allclusters", "name", "noheader", "parsable", "parsable2",
	"partition", "qos", "state", "starttime", "units", "noconvert", "usage", "user", "uid", "version", "verbose", "json", "yaml", "array"}

type options struct {
	all, allocations, duplicates, noHeader bool
	// units is --units ("K".."P", "": as the value fits); noConvert
	// --noconvert.
	units                            string
	noConvert                        bool
	parsable, parsable2              bool
	arrayExpand                      bool
	delimiter                        string
	users, accounts, partitions, qos []string
	names, states, clusters          []string
	jobs                             []selector
	start, end                       time.Time
	format                           []column
	// json is --json (or --yaml, which yaml adds); argv the command
	// line, for its meta block.
	json, yaml bool
	argv       []string
}

// selector is one -j item: a job (or array) id, maybe a task and a step.
type selector struct {
	id uint32
	// tasks are the array tasks asked for (nil: the whole job).
	tasks []uint32
	step  string
	// het names one component of the heterogeneous job id leads
	// ("ID+OFFSET").
	het    bool
	offset uint32
}

// stateNames are -s's abbreviations.
var stateNames = map[string]string{
	"BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "CF": "CONFIGURING", "DL": "DEADLINE", "F": "FAILED",
	"NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED", "R": "RUNNING", "RQ": "REQUEUED",
	"RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED", "TO": "TIMEOUT",
}

// Run is the sacct command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	prog := env.Prog
	if prog == "" {
		prog = "sacct"
	}
	now := env.Now()
	o, code, done := parse(prog, env, args, now)
	if done {
		return code
	}
	q := o.query()
	if o.json {
		return o.printJSON(ctx, env, prog, q)
	}
	// The runs are read as they arrive and only those -j selects are
	// kept; sacct sorts them before it prints, so nothing is printed
	// until the whole answer is in, and a failed one prints only its
	// error. Runs are kept in slabs: one allocation per 256.
	var runs []run
	var slab []readmodel.AcctJob
	ans, err := readmodel.GetAcctJobs(ctx, env.Client, q, func(j *readmodel.AcctJob) error {
		r, ok := o.selectRun(j)
		if !ok {
			return nil
		}
		if len(slab) == 0 {
			slab = make([]readmodel.AcctJob, 256)
		}
		slab[0] = *j
		r.j, slab = &slab[0], slab[1:]
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, readmodel.ClientError(err))
		return 1
	}
	if ans.Failed() {
		return failed(env, prog, ans.Status, ans.Errors)
	}
	rows := o.rows(runs, now.Unix())
	if o.wantsWhere() {
		addWhere(ctx, env, rows)
	}
	c := &cellCtx{now: now.Unix(), timeFormat: env.Getenv("SLURM_TIME_FORMAT"), units: o.units, noConvert: o.noConvert}
	o.print(env.Stdout, rows, c)
	return 0
}

// query is what the options ask slurmdbd for; -j's ids go as job ids
// and the rest of each selector is applied to the answer.
func (o *options) query() readmodel.AcctQuery {
	q := readmodel.AcctQuery{
		Users: o.users, Accounts: o.accounts, Partitions: o.partitions, QOS: o.qos,
		Names: o.names, States: o.states, Clusters: o.clusters,
		Duplicates: o.duplicates, Start: o.start, End: o.end,
	}
	for _, s := range o.jobs {
		q.JobIDs = append(q.JobIDs, strconv.FormatUint(uint64(s.id), 10))
	}
	return q
}

// failed reports an answer other than the operation's success: its
// first explanation ("Slurm accounting storage is disabled", as sacct
// says it), else the HTTP status.
func failed(env *clienv.Env, prog string, status int, errs []readmodel.Problem) int {
	for _, e := range errs {
		if e.Description != "" {
			fmt.Fprintln(env.Stderr, e.Description)
			return 1
		}
	}
	if status < 0 {
		fmt.Fprintf(env.Stderr, "%s: error: unexpected answer\n", prog)
		return 1
	}
	fmt.Fprintf(env.Stderr, "%s: error: HTTP %d\n", prog, status)
	return 1
}

// wantsWhere says a column names the node or task of a step's extreme.
func (o *options) wantsWhere() bool {
	for _, c := range o.format {
		if n := c.Field.name; strings.HasSuffix(n, "Node") || strings.HasSuffix(n, "Task") {
			return true
		}
	}
	return false
}

// addWhere fills in the nodes and tasks of the extremes of the steps
// that ran several tasks, which slurmdbd's v0.0.44 step records do not
// carry, from Drover's step usage request; without an answer they stay
// empty.
func addWhere(ctx context.Context, env *clienv.Env, rows []row) {
	byCluster := map[string][]string{}
	for i := range rows {
		r := &rows[i]
		if r.step && r.hasUsage && (r.nnodes > 1 || r.ntasks != "1") && !slices.Contains(byCluster[r.cluster], r.jobNum) {
			byCluster[r.cluster] = append(byCluster[r.cluster], r.jobNum)
		}
	}
	type key struct {
		cluster, job string
		run, step    uint32
	}
	found := map[key]job.UsageStats{}
	for cluster, ids := range byCluster {
		for len(ids) > 0 {
			part := ids[:min(len(ids), 1000)]
			ids = ids[len(part):]
			v := url.Values{"jobs": {strings.Join(part, ",")}}
			if cluster != "" {
				v.Set("cluster", cluster)
			}
			var ans reportproto.StepUsages
			if env.Call == nil || env.Call(ctx, "GET", reportproto.PathStepUsage+"?"+v.Encode(), nil, &ans) != nil {
				continue
			}
			for _, s := range ans.Steps {
				found[key{cluster, strconv.FormatUint(uint64(s.JobID), 10), s.Run, s.StepID}] = s.Stats
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		st, ok := found[key{r.cluster, r.jobNum, r.run, r.stepNum}]
		if !r.step || !ok {
			continue
		}
		for _, x := range []struct {
			m *measure
			s job.UsageStat
		}{{&r.use.cpu, st.CPU}, {&r.use.mem, st.RSS}, {&r.use.read, st.Read}, {&r.use.vmem, st.VMSize}, {&r.use.pages, st.Pages}, {&r.use.write, st.Write},
			{&r.use.gpuMem, st.GPUMem}, {&r.use.gpuUtil, st.GPUUtil}} {
			x.m.maxNode, x.m.minNode, x.m.maxTask, x.m.minTask = x.s.MaxNode, x.s.MinNode, int64(x.s.MaxTask), int64(x.s.MinTask)
		}
	}
}

func parse(prog string, env *clienv.Env, args []string, now time.Time) (options, int, bool) {
	var o options
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var accounts, users, clusters, format, partition, qos, name, state, jobs, start, end, delimiter, units, jsonArg, yamlArg string
	var help, usage, version, brief, long, helpFormat, allClusters bool
	var verbose int
	fs.BoolVarP(&o.all, "allusers", "a", false, "")
	fs.StringVarP(&accounts, "accounts", "A", "", "")
	fs.BoolVarP(&o.allocations, "allocations", "X", false, "")
	fs.BoolVarP(&brief, "brief", "b", false, "")
	fs.StringVarP(&clusters, "clusters", "M", "", "")
	fs.BoolVarP(&allClusters, "allclusters", "L", false, "")
	fs.StringVar(&delimiter, "delimiter", "|", "")
	fs.BoolVarP(&o.duplicates, "duplicates", "D", false, "")
	fs.StringVarP(&end, "endtime", "E", "", "")
	fs.StringVarP(&format, "format", "o", "", "")
	fs.BoolVarP(&helpFormat, "helpformat", "e", false, "")
	fs.StringVarP(&jobs, "jobs", "j", "", "")
	fs.BoolVarP(&long, "long", "l", false, "")
	fs.StringVar(&name, "name", "", "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&partition, "partition", "r", "", "")
	fs.StringVarP(&qos, "qos", "q", "", "")
	fs.StringVarP(&state, "state", "s", "", "")
	fs.StringVarP(&start, "starttime", "S", "", "")
	fs.StringVar(&units, "units", "", "")
	fs.BoolVar(&o.noConvert, "noconvert", false, "")
	fs.StringVarP(&users, "user", "u", "", "")
	fs.BoolVarP(&o.arrayExpand, "array", "T", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.StringVar(&jsonArg, "json", "", "")
	fs.Lookup("json").NoOptDefVal = " "
	fs.StringVar(&yamlArg, "yaml", "", "")
	fs.Lookup("yaml").NoOptDefVal = " "
	argv, err := getopt.ExpandLong(args, longOptions, map[string]string{"account": "accounts", "cluster": "clusters", "job": "jobs", "uid": "user"})
	if err == nil {
		err = fs.Parse(argv)
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unrecognized argument '%s'", fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, err))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return o, 1, true
	}
	fail := func(format string, args ...any) (options, int, bool) {
		fmt.Fprintf(env.Stderr, format+"\n", args...)
		return o, 1, true
	}
	switch {
	case help, usage:
		fmt.Fprintf(env.Stdout, "Usage: %s [options]\n\tUse --help for help\n", prog)
		return o, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, 0, true
	case helpFormat:
		var names []string
		for _, f := range fields() {
			names = append(names, f.name)
		}
		slices.Sort(names)
		for i, n := range names {
			fmt.Fprintf(env.Stdout, "%-20s", n)
			if i%4 == 3 || i == len(names)-1 {
				fmt.Fprintln(env.Stdout)
			}
		}
		return o, 0, true
	case jsonArg != "" && jsonArg != " " && jsonArg != "v0.0.44" && jsonArg != "data_parser/v0.0.44":
		return fail("%s: error: JSON output is only available with data parser v0.0.44, not %s", prog, jsonArg)
	case yamlArg != "" && yamlArg != " " && yamlArg != "v0.0.44" && yamlArg != "data_parser/v0.0.44":
		return fail("%s: error: YAML output is only available with data parser v0.0.44, not %s", prog, yamlArg)
	}
	o.yaml = yamlArg != ""
	if units != "" {
		u := strings.ToUpper(units)
		if len(u) != 1 || !strings.Contains("KMGTP", u) {
			return fail("%s: error: Invalid unit type: %s", prog, units)
		}
		o.units = u
	}
	o.json, o.argv = jsonArg != "" || o.yaml, args
	o.delimiter = delimiter
	o.users, o.accounts, o.partitions = getopt.SplitList(users), getopt.SplitList(accounts), getopt.SplitList(partition)
	o.qos, o.names, o.clusters = getopt.SplitList(qos), getopt.SplitList(name), getopt.SplitList(clusters)
	if allClusters {
		o.clusters = []string{"all"}
	}
	for _, s := range getopt.SplitList(state) {
		full, ok := stateNames[strings.ToUpper(s)]
		if !ok {
			full = strings.ToUpper(s)
			if !slices.Contains(slices.Collect(maps.Values(stateNames)), full) {
				return fail("%s: error: Invalid state: %s", prog, s)
			}
		}
		o.states = append(o.states, full)
	}
	for _, j := range splitJobs(jobs) {
		sel, err := parseSelector(j)
		if err != nil {
			return fail("%s: error: Invalid job id: %s", prog, j)
		}
		o.jobs = append(o.jobs, sel)
	}
	if start != "" {
		if o.start, err = timefmt.ParseTimePast(start, now); err != nil {
			return fail("%s: error: Invalid time specification (pos=0): %s", prog, start)
		}
	}
	if end != "" {
		if o.end, err = timefmt.ParseTime(end, now); err != nil {
			return fail("%s: error: Invalid time specification (pos=0): %s", prog, end)
		}
	}
	if len(o.jobs) == 0 && o.start.IsZero() {
		// sacct's default window starts at midnight, today.
		y, m, d := now.Date()
		o.start = time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	}
	// By default one sees one's own jobs; root, -a, -u and -j see more.
	if !o.all && len(o.users) == 0 && len(o.jobs) == 0 && env.User.UID != 0 {
		o.users = []string{env.User.Name}
	}
	if format == "" {
		format = env.Getenv("SACCT_FORMAT")
	}
	switch {
	case format != "":
	case brief:
		format = briefFormat
	case long:
		format = longFormat
	default:
		format = defaultFormat
	}
	if o.format, err = parseFormat(format); err != nil {
		return fail("%v", err)
	}
	return o, 0, false
}

// longFormat is -l's.
const longFormat = "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode," +
	"MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AllocCPUS," +
	"Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead," +
	"MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,ReqTRES," +
	"AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode," +
	"TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot"

// splitJobs splits -j's list at commas outside brackets ("131_[1,3],140").
func splitJobs(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if item := strings.TrimSpace(s[from:i]); item != "" {
			out = append(out, item)
		}
		from = i + 1
	}
	return out
}

// parseSelector reads a -j item: "125", "131_2", "125.batch", "131_2.0".
func parseSelector(s string) (selector, error) {
	var sel selector
	head, step, hasStep := strings.Cut(s, ".")
	if hasStep {
		if step == "" {
			return sel, fmt.Errorf("empty step")
		}
		sel.step = step
	}
	if lead, off, het := strings.Cut(head, "+"); het {
		id, err1 := strconv.ParseUint(lead, 10, 32)
		o, err2 := strconv.ParseUint(off, 10, 32)
		if err1 != nil || err2 != nil || id == 0 {
			return sel, fmt.Errorf("bad het job id")
		}
		sel.id, sel.het, sel.offset = uint32(id), true, uint32(o)
		return sel, nil
	}
	idPart, taskPart, hasTask := strings.Cut(head, "_")
	id, err := strconv.ParseUint(idPart, 10, 32)
	if err != nil || id == 0 {
		return sel, fmt.Errorf("bad id")
	}
	sel.id = uint32(id)
	if hasTask {
		// "131_2", or a set of tasks: "131_[1-3,7]".
		if inner, ok := strings.CutPrefix(taskPart, "["); ok {
			inner, ok = strings.CutSuffix(inner, "]")
			if !ok || strings.Contains(inner, "%") {
				return sel, fmt.Errorf("bad task")
			}
			spec, err := arrayspec.Parse(inner, math.MaxUint32)
			if err != nil {
				return sel, fmt.Errorf("bad task: %w", err)
			}
			sel.tasks = spec.Tasks
			return sel, nil
		}
		t, err := strconv.ParseUint(taskPart, 10, 32)
		if err != nil {
			return sel, fmt.Errorf("bad task")
		}
		sel.tasks = []uint32{uint32(t)}
	}
	return sel, nil
}

// run is one run of a job that -j selects, with its place in sacct's
// order: its cluster, then the job (an array's or a heterogeneous job's
// leader), the task or component, the restart.
type run struct {
	j       *readmodel.AcctJob
	cluster string
	key     [3]int64
	// head is the run's JobID ("125", "131_2", "131_[4-9%2]", "34+1").
	head string
}

// selectRun places a run in sacct's order; ok is false when -j does not
// select it.
func (o *options) selectRun(j *readmodel.AcctJob) (r run, ok bool) {
	id, arrID := int64(j.JobID), int64(j.ArrayJobID)
	task, taskSet := arrayTask(j)
	head := strconv.FormatInt(id, 10)
	group := id
	hetID, hetOff := int64(j.HetJobID), int64(j.HetJobOffset)
	switch {
	case hetID != 0:
		// A heterogeneous job's components, under their leader.
		head, group, task = fmt.Sprintf("%d+%d", hetID, hetOff), hetID, hetOff
	case arrID != 0 && taskSet:
		head, group = fmt.Sprintf("%d_%d", arrID, task), arrID
	case arrID != 0:
		head, group, task = fmt.Sprintf("%d_[%s]", arrID, j.ArrayTasks), arrID, 1<<40
	}
	if !o.selected(uint32(id), uint32(arrID), task, taskSet) && !o.hetSelected(uint32(hetID), uint32(hetOff)) {
		return run{}, false
	}
	return run{cluster: j.Cluster, key: [3]int64{group, task, int64(j.RestartCnt)}, head: head}, true
}

// arrayTask is the array task a run is (taskSet false and task -1 when
// it is none).
func arrayTask(j *readmodel.AcctJob) (task int64, taskSet bool) {
	if t := j.ArrayTaskID; t != readmodel.NoVal && t != readmodel.Infinite {
		return int64(t), true
	}
	return -1, false
}

// rows turns the runs into sacct's lines: the newest run of each job
// (every run with -D), each followed by its steps (none with -X).
func (o *options) rows(recs []run, now int64) []row {
	slices.SortStableFunc(recs, func(a, b run) int {
		return cmp.Or(cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.key[0], b.key[0]), cmp.Compare(a.key[1], b.key[1]), cmp.Compare(a.key[2], b.key[2]))
	})
	if !o.duplicates {
		// The newest run of each job only.
		var kept []run
		for i, r := range recs {
			if i+1 < len(recs) && recs[i+1].j.JobID == r.j.JobID && recs[i+1].cluster == r.cluster {
				continue
			}
			kept = append(kept, r)
		}
		recs = kept
	}
	var out []row
	for _, r := range recs {
		jr := jobRow(r.j, r.head, now)
		if o.stepSelected(r.j, "") {
			out = append(out, jr)
		}
		if o.allocations {
			continue
		}
		steps := make([]*readmodel.AcctStep, len(r.j.Steps))
		for i := range r.j.Steps {
			steps[i] = &r.j.Steps[i]
		}
		slices.SortStableFunc(steps, func(a, b *readmodel.AcctStep) int { return cmp.Compare(stepOrder(a.ID), stepOrder(b.ID)) })
		for _, s := range steps {
			sr := stepRow(s, &jr, now)
			_, suffix, _ := strings.Cut(sr.jobID, ".")
			if o.stepSelected(r.j, suffix) {
				out = append(out, sr)
			}
		}
	}
	return out
}

// selected reports whether -j selects a record (everything without -j).
func (o *options) selected(id, arrayID uint32, task int64, taskSet bool) bool {
	if len(o.jobs) == 0 {
		return true
	}
	for _, s := range o.jobs {
		if s.het {
			continue
		}
		if s.id == id && (s.tasks == nil || arrayID == 0) {
			return true
		}
		if arrayID != 0 && s.id == arrayID && (s.tasks == nil || (taskSet && task >= 0 && slices.Contains(s.tasks, uint32(task)))) {
			return true
		}
	}
	return false
}

// hetSelected reports whether -j selects a component of a heterogeneous
// job: its leader's id names every component, ID+OFFSET one.
func (o *options) hetSelected(leader, offset uint32) bool {
	if leader == 0 {
		return false
	}
	for _, s := range o.jobs {
		if s.id == leader && (!s.het || s.offset == offset) {
			return true
		}
	}
	return false
}

// stepSelected reports whether a line of job j (step "" for the job's
// own) is shown: -j with steps shows those steps only.
func (o *options) stepSelected(j *readmodel.AcctJob, step string) bool {
	var steps []string
	id, arrID, hetID := j.JobID, uint32(j.ArrayJobID), uint32(j.HetJobID)
	for _, s := range o.jobs {
		if id == s.id || arrID == s.id || (hetID != 0 && hetID == s.id) {
			if s.step == "" {
				return true
			}
			steps = append(steps, s.step)
		}
	}
	if len(steps) == 0 {
		return true
	}
	return step != "" && slices.Contains(steps, step)
}

// stepOrder sorts a job's steps as sacct lists them: batch, extern,
// then srun's by number.
func stepOrder(id string) int64 {
	_, suffix, _ := strings.Cut(id, ".")
	switch suffix {
	case "batch":
		return -2
	case "extern":
		return -1
	}
	n, _ := strconv.ParseInt(suffix, 10, 64)
	return n
}

// exitString prints an exit code as sacct does, "code:signal", from
// the numbers the record sets whatever its status says.
func exitString(e readmodel.ExitCode) string {
	var code, sig uint64
	if e.ReturnCode != readmodel.NoVal && e.ReturnCode != readmodel.Infinite {
		code = uint64(e.ReturnCode)
	}
	if e.SignalID != readmodel.NoVal16 && e.SignalID != readmodel.Infinite16 {
		sig = uint64(e.SignalID)
	}
	return strconv.FormatUint(code, 10) + ":" + strconv.FormatUint(sig, 10)
}

// tresName is a TRES as sacct names it ("cpu", "gres/gpu").
func tresName(t *readmodel.TRES) string {
	if t.Name == "" {
		return t.Type
	}
	return t.Type + "/" + t.Name
}

// tresString prints a TRES list as AllocTRES and ReqTRES do, and finds
// its CPU count. Energy is left out, and billing on a step's line.
func tresString(list []readmodel.TRES, withBilling bool) (string, int64) {
	var parts []string
	var cpus int64
	for i := range list {
		name, count := tresName(&list[i]), list[i].Count
		if name == "cpu" {
			cpus = count
		}
		if name == "energy" || (!withBilling && name == "billing") {
			continue
		}
		v := strconv.FormatInt(count, 10)
		if name == "mem" {
			v += "M"
		}
		parts = append(parts, name+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ","), cpus
}

func jobRow(j *readmodel.AcctJob, head string, now int64) row {
	state := j.State
	if state == "CANCELLED" && j.KillRequestUser != "" {
		state += " by " + uidOf(j.KillRequestUser)
	}
	alloc, cpus := tresString(j.AllocTRES, true)
	req, _ := tresString(j.ReqTRES, true)
	r := row{jobID: head, rawID: strconv.FormatUint(uint64(j.JobID), 10), name: j.Name, partition: j.Partition,
		account: j.Account, user: j.User, group: j.Group, cluster: j.Cluster, qos: j.QOS,
		state: state, exitCode: exitString(j.ExitCode), derived: exitString(j.DerivedExitCode),
		nnodes: int64(j.AllocNodes), submit: j.SubmitTime, eligible: j.EligibleTime,
		start: j.StartTime, end: j.EndTime, elapsed: int64(j.Elapsed), reason: j.StateReason,
		workDir: j.WorkDir, submitLine: j.SubmitLine, allocTRES: alloc, reqTRES: req,
		restarts: int64(j.RestartCnt), killUser: j.KillRequestUser, allocCPUs: cpus}
	if r.nodes = j.Nodes; r.nodes == "" {
		r.nodes = "None assigned"
	}
	if r.start != 0 && r.end == 0 {
		r.elapsed = now - r.start
	}
	r.reqCPUs = int64(j.ReqCPUs)
	if m := j.ReqMemPerNode; m != readmodel.NoVal64 && m != readmodel.Infinite64 {
		r.reqMem = strconv.FormatUint(m, 10) + "M"
	} else if m := j.ReqMemPerCPU; m != readmodel.NoVal64 && m != readmodel.Infinite64 {
		r.reqMem = strconv.FormatUint(m, 10) + "Mc"
	}
	if j.HasTimeLimit {
		switch j.TimeLimit {
		case readmodel.Infinite:
			r.timelimit, r.timelimitRaw = "UNLIMITED", "UNLIMITED"
		case readmodel.NoVal:
			r.timelimit, r.timelimitRaw = "Partition_Limit", "Partition_Limit"
		default:
			r.timelimit = timefmt.Limit{Minutes: j.TimeLimit}.Padded()
			r.timelimitRaw = strconv.FormatUint(uint64(j.TimeLimit), 10)
		}
	}
	if j.HasPriority {
		r.priority = strconv.FormatUint(uint64(j.Priority), 10)
	}
	r.userCPU = cpuSecs(j.UserCPUSecs, j.UserCPUMicrosec)
	r.sysCPU = cpuSecs(j.SysCPUSecs, j.SysCPUMicrosec)
	r.totalCPU = r.userCPU + r.sysCPU
	r.comment = j.Comment
	r.constraints, r.container, r.extra, r.failedNode = j.Constraints, j.Container, j.Extra, j.FailedNode
	r.flags = strings.Join(j.Flags, ",")
	r.licenses, r.qosReq = j.Licenses, j.QOSReq
	r.reservation, r.reservationID = j.Reservation, int64(j.ReservationID)
	r.stdout, r.stderr, r.stdin = j.StdOut, j.StdErr, j.StdIn
	r.wckey = j.WCKey
	r.assocID = int64(j.AssocID)
	// slurmdbd's job record has no requested node count: the nodes it
	// ran on, once it ran.
	r.reqNodes = r.nnodes
	r.jobNum, r.run = r.rawID, uint32(r.restarts)
	r.suspended = int64(j.Suspended)
	return r
}

func stepRow(s *readmodel.AcctStep, job *row, now int64) row {
	_, suffix, _ := strings.Cut(s.ID, ".")
	alloc, cpus := tresString(s.AllocTRES, false)
	r := row{step: true, jobID: strings.SplitN(job.jobID, ".", 2)[0] + "." + suffix, rawID: job.rawID + "." + suffix,
		name: s.Name, account: job.account, cluster: job.cluster, state: s.State, exitCode: exitString(s.ExitCode),
		nodes: s.Nodes, nnodes: int64(s.NodeCount), ntasks: strconv.FormatInt(int64(s.Tasks), 10),
		elapsed: int64(s.Elapsed), allocTRES: alloc, allocCPUs: cpus, reqMem: job.reqMem}
	r.start, r.end = s.StartTime, s.EndTime
	r.submit, r.eligible = r.start, r.start
	if r.start != 0 && r.end == 0 {
		r.elapsed = now - r.start
	}
	var single string
	if r.nnodes == 1 {
		single = r.nodes
	}
	r.use, r.hasUsage = parseUse(s, single, int64(s.Tasks))
	r.batch = suffix == "batch"
	r.jobNum, r.run = job.jobNum, job.run
	switch suffix {
	case "batch":
		r.stepNum = stepproto.BatchStep
	case "extern":
		r.stepNum = stepproto.BatchStep + 1
	default:
		n, _ := strconv.ParseUint(suffix, 10, 32)
		r.stepNum = uint32(n)
	}
	r.layout = s.Distribution
	r.assocID = job.assocID
	r.suspended = int64(s.Suspended)
	r.userCPU = cpuSecs(s.UserCPUSecs, s.UserCPUMicrosec)
	r.sysCPU = cpuSecs(s.SysCPUSecs, s.SysCPUMicrosec)
	r.totalCPU = r.userCPU + r.sysCPU
	return r
}

func cpuSecs(s, us int64) float64 { return float64(s) + float64(us)/1e6 }

// tresCount is a TRES's count in a list (0: not there).
func tresCount(list []readmodel.TRES, name string) int64 {
	for i := range list {
		if tresName(&list[i]) == name {
			return list[i].Count
		}
	}
	return 0
}

// uidOf gives the uid of a user name for "CANCELLED by UID"; a name this
// host does not know stays a name.
func uidOf(name string) string {
	if _, err := strconv.Atoi(name); err == nil {
		return name
	}
	if id, ok := lookupID(name, false); ok {
		return strconv.FormatInt(id, 10)
	}
	return name
}

// ids remembers the names looked up: a listing names the same few users
// and groups many times, and each lookup reads the account files.
var ids = map[[2]string]int64{}

// lookupID is a user's uid, or a group's gid, by name.
func lookupID(name string, group bool) (int64, bool) {
	if name == "" {
		return 0, false
	}
	key := [2]string{name, "u"}
	if group {
		key[1] = "g"
	}
	if id, ok := ids[key]; ok {
		return id, id >= 0
	}
	id := int64(-1)
	if group {
		if g, err := user.LookupGroup(name); err == nil {
			id, _ = strconv.ParseInt(g.Gid, 10, 64)
		}
	} else if u, err := user.Lookup(name); err == nil {
		id, _ = strconv.ParseInt(u.Uid, 10, 64)
	}
	ids[key] = id
	return id, id >= 0
}

func nowTime(epoch int64) time.Time { return time.Unix(epoch, 0) }

// print writes the lines: fixed columns (values too long cut to one
// character less and a '+'), or with -p/-P the values between
// print writes the rows as -o, -p/-P, --delimiter and -n ask.
func (o *options) print(w io.Writer, rows []row, c *cellCtx) {
	cols := make([]coltable.Column, len(o.format))
	for i, col := range o.format {
		cols[i] = coltable.Column{Name: col.Field.name, Width: col.Width, Left: col.Field.left}
	}
	cells := make([][]string, len(rows))
	for i := range rows {
		cells[i] = make([]string, len(o.format))
		for k, col := range o.format {
			cells[i][k] = col.Field.cell(&rows[i], c)
		}
	}
	coltable.Print(w, cols, cells, coltable.Style{NoHeader: o.noHeader, Parsable: o.parsable, Parsable2: o.parsable2, Delimiter: o.delimiter, CutHeaders: true})
}
