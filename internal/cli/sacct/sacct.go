// Package sacct is the drop-in `sacct` command: job accounting records
// from GET /slurmdb/v0.0.44/jobs, each run of a job and each of its
// steps a line, laid out as Slurm's sacct lays them out.
package sacct

import (
	"cmp"
	"context"
	"fmt"
	"github.com/droverhq/drover/internal/arrayspec"
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

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/coltable"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/reportproto"
	stepproto "github.com/droverhq/drover/internal/step/proto"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
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
	p := v0044.SlurmdbV0044GetJobsParams{}
	set := func(dst *v0044.OptString, list []string) {
		if len(list) > 0 {
			*dst = v0044.NewOptString(strings.Join(list, ","))
		}
	}
	set(&p.Users, o.users)
	set(&p.Account, o.accounts)
	set(&p.Partition, o.partitions)
	set(&p.Qos, o.qos)
	set(&p.JobName, o.names)
	set(&p.State, o.states)
	set(&p.Cluster, o.clusters)
	if o.duplicates {
		p.ShowDuplicates = v0044.NewOptString("true")
	}
	var ids []string
	for _, s := range o.jobs {
		ids = append(ids, strconv.FormatUint(uint64(s.id), 10))
	}
	set(&p.Step, ids)
	if !o.start.IsZero() {
		p.StartTime = v0044.NewOptString(strconv.FormatInt(o.start.Unix(), 10))
	}
	if !o.end.IsZero() {
		p.EndTime = v0044.NewOptString(strconv.FormatInt(o.end.Unix(), 10))
	}
	res, err := env.Client.SlurmdbV0044GetJobs(ctx, p)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	var jobs v0044.V0044JobList
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdJobsResp:
		jobs = r.Jobs
		if o.json {
			return o.printJSON(env, prog, r)
		}
	case *v0044.V0044OpenapiSlurmdbdJobsRespStatusCode:
		for _, e := range r.Response.Errors {
			if d := e.Description.Or(""); d != "" {
				// "Slurm accounting storage is disabled", as sacct says it.
				fmt.Fprintln(env.Stderr, d)
				return 1
			}
		}
		fmt.Fprintf(env.Stderr, "%s: error: HTTP %d\n", prog, r.StatusCode)
		return 1
	default:
		fmt.Fprintf(env.Stderr, "%s: error: unexpected answer %T\n", prog, res)
		return 1
	}
	rows := o.rows(jobs, now.Unix())
	if o.wantsWhere() {
		addWhere(ctx, env, rows)
	}
	c := &cellCtx{now: now.Unix(), timeFormat: env.Getenv("SLURM_TIME_FORMAT"), units: o.units, noConvert: o.noConvert}
	o.print(env.Stdout, rows, c)
	return 0
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

