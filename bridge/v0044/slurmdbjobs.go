package v0044

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/timefmt"
	"github.com/droverhq/drover/internal/usercred"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmdbV0044GetJobs implements GET /slurmdb/v0.0.44/jobs/: the job
// accounting records the query selects, each run of a job a record of
// its own with its steps, as slurmdbd answers.
func (s *Server) SlurmdbV0044GetJobs(ctx context.Context, p api.SlurmdbV0044GetJobsParams) (api.SlurmdbV0044GetJobsRes, error) {
	s.count(ctx, "DBD_GET_JOBS_COND")
	f, err := jobsFilter(p, s.now())
	if err != nil {
		return s.jobsFail(ctx, err), nil
	}
	// This cluster's jobs unless the query names clusters; "all" (sacct
	// -L, -M all) every cluster sharing the database.
	switch {
	case len(f.Clusters) == 0:
		f.Clusters = []string{s.ctl.ClusterName()}
	case slices.ContainsFunc(f.Clusters, func(c string) bool { return strings.EqualFold(c, "all") }):
		f.Clusters = nil
	}
	return s.acctJobs(ctx, f, flagSet(p.SkipSteps))
}

// SlurmdbV0044GetJob implements GET /slurmdb/v0.0.44/job/{id}: every run
// of one job (or of an array's tasks, by the array's id).
func (s *Server) SlurmdbV0044GetJob(ctx context.Context, p api.SlurmdbV0044GetJobParams) (api.SlurmdbV0044GetJobRes, error) {
	s.count(ctx, "DBD_GET_JOBS_COND")
	id, err := strconv.ParseUint(p.JobID, 10, 32)
	if err != nil {
		return s.jobsFail(ctx, slurmerr.New(slurmerr.InvalidJobID, "")), nil
	}
	res, err := s.acctJobs(ctx, acctdb.Filter{Clusters: []string{s.ctl.ClusterName()}, JobIDs: []uint32{uint32(id)}, Duplicates: true}, false)
	if err != nil {
		return nil, err
	}
	return res.(api.SlurmdbV0044GetJobRes), nil
}

func (s *Server) jobsFail(ctx context.Context, err error) *api.V0044OpenapiSlurmdbdJobsRespStatusCode {
	return &api.V0044OpenapiSlurmdbdJobsRespStatusCode{StatusCode: dbStatus(err), Response: api.V0044OpenapiSlurmdbdJobsResp{
		Jobs: api.V0044JobList{}, Meta: s.dbMeta(ctx), Errors: dbErrors(err, "_dump_jobs"), Warnings: api.V0044OpenapiWarnings{}}}
}

// acctJobs answers a job query; skipSteps leaves the steps out
// (skip_steps).
func (s *Server) acctJobs(ctx context.Context, f acctdb.Filter, skipSteps bool) (api.SlurmdbV0044GetJobsRes, error) {
	jobs, steps, err := s.ctl.AccountingJobs(ctx, caller(ctx), f)
	if err != nil {
		return s.jobsFail(ctx, err), nil
	}
	if skipSteps {
		steps = nil
	}
	out := &api.V0044OpenapiSlurmdbdJobsResp{Jobs: make(api.V0044JobList, 0, len(jobs)), Meta: s.dbMeta(ctx),
		Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}
	type key struct {
		cluster string
		id, run uint32
	}
	byRun := map[key][]acctdb.Step{}
	for _, st := range steps {
		k := key{st.Cluster, st.JobID, st.Run}
		byRun[k] = append(byRun[k], st)
	}
	tres := s.ctl.TRESNames()
	now := s.now()
	for i := range jobs {
		j := &jobs[i]
		out.Jobs = append(out.Jobs, acctJobToWire(j, byRun[key{j.Cluster, j.JobID, j.Run}], tres, now))
	}
	if len(out.Jobs) == 0 {
		out.Warnings = api.V0044OpenapiWarnings{{Description: api.NewOptString("slurmdb_jobs_get() found nothing"), Source: api.NewOptString("_dump_jobs")}}
	}
	return out, nil
}