// printJSON writes the records -j selects as slurmdbd's v0.0.44 answer,
// in the schema's member order, with this command's meta block, as
// sacct --json does.
func (o *options) printJSON(env *clienv.Env, prog string, resp *v0044.V0044OpenapiSlurmdbdJobsResp) int {
	out := *resp
	out.Jobs = v0044.V0044JobList{}
	for _, j := range resp.Jobs {
		arr := j.Array.Or(v0044.V0044JobArray{})
		task, taskSet := int64(-1), false
		if t, ok := arr.TaskID.Get(); ok && t.Set.Or(false) {
			task, taskSet = int64(t.Number.Or(0)), true
		}
		if o.selected(uint32(j.JobID.Or(0)), uint32(arr.JobID.Or(0)), task, taskSet) {
			out.Jobs = append(out.Jobs, j)
		}
	}
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(prog, o.argv, env.User.Name, env.User.GID, clienv.SlurmVersion, resp.Meta))
	out.Errors, out.Warnings = v0044.V0044OpenapiErrors{}, v0044.V0044OpenapiWarnings{}
	text, err := slurmjson.Format(&out, slurmjson.SlurmdbdJobsResp())
	if err == nil && o.yaml {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	if _, err := io.WriteString(env.Stdout, text); err != nil {
		return 1
	}
	return 0
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

// rows turns the records into sacct's lines: the newest run of each job
// (every run with -D), each followed by its steps (none with -X).
func (o *options) rows(jobs v0044.V0044JobList, now int64) []row {
	type rec struct {
		j       *v0044.V0044Job
		cluster string
		key     [3]int64
		head    string
	}
	var recs []rec
	for i := range jobs {
		j := &jobs[i]
		id := int64(j.JobID.Or(0))
		arr := j.Array.Or(v0044.V0044JobArray{})
		arrID := int64(arr.JobID.Or(0))
		task, taskSet := int64(-1), false
		if t, ok := arr.TaskID.Get(); ok && t.Set.Or(false) {
			task, taskSet = int64(t.Number.Or(0)), true
		}
		head := strconv.FormatInt(id, 10)
		group := id
		het := j.Het.Or(v0044.V0044JobHet{})
		hetID := int64(het.JobID.Or(0))
		hetOff := int64(het.JobOffset.Or(v0044.V0044Uint32NoValStruct{}).Number.Or(0))
		switch {
		case hetID != 0:
			// A heterogeneous job's components, under their leader.
			head, group, task = fmt.Sprintf("%d+%d", hetID, hetOff), hetID, hetOff
		case arrID != 0 && taskSet:
			head, group = fmt.Sprintf("%d_%d", arrID, task), arrID
		case arrID != 0:
			head, group, task = fmt.Sprintf("%d_[%s]", arrID, arr.Task.Or("")), arrID, 1<<40
		}
		if !o.selected(uint32(id), uint32(arrID), task, taskSet) && !o.hetSelected(uint32(hetID), uint32(hetOff)) {
			continue
		}
		recs = append(recs, rec{j: j, cluster: j.Cluster.Or(""), key: [3]int64{group, task, int64(j.RestartCnt.Or(0))}, head: head})
	}
	slices.SortStableFunc(recs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.key[0], b.key[0]), cmp.Compare(a.key[1], b.key[1]), cmp.Compare(a.key[2], b.key[2]))
	})
	if !o.duplicates {
		// The newest run of each job only.
		var kept []rec
		for i, r := range recs {
			if i+1 < len(recs) && recs[i+1].j.JobID.Or(0) == r.j.JobID.Or(0) && recs[i+1].cluster == r.cluster {
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
		steps := slices.Clone(r.j.Steps)
		slices.SortStableFunc(steps, func(a, b v0044.V0044Step) int { return cmp.Compare(stepOrder(a), stepOrder(b)) })
		for i := range steps {
			sr := stepRow(&steps[i], &jr, now)
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
func (o *options) stepSelected(j *v0044.V0044Job, step string) bool {
	var steps []string
	id := j.JobID.Or(0)
	arrID := j.Array.Or(v0044.V0044JobArray{}).JobID.Or(0)
	het := j.Het.Or(v0044.V0044JobHet{})
	hetID := uint32(het.JobID.Or(0))
	for _, s := range o.jobs {
		if uint32(id) == s.id || uint32(arrID) == s.id || (hetID != 0 && hetID == s.id) {
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
func stepOrder(s v0044.V0044Step) int64 {
	id := s.Step.Or(v0044.V0044StepStep{}).ID.Or("")
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

func exitString(e v0044.OptV0044ProcessExitCodeVerbose) string {
	v := e.Or(v0044.V0044ProcessExitCodeVerbose{})
	var code, sig int64
	if rc, ok := v.ReturnCode.Get(); ok && rc.Set.Or(false) {
		code = int64(rc.Number.Or(0))
	}
	if s, ok := v.Signal.Get(); ok {
		if id, ok := s.ID.Get(); ok && id.Set.Or(false) {
			sig = int64(id.Number.Or(0))
		}
	}
	return fmt.Sprintf("%d:%d", code, sig)
}

func tresString(list v0044.V0044TresList, withBilling bool) (string, int64) {
	var parts []string
	var cpus int64
	for _, t := range list {
		name := t.Type
		if n := t.Name.Or(""); n != "" {
			name += "/" + n
		}
		count := t.Count.Or(0)
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

func jobRow(j *v0044.V0044Job, head string, now int64) row {
	t := j.Time.Or(v0044.V0044JobTime{})
	st := j.State.Or(v0044.V0044JobState{})
	state := ""
	if len(st.Current) > 0 {
		state = string(st.Current[0])
	}
	if state == "CANCELLED" {
		if u := j.KillRequestUser.Or(""); u != "" {
			state += " by " + uidOf(u)
		}
	}
	alloc, cpus := tresString(j.Tres.Or(v0044.V0044JobTres{}).Allocated, true)
	req, _ := tresString(j.Tres.Or(v0044.V0044JobTres{}).Requested, true)
	r := row{jobID: head, rawID: strconv.FormatInt(int64(j.JobID.Or(0)), 10), name: j.Name.Or(""), partition: j.Partition.Or(""),
		account: j.Account.Or(""), user: j.User.Or(""), group: j.Group.Or(""), cluster: j.Cluster.Or(""), qos: j.Qos.Or(""),
		state: state, exitCode: exitString(j.ExitCode), derived: exitString(j.DerivedExitCode),
		nnodes: int64(j.AllocationNodes.Or(0)), submit: t.Submission.Or(0), eligible: t.Eligible.Or(0),
		start: t.Start.Or(0), end: t.End.Or(0), elapsed: int64(t.Elapsed.Or(0)), reason: st.Reason.Or(""),
		workDir: j.WorkingDirectory.Or(""), submitLine: j.SubmitLine.Or(""), allocTRES: alloc, reqTRES: req,
		restarts: int64(j.RestartCnt.Or(0)), killUser: j.KillRequestUser.Or(""), allocCPUs: cpus}
	if r.nodes = j.Nodes.Or(""); r.nodes == "" {
		r.nodes = "None assigned"
	}
	if r.start != 0 && r.end == 0 {
		r.elapsed = now - r.start
	}
	req0 := j.Required.Or(v0044.V0044JobRequired{})
	r.reqCPUs = int64(req0.CPUs.Or(0))
	if m, ok := req0.MemoryPerNode.Get(); ok && m.Set.Or(false) {
		r.reqMem = strconv.FormatInt(m.Number.Or(0), 10) + "M"
	} else if m, ok := req0.MemoryPerCPU.Get(); ok && m.Set.Or(false) {
		r.reqMem = strconv.FormatInt(m.Number.Or(0), 10) + "Mc"
	}
	if l, ok := t.Limit.Get(); ok {
		switch {
		case l.Infinite.Or(false):
			r.timelimit, r.timelimitRaw = "UNLIMITED", "UNLIMITED"
		case l.Set.Or(false):
			mins := l.Number.Or(0)
			r.timelimit = timefmt.Limit{Minutes: uint32(mins)}.Padded()
			r.timelimitRaw = strconv.FormatInt(int64(mins), 10)
		default:
			r.timelimit, r.timelimitRaw = "Partition_Limit", "Partition_Limit"
		}
	}
	if p, ok := j.Priority.Get(); ok {
		r.priority = strconv.FormatInt(int64(p.Number.Or(0)), 10)
	}
	r.userCPU = cpuSecs(t.User.Or(v0044.V0044JobTimeUser{}).Seconds.Or(0), t.User.Or(v0044.V0044JobTimeUser{}).Microseconds.Or(0))
	r.sysCPU = cpuSecs(t.System.Or(v0044.V0044JobTimeSystem{}).Seconds.Or(0), t.System.Or(v0044.V0044JobTimeSystem{}).Microseconds.Or(0))
	r.totalCPU = r.userCPU + r.sysCPU
	r.comment = j.Comment.Or(v0044.V0044JobComment{}).Job.Or("")
	r.constraints, r.container, r.extra, r.failedNode = j.Constraints.Or(""), j.Container.Or(""), j.Extra.Or(""), j.FailedNode.Or("")
	var flags []string
	for _, f := range j.Flags {
		flags = append(flags, string(f))
	}
	r.flags = strings.Join(flags, ",")
	r.licenses, r.qosReq = j.Licenses.Or(""), j.Qosreq.Or("")
	res := j.Reservation.Or(v0044.V0044JobReservation{})
	r.reservation, r.reservationID = res.Name.Or(""), int64(res.ID.Or(0))
	r.stdout, r.stderr, r.stdin = j.StdoutExpanded.Or(j.Stdout.Or("")), j.StderrExpanded.Or(j.Stderr.Or("")), j.StdinExpanded.Or(j.Stdin.Or(""))
	r.wckey = j.Wckey.Or(v0044.V0044WckeyTagStruct{}).Wckey
	r.assocID = int64(j.Association.Or(v0044.V0044AssocShort{}).ID.Or(0))
	// slurmdbd's job record has no requested node count: the nodes it
	// ran on, once it ran.
	r.reqNodes = r.nnodes
	r.jobNum, r.run = r.rawID, uint32(r.restarts)
	if v, ok := t.Suspended.Get(); ok {
		r.suspended = int64(v)
	}
	return r
}

func stepRow(s *v0044.V0044Step, job *row, now int64) row {
	ss := s.Step.Or(v0044.V0044StepStep{})
	_, suffix, _ := strings.Cut(ss.ID.Or(""), ".")
	t := s.Time.Or(v0044.V0044StepTime{})
	alloc, cpus := tresString(s.Tres.Or(v0044.V0044StepTres{}).Allocated, false)
	state := ""
	if len(s.State) > 0 {
		state = string(s.State[0])
	}
	nodes := s.Nodes.Or(v0044.V0044StepNodes{})
	r := row{step: true, jobID: strings.SplitN(job.jobID, ".", 2)[0] + "." + suffix, rawID: job.rawID + "." + suffix,
		name: ss.Name.Or(""), account: job.account, cluster: job.cluster, state: state, exitCode: exitString(s.ExitCode),
		nodes: nodes.Range.Or(""), nnodes: int64(nodes.Count.Or(0)), ntasks: strconv.FormatInt(int64(s.Tasks.Or(v0044.V0044StepTasks{}).Count.Or(0)), 10),
		elapsed: int64(t.Elapsed.Or(0)), allocTRES: alloc, allocCPUs: cpus, reqMem: job.reqMem}
	if v, ok := t.Start.Get(); ok {
		r.start = v.Number.Or(0)
	}
	if v, ok := t.End.Get(); ok {
		r.end = v.Number.Or(0)
	}
	r.submit, r.eligible = r.start, r.start
	if r.start != 0 && r.end == 0 {
		r.elapsed = now - r.start
	}
	var single string
	if r.nnodes == 1 {
		single = r.nodes
	}
	ntasks := int64(s.Tasks.Or(v0044.V0044StepTasks{}).Count.Or(0))
	r.use, r.hasUsage = parseUse(s.Tres.Or(v0044.V0044StepTres{}), single, ntasks)
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
	r.layout = s.Task.Or(v0044.V0044StepTask{}).Distribution.Or("")
	r.assocID = job.assocID
	if v, ok := t.Suspended.Get(); ok {
		r.suspended = int64(v)
	}
	r.userCPU = cpuSecs(t.User.Or(v0044.V0044StepTimeUser{}).Seconds.Or(0), int64(t.User.Or(v0044.V0044StepTimeUser{}).Microseconds.Or(0)))
	r.sysCPU = cpuSecs(t.System.Or(v0044.V0044StepTimeSystem{}).Seconds.Or(0), int64(t.System.Or(v0044.V0044StepTimeSystem{}).Microseconds.Or(0)))
	r.totalCPU = r.userCPU + r.sysCPU
	return r
}

func cpuSecs(s, us int64) float64 { return float64(s) + float64(us)/1e6 }

// tresCount is a TRES's count in a list (0: not there).
func tresCount(list []v0044.V0044Tres, name string) int64 {
	for _, t := range list {
		n := t.Type
		if s := t.Name.Or(""); s != "" {
			n += "/" + s
		}
		if n == name {
			return t.Count.Or(0)
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