// jobsFilter reads the query's conditions. Lists are comma-separated;
// times are Unix seconds or any time sacct takes.
func jobsFilter(p api.SlurmdbV0044GetJobsParams, now time.Time) (acctdb.Filter, error) {
	var f acctdb.Filter
	list := func(o api.OptString) []string {
		v, ok := o.Get()
		if !ok || v == "" {
			return nil
		}
		var out []string
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
		return out
	}
	f.Clusters = list(p.Cluster)
	f.Users = list(p.Users)
	f.Accounts = list(p.Account)
	f.Partitions = list(p.Partition)
	f.QOS = list(p.Qos)
	f.Names = list(p.JobName)
	for _, st := range list(p.State) {
		f.States = append(f.States, strings.ToUpper(st))
	}
	for _, id := range list(p.Step) {
		// "123", "123.batch", "123_4": the job's id selects it.
		head := id
		if i := strings.IndexAny(head, "._+"); i >= 0 {
			head = head[:i]
		}
		n, err := strconv.ParseUint(head, 10, 32)
		if err != nil {
			return f, slurmerr.New(slurmerr.InvalidJobID, "invalid job id %q", id)
		}
		f.JobIDs = append(f.JobIDs, uint32(n))
	}
	f.Groups, f.Reasons, f.Reservations, f.Nodes = list(p.Groups), list(p.Reason), list(p.Reservation), list(p.Node)
	for _, c := range list(p.ExitCode) {
		code, _, _ := strings.Cut(c, ":")
		n, err := strconv.ParseInt(code, 10, 32)
		if err != nil {
			return f, slurmerr.New(slurmerr.InvalidQuery, "invalid exit_code %q", c)
		}
		f.ExitCodes = append(f.ExitCodes, int32(n))
	}
	f.Duplicates = flagSet(p.ShowDuplicates)
	var err error
	if f.Start, err = queryTime(p.StartTime, now); err != nil {
		return f, err
	}
	if f.End, err = queryTime(p.EndTime, now); err != nil {
		return f, err
	}
	return f, nil
}

func queryTime(o api.OptString, now time.Time) (time.Time, error) {
	v, ok := o.Get()
	if !ok || v == "" {
		return time.Time{}, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	t, err := timefmt.ParseTime(v, now)
	if err != nil {
		return time.Time{}, slurmerr.New(slurmerr.InvalidTimeValue, "invalid time %q", v)
	}
	return t, nil
}

// acctJobToWire is one run as slurmdbd's v0.0.44 job record.
func acctJobToWire(j *acctdb.Job, steps []acctdb.Step, tres []string, now time.Time) api.V0044Job {
	w := api.V0044Job{
		Account: api.NewOptString(j.Account), AllocationNodes: api.NewOptInt32(int32(j.NodeCount)),
		Cluster: api.NewOptString(j.Cluster), Group: api.NewOptString(j.Group), JobID: api.NewOptInt32(int32(j.JobID)),
		Name: api.NewOptString(j.Name), Nodes: api.NewOptString(nodesOrNone(j.Nodes)), Partition: api.NewOptString(j.Partition),
		Qos: api.NewOptString(j.QOS), RestartCnt: api.NewOptInt32(int32(j.Run)), User: api.NewOptString(j.User),
		SubmitLine: api.NewOptString(j.SubmitLine), WorkingDirectory: api.NewOptString(j.WorkDir),
		Stdout: api.NewOptString(j.StdOut), Stderr: api.NewOptString(j.StdErr), Stdin: api.NewOptString(j.StdIn),
		Priority:        api.NewOptV0044Uint32NoValStruct(u32(j.Priority)),
		Hold:            api.NewOptBool(j.State == "PENDING" && j.Priority == 0),
		Flags:           []api.V0044JobFlagsItem{},
		Steps:           api.V0044StepList{},
		ExitCode:        api.NewOptV0044ProcessExitCodeVerbose(exitVerbose(j.ExitCode, j.Signal)),
		DerivedExitCode: api.NewOptV0044ProcessExitCodeVerbose(exitVerbose(j.DerivedExitCode, j.DerivedSignal)),
		State: api.NewOptV0044JobState(api.V0044JobState{
			Current: []api.V0044JobStateCurrentItem{api.V0044JobStateCurrentItem(j.State)}, Reason: api.NewOptString(reasonOrNone(j.Reason)),
		}),
		Required: api.NewOptV0044JobRequired(api.V0044JobRequired{CPUs: api.NewOptInt32(int32(j.ReqCPUs)),
			MemoryPerCPU: api.NewOptV0044Uint64NoValStruct(u64Unset()), MemoryPerNode: api.NewOptV0044Uint64NoValStruct(u64Unset())}),
		Tres: api.NewOptV0044JobTres(api.V0044JobTres{Allocated: tresOf(j.AllocTRES, tres), Requested: tresOf(j.ReqTRES, tres)}),
	}
	if j.ReqMemMB > 0 {
		if j.ReqMemPerCPU {
			w.Required.Value.MemoryPerCPU = api.NewOptV0044Uint64NoValStruct(u64(int64(j.ReqMemMB)))
		} else {
			w.Required.Value.MemoryPerNode = api.NewOptV0044Uint64NoValStruct(u64(int64(j.ReqMemMB)))
		}
	}
	if j.KilledBy >= 0 {
		w.KillRequestUser = api.NewOptString(killerName(uint32(j.KilledBy)))
	}
	arr := api.V0044JobArray{JobID: api.NewOptInt32(int32(j.ArrayJobID)), TaskID: api.NewOptV0044Uint32NoValStruct(u32Unset()), Task: api.NewOptString(j.ArrayTasks)}
	if j.ArrayTaskID != acctdb.NoTask {
		arr.TaskID = api.NewOptV0044Uint32NoValStruct(u32(j.ArrayTaskID))
	}
	w.Array = api.NewOptV0044JobArray(arr)
	if j.HetJobID != 0 {
		w.Het = api.NewOptV0044JobHet(api.V0044JobHet{JobID: api.NewOptInt32(int32(j.HetJobID)), JobOffset: api.NewOptV0044Uint32NoValStruct(u32(j.HetJobOffset))})
	}
	t := api.V0044JobTime{
		Submission: api.NewOptInt64(unixOr0(j.Submit)), Eligible: api.NewOptInt64(unixOr0(j.Eligible)),
		Start: api.NewOptInt64(unixOr0(j.Start)), End: api.NewOptInt64(unixOr0(j.End)),
		Elapsed: api.NewOptInt32(int32(elapsed(j.Start, j.End, now).Seconds())), Suspended: api.NewOptInt32(0),
		Limit: api.NewOptV0044Uint32NoValStruct(u32(j.TimeLimit)),
	}
	if j.TimeLimit == job.Infinite {
		t.Limit = api.NewOptV0044Uint32NoValStruct(u32Inf())
	}
	if !j.Start.IsZero() && !j.Eligible.IsZero() {
		t.Planned = api.NewOptV0044Uint64NoValStruct(u64(int64(j.Start.Sub(j.Eligible).Seconds())))
	}
	var user, sys time.Duration
	for _, st := range steps {
		user += st.Usage.UserCPU
		sys += st.Usage.SystemCPU
		w.Steps = append(w.Steps, acctStepToWire(j, &st, now))
	}
	t.User = api.NewOptV0044JobTimeUser(api.V0044JobTimeUser{Seconds: api.NewOptInt64(int64(user / time.Second)), Microseconds: api.NewOptInt64(int64(user%time.Second) / 1000)})
	t.System = api.NewOptV0044JobTimeSystem(api.V0044JobTimeSystem{Seconds: api.NewOptInt64(int64(sys / time.Second)), Microseconds: api.NewOptInt64(int64(sys%time.Second) / 1000)})
	tot := user + sys
	t.Total = api.NewOptV0044JobTimeTotal(api.V0044JobTimeTotal{Seconds: api.NewOptInt64(int64(tot / time.Second)), Microseconds: api.NewOptInt64(int64(tot%time.Second) / 1000)})
	w.Time = api.NewOptV0044JobTime(t)
	// Every member slurmdbd sends is there, empty where Drover keeps
	// nothing for it (comment, het, mcs, reservation, wckey...).
	fillUnset(&w)
	return w
}

// acctStepToWire is one step as slurmdbd's v0.0.44 step record.
func acctStepToWire(j *acctdb.Job, st *acctdb.Step, now time.Time) api.V0044Step {
	id := strconv.FormatUint(uint64(st.JobID), 10) + "." + stepName(st.StepID)
	w := api.V0044Step{
		ExitCode: api.NewOptV0044ProcessExitCodeVerbose(exitVerbose(st.ExitCode, st.Signal)),
		Nodes: api.NewOptV0044StepNodes(api.V0044StepNodes{Count: api.NewOptInt32(int32(st.NodeCount)), Range: api.NewOptString(st.Nodes),
			List: api.V0044Hostlist(expandOrEmpty(st.Nodes))}),
		State: []api.V0044StepStateItem{api.V0044StepStateItem(st.State)},
		Step:  api.NewOptV0044StepStep(api.V0044StepStep{ID: api.NewOptString(id), Name: api.NewOptString(st.Name)}),
		Tasks: api.NewOptV0044StepTasks(api.V0044StepTasks{Count: api.NewOptInt32(int32(st.Tasks))}),
		Tres:  api.NewOptV0044StepTres(stepUsageTRES(st)),
	}
	t := api.V0044StepTime{
		Elapsed: api.NewOptInt32(int32(elapsed(st.Start, st.End, now).Seconds())), Suspended: api.NewOptInt32(0),
		Start: api.NewOptV0044Uint64NoValStruct(u64(unixOr0(st.Start))), End: api.NewOptV0044Uint64NoValStruct(u64(unixOr0(st.End))),
		Limit: api.NewOptV0044Uint32NoValStruct(u32Inf()),
	}
	u := st.Usage
	t.User = api.NewOptV0044StepTimeUser(api.V0044StepTimeUser{Seconds: api.NewOptInt64(int64(u.UserCPU / time.Second)), Microseconds: api.NewOptInt32(int32(u.UserCPU%time.Second) / 1000)})
	t.System = api.NewOptV0044StepTimeSystem(api.V0044StepTimeSystem{Seconds: api.NewOptInt64(int64(u.SystemCPU / time.Second)), Microseconds: api.NewOptInt32(int32(u.SystemCPU%time.Second) / 1000)})
	tot := u.TotalCPU()
	t.Total = api.NewOptV0044StepTimeTotal(api.V0044StepTimeTotal{Seconds: api.NewOptInt64(int64(tot / time.Second)), Microseconds: api.NewOptInt32(int32(tot%time.Second) / 1000)})
	w.Time = api.NewOptV0044StepTime(t)
	fillUnset(&w)
	return w
}

// stepName is a step id as Slurm prints it after the job id.
func stepName(id uint32) string {
	switch id {
	case acctdb.StepBatch:
		return "batch"
	case acctdb.StepExtern:
		return "extern"
	}
	return strconv.FormatUint(uint64(id), 10)
}

func exitVerbose(code, sig int32) api.V0044ProcessExitCodeVerbose {
	return exitCode(&job.Job{ExitCode: code, Signal: sig})
}

// tresOf reads a TRES string ("cpu=1,mem=100M,node=1,gres/gpu=1") into
// slurmdbd's list, numbered as the cluster's TRES are (tresList).
func tresOf(s string, names []string) api.V0044TresList {
	out := api.V0044TresList{}
	if s == "" {
		return out
	}
	ids := map[string]int32{}
	next := int32(dynamicOffset + 1)
	for i, n := range names {
		if i < 8 {
			ids[n] = int32(i + 1)
			continue
		}
		ids[n] = next
		next++
	}
	base := map[string]int32{"cpu": 1, "mem": 2, "energy": 3, "node": 4, "billing": 5, "fs/disk": 6, "vmem": 7, "pages": 8}
	for _, kv := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var n int64
		if name == "mem" {
			t, err := job.ParseTRES("mem=" + val)
			if err != nil {
				continue
			}
			n = int64(t.MemMB)
		} else if v, err := strconv.ParseInt(val, 10, 64); err == nil {
			n = v
		}
		id, ok := ids[name]
		if !ok {
			id = base[name]
		}
		typ, sub, _ := strings.Cut(name, "/")
		out = append(out, api.V0044Tres{Type: typ, Name: api.NewOptString(sub), ID: api.NewOptInt32(id), Count: api.NewOptInt64(n)})
	}
	// slurmdbd lists them by id.
	slices.SortStableFunc(out, func(a, b api.V0044Tres) int { return cmp.Compare(a.ID.Value, b.ID.Value) })
	return out
}

func unixOr0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// elapsed is how long a run or step ran: until its end, or until now
// while it runs.
func elapsed(start, end, now time.Time) time.Duration {
	switch {
	case start.IsZero():
		return 0
	case end.IsZero():
		return now.Sub(start).Truncate(time.Second)
	}
	return end.Sub(start)
}

func nodesOrNone(n string) string {
	if n == "" {
		return "None assigned"
	}
	return n
}

func reasonOrNone(r string) string {
	if r == "" {
		return "None"
	}
	return r
}

func expandOrEmpty(nodes string) []string {
	if nodes == "" {
		return []string{}
	}
	out, err := hostlist.Expand(nodes)
	if err != nil {
		return []string{}
	}
	return out
}

// killerName names the uid that cancelled a job, or gives its number
// when this host does not know it.
func killerName(uid uint32) string {
	if id, err := usercred.Lookup(uid); err == nil {
		return id.Name
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// stepUsageTRES is a step's TRES as slurmdbd keeps them: allocated, and
// its usage over its tasks as TRES (TRESUsageIn* in "requested": CPU time
// in milliseconds, memory, bytes read, virtual memory, page faults;
// TRESUsageOut* in "consumed": bytes written), each list its largest,
// smallest, average and total task.
func stepUsageTRES(st *acctdb.Step) api.V0044StepTres {
	out := api.V0044StepTres{Allocated: tresOf(st.AllocTRES, nil),
		Requested: api.NewOptV0044StepTresRequested(api.V0044StepTresRequested{Average: api.V0044TresList{}, Max: api.V0044StepTresReqMax{}, Min: api.V0044StepTresReqMin{}, Total: api.V0044TresList{}}),
		Consumed:  api.NewOptV0044StepTresConsumed(api.V0044StepTresConsumed{Average: api.V0044TresList{}, Max: api.V0044StepTresUsageMax{}, Min: api.V0044StepTresUsageMin{}, Total: api.V0044TresList{}}),
	}
	u := st.Usage
	stats := u.Stats
	if stats.Tasks == 0 {
		if u == (acctdb.Usage{}) {
			return out
		}
		// A record from before the measures were kept: its sums as one
		// task's.
		stats.AddTask(job.Usage{UserCPU: u.UserCPU, SystemCPU: u.SystemCPU, MaxRSS: u.MaxRSS, MaxVMSize: u.MaxVMSize,
			MaxPages: u.MaxPages, MaxDiskRead: u.MaxDiskRead, MaxDiskWrite: u.MaxDiskWrite}, u.MaxRSSNode, u.MaxRSSTask)
	}
	tres := func(typ, name string, id int32, n uint64) api.V0044Tres {
		return api.V0044Tres{Type: typ, Name: api.NewOptString(name), ID: api.NewOptInt32(id), Count: api.NewOptInt64(int64(n))}
	}
	ave := func(s job.UsageStat) uint64 { return s.Tot / uint64(stats.Tasks) }
	in := func(get func(job.UsageStat) uint64) api.V0044TresList {
		l := api.V0044TresList{tres("cpu", "", 1, get(stats.CPU)), tres("mem", "", 2, get(stats.RSS)), tres("energy", "", 3, 0),
			tres("fs", "disk", 6, get(stats.Read)), tres("vmem", "", 7, get(stats.VMSize)), tres("pages", "", 8, get(stats.Pages))}
		if stats.GPUs {
			// slurmdbd numbers the gres TRES from 1001, as they are
			// added: gres/gpu first, then its memory and utilization.
			l = append(l, tres("gres", "gpumem", 1002, get(stats.GPUMem)), tres("gres", "gpuutil", 1003, get(stats.GPUUtil)))
		}
		return l
	}
	outL := func(get func(job.UsageStat) uint64) api.V0044TresList {
		return api.V0044TresList{tres("energy", "", 3, 0), tres("fs", "disk", 6, get(stats.Write))}
	}
	maxOf := func(s job.UsageStat) uint64 { return s.Max }
	minOf := func(s job.UsageStat) uint64 { return s.Min }
	totOf := func(s job.UsageStat) uint64 { return s.Tot }
	out.Requested = api.NewOptV0044StepTresRequested(api.V0044StepTresRequested{
		Max: api.V0044StepTresReqMax(in(maxOf)), Min: api.V0044StepTresReqMin(in(minOf)), Average: in(ave), Total: in(totOf)})
	out.Consumed = api.NewOptV0044StepTresConsumed(api.V0044StepTresConsumed{
		Max: api.V0044StepTresUsageMax(outL(maxOf)), Min: api.V0044StepTresUsageMin(outL(minOf)), Average: outL(ave), Total: outL(totOf)})
	return out
}
