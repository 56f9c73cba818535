package v0044

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/outpattern"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

func caller(ctx context.Context) controller.Identity {
	c, _ := authctx.From(ctx)
	return c.Identity
}

// visibleJobs keeps the jobs ctx's caller may see: with PrivateData=jobs
// a user sees only their own, as slurmctld filters its job lists.
func (s *Server) visibleJobs(ctx context.Context, jobs []*job.Job) []*job.Job {
	who := caller(ctx)
	if !s.ctl.HidesJobsFrom(who) {
		return jobs
	}
	out := jobs[:0:0]
	for _, j := range jobs {
		if j.Req.UserID == who.UID {
			out = append(out, j)
		}
	}
	return out
}

// jobQueryFailed is the answer to a query of one job that failed: 404
// for an unknown job with slurmrestd's other members beside the error,
// 403 for one PrivateData hides.
func (s *Server) jobQueryFailed(ctx context.Context, err error, source, id string) *api.V0044OpenapiJobInfoRespStatusCode {
	e := apiError(err, source)
	e.Description = api.NewOptString("Unable to query JobId=" + id)
	status := 404
	if slurmerr.CodeOf(err) == slurmerr.AccessDenied {
		status = 403
	}
	return &api.V0044OpenapiJobInfoRespStatusCode{StatusCode: status, Response: api.V0044OpenapiJobInfoResp{
		Jobs: api.V0044JobInfoMsg{}, LastBackfill: u64(0), LastUpdate: u64(0),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{},
	}}
}

// hiddenJob refuses a single job hidden by PrivateData=jobs, as
// slurmctld refuses it ("Access/permission denied").
func (s *Server) hiddenJob(ctx context.Context, jobs []*job.Job) error {
	if len(jobs) > 0 && len(s.visibleJobs(ctx, jobs)) == 0 {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	return nil
}

// SlurmV0044PostJobSubmit implements POST /job/submit.
func (s *Server) SlurmV0044PostJobSubmit(ctx context.Context, req api.OptV0044JobSubmitReq) (api.SlurmV0044PostJobSubmitRes, error) {
	s.count(ctx, "REQUEST_SUBMIT_BATCH_JOB")
	fail := func(status int, err error, source string) (api.SlurmV0044PostJobSubmitRes, error) {
		return &api.V0044OpenapiJobSubmitResponseStatusCode{StatusCode: status, Response: api.V0044OpenapiJobSubmitResponse{
			Meta: s.meta(ctx), Errors: errorsOf(err, source), Warnings: api.V0044OpenapiWarnings{},
		}}, nil
	}
	r, ok := req.Get()
	desc, hasJob := r.Job.Get()
	if hasJob && desc.Script.Or("") == "" && r.Script.Or("") != "" {
		// The top-level "script" stands for the job's own, as the
		// document says and slurmrestd accepts.
		desc.Script = r.Script
	}
	var subs []controller.Submission
	het := ok && !hasJob && len(r.Jobs) > 0
	switch {
	case het:
		// A heterogeneous job: the script is the top-level one or the
		// first component's, run by the first component for all.
		first := &r.Jobs[0]
		if first.Script.Or("") == "" {
			first.Script = r.Script
		}
		if first.Script.Or("") == "" {
			return fail(422, slurmerr.New(slurmerr.InvalidQuery, `Populated "script" field is required for job submission`), "_job_post")
		}
		for i := range r.Jobs {
			d := &r.Jobs[i]
			if i > 0 && len(d.Environment) == 0 {
				d.Environment = first.Environment
			}
			sub, err := submissionFromWire(d, s.ctl.MaxArraySize())
			if err != nil {
				return fail(422, err, "_job_post")
			}
			subs = append(subs, sub)
		}
	case !ok || !hasJob || desc.Script.Or("") == "":
		return fail(422, slurmerr.New(slurmerr.InvalidQuery, `Populated "script" field is required for job submission`), "_job_post")
	default:
		sub, err := submissionFromWire(&desc, s.ctl.MaxArraySize())
		if err != nil {
			return fail(422, err, "_job_post")
		}
		subs = append(subs, sub)
	}
	var res controller.SubmitResult
	var err error
	if het {
		res, err = s.ctl.SubmitHet(ctx, caller(ctx), subs)
	} else {
		res, err = s.ctl.Submit(ctx, caller(ctx), subs[0])
	}
	if err != nil {
		e := apiError(err, "slurm_submit_batch_job()")
		e.Description = api.NewOptString("Batch job submission failed")
		if d := detailOf(err); d != "" {
			e.Description = api.NewOptString(d)
		}
		return &api.V0044OpenapiJobSubmitResponseStatusCode{StatusCode: failoverStatus(err, 500), Response: api.V0044OpenapiJobSubmitResponse{
			Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{},
		}}, nil
	}
	warnings := warningsOf(res.Warnings, "_job_post")
	if res.RC != slurmerr.NoError {
		// slurmrestd reports a submission that succeeded with a return
		// code (a held job) twice: once as the call's result, once as
		// the controller's message.
		msg := res.RC.Message()
		warnings = append(warnings, warningsOf([]string{"Job submission resulted in non-zero return code: " + msg, msg}, "slurm_submit_batch_job()")...)
	}
	return &api.V0044OpenapiJobSubmitResponse{
		JobID:            api.NewOptInt32(int32(res.JobID)),
		StepID:           api.NewOptString("batch"),
		JobSubmitUserMsg: api.NewOptString(res.UserMessage),
		Meta:             s.meta(ctx),
		Errors:           api.V0044OpenapiErrors{},
		Warnings:         warnings,
	}, nil
}

func detailOf(err error) string {
	var se *slurmerr.Error
	if ok := asSlurm(err, &se); ok {
		return se.Detail
	}
	return ""
}

// submissionFromWire translates a job description into the domain request;
// array indices must be below maxArraySize (slurm.conf MaxArraySize).
func submissionFromWire(d *api.V0044JobDescMsg, maxArraySize uint32) (controller.Submission, error) {
	r := job.Request{
		Name:         d.Name.Or(""),
		Partition:    d.Partition.Or(""),
		Script:       d.Script.Or(""),
		Argv:         []string(d.Argv),
		Environment:  []string(d.Environment),
		WorkDir:      d.CurrentWorkingDirectory.Or(""),
		StdOut:       d.StandardOutput.Or(""),
		StdErr:       d.StandardError.Or(""),
		StdIn:        d.StandardInput.Or(""),
		CPUsPerTask:  uint32(max(d.CpusPerTask.Or(0), 0)),
		Comment:      d.Comment.Or(""),
		Account:      d.Account.Or(""),
		QOS:          d.Qos.Or(""),
		Nice:         d.Nice.Or(0),
		Dependency:   d.Dependency.Or(""),
		Reservation:  d.Reservation.Or(""),
		Requeue:      d.Requeue.Or(false),
		SubmitHost:   d.AllocationNodeList.Or(""),
		NumTasks:     uint32(max(d.Tasks.Or(0), 0)),
		TasksPerNode: uint32(max(d.TasksPerNode.Or(0), 0)),
		MinNodes:     uint32(max(d.MinimumNodes.Or(0), 0)),
		MaxNodes:     uint32(max(d.MaximumNodes.Or(0), 0)),
	}
	if r.SubmitHost == "" {
		// sbatch puts the submit host in the environment.
		for _, kv := range r.Environment {
			if v, ok := strings.CutPrefix(kv, "SLURM_SUBMIT_HOST="); ok {
				r.SubmitHost = v
			}
		}
	}
	if d.Nodes.Set {
		if err := parseNodeCount(d.Nodes.Value, &r); err != nil {
			return controller.Submission{}, err
		}
	}
	for _, m := range d.OpenMode {
		if m == api.V0044JobDescMsgOpenModeItemAPPEND {
			r.OpenMode = "append"
		}
	}
	for _, sh := range d.Shared {
		_ = sh
	}
	if v, inf, ok := u32Value(d.TimeLimit); ok {
		r.TimeLimit = v
		if inf {
			r.TimeLimit = job.Infinite
		}
	}
	if v, _, ok := u32Value(d.TimeMinimum); ok {
		r.TimeMin = v
	}
	if v, _, ok := u64Value(d.MemoryPerNode); ok {
		r.MemPerNode = v
	}
	if v, _, ok := u64Value(d.MemoryPerCPU); ok {
		r.MemPerCPU = v
	}
	if v, _, ok := u64Value(d.BeginTime); ok && v > 0 {
		r.BeginTime = time.Unix(int64(v), 0)
	}
	if len(d.RequiredNodes) > 0 {
		nodes, err := expandAll(d.RequiredNodes)
		if err != nil {
			return controller.Submission{}, err
		}
		r.NodeList = nodes
	}
	if len(d.ExcludedNodes) > 0 {
		nodes, err := expandAll(d.ExcludedNodes)
		if err != nil {
			return controller.Submission{}, err
		}
		r.Exclude = nodes
	}
	for _, f := range d.Flags {
		_ = f
	}
	if err := applyTRES(&r, d.TresPerNode.Or(""), d.TresPerJob.Or("")); err != nil {
		return controller.Submission{}, err
	}
	if err := applyTRESPerTask(&r, d.TresPerTask.Or("")); err != nil {
		return controller.Submission{}, err
	}
	if v := d.KillWarningSignal.Or(""); v != "" {
		sig, err := parseSignal(v)
		if err != nil {
			return controller.Submission{}, slurmerr.New(slurmerr.InvalidQuery, "invalid kill_warning_signal %q", v)
		}
		// Without a time, Slurm warns 60 seconds ahead.
		r.Warn = job.Warning{Signal: sig, Seconds: 60}
		if delay, ok := d.KillWarningDelay.Get(); ok && delay.Set.Or(false) {
			r.Warn.Seconds = uint32(max(delay.Number.Or(0), 0))
		}
		for _, f := range d.KillWarningFlags {
			switch f {
			case api.V0044JobDescMsgKillWarningFlagsItemBATCHJOB:
				r.Warn.BatchOnly = true
			case api.V0044JobDescMsgKillWarningFlagsItemRESERVATIONJOB:
				r.Warn.Reservation = true
			}
		}
	}
	if a := d.Array.Or(""); a != "" {
		// The configured bound, not a larger one: the expression expands
		// to a list of every index, so "0-2000000000" must be refused
		// before it is built.
		spec, err := arrayspec.Parse(a, maxArraySize)
		if err != nil {
			return controller.Submission{}, slurmerr.New(slurmerr.InvalidArray, "%v", err)
		}
		r.Array = job.ArraySpec{Expr: a, Tasks: spec.Tasks, MaxRunning: spec.MaxRunning}
	}
	for _, sh := range d.Shared {
		if sh == api.V0044JobDescMsgSharedItemNone {
			r.Exclusive = true
		}
	}
	if v, _, ok := u32Value(d.RequiredSwitches); ok && v > 0 {
		r.MaxSwitches = v
		r.SwitchWait = defaultSwitchWait
		if w, ok := d.WaitForSwitch.Get(); ok && w >= 0 {
			r.SwitchWait = time.Duration(w) * time.Second
		}
	}
	sub := controller.Submission{Req: r, Hold: d.Hold.Or(false), RequeueSet: d.Requeue.Set}
	if uid := d.UserID.Or(""); uid != "" {
		n, err := strconv.ParseUint(uid, 10, 32)
		if err != nil {
			return controller.Submission{}, slurmerr.New(slurmerr.InvalidQuery, "invalid user_id %q", uid)
		}
		sub.Req.UserID = uint32(n)
		sub.UserIDSet = true
	}
	if gid := d.GroupID.Or(""); gid != "" {
		n, err := strconv.ParseUint(gid, 10, 32)
		if err != nil {
			return controller.Submission{}, slurmerr.New(slurmerr.InvalidQuery, "invalid group_id %q", gid)
		}
		sub.Req.GroupID = uint32(n)
		sub.GroupIDSet = true
	}
	return sub, nil
}

// parseNodeCount reads "N" or "min-max".
func parseNodeCount(s string, r *job.Request) error {
	lo, hi, found := strings.Cut(s, "-")
	a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 32)
	if err != nil {
		return slurmerr.New(slurmerr.InvalidNodeCount, "invalid node count %q", s)
	}
	r.MinNodes = uint32(a)
	if found {
		b, err := strconv.ParseUint(strings.TrimSpace(hi), 10, 32)
		if err != nil {
			return slurmerr.New(slurmerr.InvalidNodeCount, "invalid node count %q", s)
		}
		r.MaxNodes = uint32(b)
	}
	return nil
}

func expandAll(items []string) ([]string, error) {
	var out []string
	for _, it := range items {
		names, err := hostlist.Expand(it)
		if err != nil {
			return nil, slurmerr.New(slurmerr.InvalidNodeName, "invalid node list %q: %v", it, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

// applyTRES reads GPU requests from tres_per_node ("gres/gpu:a100:2") and
// tres_per_job ("gres/gpu:4").
func applyTRES(r *job.Request, perNode, perJob string) error {
	for _, spec := range []struct {
		s       string
		perNode bool
	}{{perNode, true}, {perJob, false}} {
		for _, item := range strings.Split(spec.s, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name := strings.TrimPrefix(item, "gres/")
			parts := strings.Split(name, ":")
			if parts[0] != "gpu" {
				return slurmerr.New(slurmerr.InvalidGRES, "unsupported TRES %q", item)
			}
			count := uint64(1)
			typ := ""
			switch len(parts) {
			case 1:
			case 2:
				n, err := strconv.ParseUint(parts[1], 10, 32)
				if err != nil {
					typ = parts[1]
				} else {
					count = n
				}
			case 3:
				typ = parts[1]
				n, err := strconv.ParseUint(parts[2], 10, 32)
				if err != nil {
					return slurmerr.New(slurmerr.InvalidGRES, "invalid count in %q", item)
				}
				count = n
			default:
				return slurmerr.New(slurmerr.InvalidGRES, "invalid TRES %q", item)
			}
			r.GPUType = typ
			if spec.perNode {
				r.GPUsPerNode = uint32(count)
				r.Gres = "gres/" + name
			} else {
				r.GPUsPerJob = uint32(count)
			}
		}
	}
	return nil
}

// applyTRESPerTask reads tres_per_task ("gres/gpu=2", from --gpus-per-task
// or --tres-per-task): the job asks for that many GPUs per task. The
// request counts GPUs per node or per job, so they become per node when
// every node's task count is known (one node, or --ntasks-per-node), else
// per job; CPUs and other TRES per task are not requests of their own.
func applyTRESPerTask(r *job.Request, perTask string) error {
	var gpus job.Request
	var items []string
	for _, item := range strings.Split(perTask, ",") {
		if item = strings.TrimSpace(item); strings.HasPrefix(item, "gres/gpu") {
			// srun writes "gres/gpu=2" or "gres/gpu:a100=2".
			items = append(items, strings.Replace(item, "=", ":", 1))
		}
	}
	if len(items) == 0 {
		return nil
	}
	if err := applyTRES(&gpus, "", strings.Join(items, ",")); err != nil {
		return err
	}
	tasks := max(r.NumTasks, 1)
	r.GPUType = gpus.GPUType
	switch {
	case r.TasksPerNode > 0:
		r.GPUsPerNode = gpus.GPUsPerJob * r.TasksPerNode
		r.Gres = "gres/gpu:" + strconv.FormatUint(uint64(r.GPUsPerNode), 10)
	case r.MinNodes <= 1 && r.MaxNodes <= 1:
		r.GPUsPerNode = gpus.GPUsPerJob * tasks
		r.Gres = "gres/gpu:" + strconv.FormatUint(uint64(r.GPUsPerNode), 10)
	default:
		r.GPUsPerJob = gpus.GPUsPerJob * tasks
	}
	return nil
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func startTimeOf(j *job.Job) time.Time {
	if j.State == job.Pending {
		return j.PlannedStart
	}
	return j.StartTime
}

// commandOf is the script's path as submitted (argv[0]); --wrap and stdin
// scripts have none.
func commandOf(r *job.Request) string {
	if len(r.Argv) == 0 {
		return ""
	}
	return r.Argv[0]
}

func stdinOf(r *job.Request) string {
	if r.StdIn == "" {
		return "/dev/null"
	}
	return r.StdIn
}

// stdoutOf is the output pattern, or Slurm's default name.
func stdoutOf(j *job.Job) string {
	if j.Req.StdOut != "" {
		return j.Req.StdOut
	}
	return outpattern.Default(j.IsArray())
}

func (s *Server) expand(j *job.Job, pattern string) string {
	if pattern == "" {
		return ""
	}
	v := outpattern.Values{
		JobID:       uint32(j.ID),
		ArrayJobID:  uint32(j.ID),
		ArrayTaskID: job.NoTask,
		JobName:     j.Req.Name,
		User:        j.Req.UserName,
		StepID:      outpattern.BatchStep,
	}
	if j.IsArray() {
		v.ArrayJobID = uint32(j.ArrayJobID)
		v.ArrayTaskID = j.ArrayTaskID
	}
	if j.BatchHost != "" {
		v.NodeName = j.BatchHost
	}
	return outpattern.Resolve(j.Req.WorkDir, outpattern.Expand(pattern, v))
}

func jobStateItems(j *job.Job) []api.V0044JobInfoJobStateItem {
	out := []api.V0044JobInfoJobStateItem{api.V0044JobInfoJobStateItem(j.State.String())}
	if j.Completing {
		out = append(out, api.V0044JobInfoJobStateItemCOMPLETING)
	}
	return out
}

// exitCode renders the process exit status as slurmctld reports it.
func exitCode(j *job.Job) api.V0044ProcessExitCodeVerbose {
	e := api.V0044ProcessExitCodeVerbose{
		ReturnCode: api.NewOptV0044Uint32NoValStruct(u32(uint32(j.ExitCode))),
		Signal: api.NewOptV0044ProcessExitCodeVerboseSignal(api.V0044ProcessExitCodeVerboseSignal{
			ID:   api.NewOptV0044Uint16NoValStruct(u16Unset()),
			Name: api.NewOptString(""),
		}),
	}
	switch {
	case j.Signal != 0:
		e.Status = []api.V0044ProcessExitCodeVerboseStatusItem{api.V0044ProcessExitCodeVerboseStatusItemSIGNALED}
		e.ReturnCode = api.NewOptV0044Uint32NoValStruct(u32Unset())
		e.Signal = api.NewOptV0044ProcessExitCodeVerboseSignal(api.V0044ProcessExitCodeVerboseSignal{
			ID:   api.NewOptV0044Uint16NoValStruct(u16(uint32(j.Signal))),
			Name: api.NewOptString(signalName(j.Signal)),
		})
	case j.ExitCode != 0:
		e.Status = []api.V0044ProcessExitCodeVerboseStatusItem{api.V0044ProcessExitCodeVerboseStatusItemERROR}
	default:
		e.Status = []api.V0044ProcessExitCodeVerboseStatusItem{api.V0044ProcessExitCodeVerboseStatusItemSUCCESS}
	}
	return e
}

func signalName(sig int32) string {
	name := syscall.Signal(sig).String()
	// Go spells them "terminated"; Slurm prints the short name.
	names := map[int32]string{1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 6: "ABRT", 7: "BUS", 8: "FPE", 9: "KILL", 10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM", 17: "CHLD", 18: "CONT", 19: "STOP", 20: "TSTP", 24: "XCPU", 25: "XFSZ"}
	if n, ok := names[sig]; ok {
		return n
	}
	return name
}

func memPerNode(j *job.Job) uint64 {
	if j.Req.MemPerNode > 0 {
		return j.Req.MemPerNode
	}
	if j.Alloc != nil && len(j.Alloc.Nodes) > 0 {
		return j.Alloc.Nodes[0].MemMB
	}
	return 0
}

func tresPerNode(r *job.Request) string {
	if r.GPUsPerNode == 0 {
		return ""
	}
	if r.GPUType != "" {
		return fmt.Sprintf("gres/gpu:%s:%d", r.GPUType, r.GPUsPerNode)
	}
	return fmt.Sprintf("gres/gpu:%d", r.GPUsPerNode)
}

func tresPerJob(r *job.Request) string {
	if r.GPUsPerJob == 0 {
		return ""
	}
	if r.GPUType != "" {
		return fmt.Sprintf("gres/gpu:%s:%d", r.GPUType, r.GPUsPerJob)
	}
	return fmt.Sprintf("gres/gpu:%d", r.GPUsPerJob)
}

func jobResources(j *job.Job) api.V0044JobRes {
	res := api.V0044JobRes{
		SelectType:     []api.V0044JobResSelectTypeItem{api.V0044JobResSelectTypeItemCORE},
		Cpus:           int32(j.Alloc.TotalCPUs()),
		ThreadsPerCore: u16Unset(),
	}
	nodes := api.V0044JobResNodes{
		Count:      api.NewOptInt32(int32(len(j.Alloc.Nodes))),
		SelectType: []api.V0044JobResNodesSelectTypeItem{api.V0044JobResNodesSelectTypeItemONEROW},
		List:       api.NewOptString(hostlist.Compress(j.Alloc.NodeNames())),
		Whole:      api.NewOptBool(j.Req.Exclusive),
	}
	for i, na := range j.Alloc.Nodes {
		nodes.Allocation = append(nodes.Allocation, api.V0044JobResNode{
			Index:   int32(i),
			Name:    na.Node,
			Cpus:    api.NewOptV0044JobResNodeCpus(api.V0044JobResNodeCpus{Count: api.NewOptInt32(int32(na.CPUs)), Used: api.NewOptInt32(0)}),
			Memory:  api.NewOptV0044JobResNodeMemory(api.V0044JobResNodeMemory{Used: api.NewOptInt64(0), Allocated: api.NewOptInt64(int64(na.MemMB))}),
			Sockets: api.V0044JobResSocketArray{},
		})
	}
	res.Nodes = api.NewOptV0044JobResNodes(nodes)
	return res
}

// parseSelector reads "123", "123_4", "123_[1-3]"; task ids must be below
// maxArraySize, which also bounds the list a selector expands to.
func parseSelector(s string, maxArraySize uint32) (controller.JobSelector, error) {
	s = strings.TrimSpace(s)
	invalid := slurmerr.New(slurmerr.InvalidJobID, "Invalid job id: %s", s)
	if lead, off, het := strings.Cut(s, "+"); het {
		// ID+OFFSET names one component of a heterogeneous job.
		l, err1 := strconv.ParseUint(lead, 10, 32)
		o, err2 := strconv.ParseUint(off, 10, 32)
		if err1 != nil || err2 != nil || l == 0 {
			return controller.JobSelector{}, invalid
		}
		return controller.JobSelector{ID: job.ID(l), Het: true, HetOffset: uint32(o)}, nil
	}
	idPart, taskPart, hasTask := strings.Cut(s, "_")
	id, err := strconv.ParseUint(idPart, 10, 32)
	if err != nil || id == 0 {
		return controller.JobSelector{}, invalid
	}
	sel := controller.JobSelector{ID: job.ID(id)}
	if hasTask {
		expr := strings.TrimSuffix(strings.TrimPrefix(taskPart, "["), "]")
		spec, err := arrayspec.Parse(expr, maxArraySize)
		if err != nil {
			return controller.JobSelector{}, invalid
		}
		sel.Tasks = spec.Tasks
	}
	return sel, nil
}

// SlurmV0044GetJob implements GET /job/{job_id}.
func (s *Server) SlurmV0044GetJob(ctx context.Context, params api.SlurmV0044GetJobParams) (api.SlurmV0044GetJobRes, error) {
	s.count(ctx, "REQUEST_JOB_INFO_SINGLE")
	sel, err := parseSelector(params.JobID, s.ctl.MaxArraySize())
	var jobs []*job.Job
	if err == nil {
		jobs, err = s.ctl.Job(sel)
		if err == nil && sel.Tasks != nil {
			jobs = narrowTasks(jobs, sel.Tasks)
		}
		if err == nil {
			err = s.hiddenJob(ctx, jobs)
		}
	}
	if err != nil {
		return s.jobQueryFailed(ctx, err, "_handle_job_get", params.JobID), nil
	}
	jw := s.jobWriter(fieldsel.From(ctx))
	out := make(api.V0044JobInfoMsg, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jw.write(j))
	}
	return &api.V0044OpenapiJobInfoResp{Jobs: out, LastBackfill: u64(0), LastUpdate: u64(unix(s.ctl.LastJobUpdate())),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// narrowTasks keeps, for a task selector on a pending array, the
// meta-record (as slurmctld answers for a not-yet-split task).
func narrowTasks(jobs []*job.Job, _ []uint32) []*job.Job { return jobs }

// SlurmV0044GetJobs implements GET /jobs/. ServeJobList answers the same
// request with the records streamed; this is the path for requests it
// leaves to the generated server.
func (s *Server) SlurmV0044GetJobs(ctx context.Context, params api.SlurmV0044GetJobsParams) (api.SlurmV0044GetJobsRes, error) {
	resp, jobs, fail := s.jobList(ctx, params)
	if fail != nil {
		return fail, nil
	}
	jw := s.jobWriter(fieldsel.From(ctx))
	resp.Jobs = make(api.V0044JobInfoMsg, 0, len(jobs))
	for _, j := range jobs {
		resp.Jobs = append(resp.Jobs, jw.write(j))
	}
	return resp, nil
}

// jobList is GET /jobs/'s answer without its records, and the jobs whose
// records it lists; or the error answer.
func (s *Server) jobList(ctx context.Context, params api.SlurmV0044GetJobsParams) (*api.V0044OpenapiJobInfoResp, []*job.Job, *api.V0044OpenapiJobInfoRespStatusCode) {
	s.count(ctx, "REQUEST_JOB_INFO")
	last := unix(s.ctl.LastJobUpdate())
	unchanged := false
	if t, ok := params.UpdateTime.Get(); ok && t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, nil, &api.V0044OpenapiJobInfoRespStatusCode{StatusCode: 422, Response: api.V0044OpenapiJobInfoResp{
				Jobs: api.V0044JobInfoMsg{}, LastBackfill: u64(0), LastUpdate: u64(0),
				Meta: s.meta(ctx), Errors: errorsOf(slurmerr.New(slurmerr.DataConvFailed, "invalid update_time %q", t), "update_time"), Warnings: api.V0044OpenapiWarnings{},
			}}
		}
		// As slurm_load_jobs(update_time): nothing when no job changed
		// since then (slurmctld's "no change in data"), otherwise every
		// job, not only the changed ones, so that a client polling with
		// the last_update it was given can replace its whole list.
		unchanged = last < n
	}
	var jobs []*job.Job
	if !unchanged {
		jobs = s.visibleJobs(ctx, s.ctl.Jobs(controller.JobFilter{}))
	}
	return &api.V0044OpenapiJobInfoResp{Jobs: api.V0044JobInfoMsg{}, LastBackfill: u64(0), LastUpdate: u64(last),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, jobs, nil
}

// SlurmV0044DeleteJob implements DELETE /job/{job_id}: errors are reported
// inside status[] with HTTP 200, as slurmrestd does.
func (s *Server) SlurmV0044DeleteJob(ctx context.Context, params api.SlurmV0044DeleteJobParams) (api.SlurmV0044DeleteJobRes, error) {
	s.count(ctx, "REQUEST_KILL_JOB")
	sig := int32(syscall.SIGKILL)
	if v, ok := params.Signal.Get(); ok && v != "" {
		n, err := parseSignal(v)
		if err != nil {
			return &api.V0044OpenapiKillJobRespStatusCode{StatusCode: 422, Response: api.V0044OpenapiKillJobResp{
				Status: api.V0044KillJobsRespMsg{}, Meta: s.meta(ctx), Errors: errorsOf(err, "signal"), Warnings: api.V0044OpenapiWarnings{}}}, nil
		}
		sig = n
	}
	var kf controller.KillFlags
	if f, ok := params.Flags.Get(); ok {
		kf.Batch = f == api.SlurmV0044DeleteJobFlagsBATCHJOB
		kf.Full = f == api.SlurmV0044DeleteJobFlagsFULLJOB
	}
	out := api.V0044KillJobsRespMsg{}
	// slurmrestd lists only failures here: a successful cancel answers
	// an empty status[].
	if st := s.cancelOne(ctx, params.JobID, sig, kf); st.Error.Value.Code.Or(0) != 0 {
		out = append(out, st)
	}
	return &api.V0044OpenapiKillJobResp{Status: out, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

func (s *Server) cancelOne(ctx context.Context, id string, sig int32, kf controller.KillFlags) api.V0044KillJobsRespJob {
	st := api.V0044KillJobsRespJob{
		StepID:     id,
		JobID:      u32Unset(),
		Federation: api.NewOptV0044KillJobsRespJobFederation(api.V0044KillJobsRespJobFederation{Sibling: api.NewOptString("")}),
		Error:      api.NewOptV0044KillJobsRespJobError(api.V0044KillJobsRespJobError{Code: api.NewOptInt32(0), String: api.NewOptString("No error"), Message: api.NewOptString("No error")}),
	}
	var err error
	if jobPart, stepPart, isStep := strings.Cut(id, "."); isStep {
		// "12.3": one step (scancel JOB.STEP).
		jobID, jerr := strconv.ParseUint(jobPart, 10, 32)
		stepID, serr := strconv.ParseUint(stepPart, 10, 32)
		if jerr != nil || serr != nil || jobID == 0 {
			err = slurmerr.New(slurmerr.InvalidJobID, "")
		} else {
			st.JobID = u32(uint32(jobID))
			err = s.ctl.SignalStep(ctx, caller(ctx), job.ID(jobID), uint32(stepID), sig)
		}
	} else {
		var sel controller.JobSelector
		sel, err = parseSelector(id, s.ctl.MaxArraySize())
		if err == nil {
			st.JobID = u32(uint32(sel.ID))
			err = s.ctl.Cancel(ctx, caller(ctx), controller.CancelRequest{Sel: sel, Signal: sig, Flags: kf})
		}
	}
	if err != nil {
		code := slurmerr.CodeOf(err)
		if code == slurmerr.InvalidJobID {
			st.JobID = u32Unset()
		}
		st.Error = api.NewOptV0044KillJobsRespJobError(api.V0044KillJobsRespJobError{Code: api.NewOptInt32(int32(code)), String: api.NewOptString(code.Message()), Message: api.NewOptString(code.Message())})
	}
	return st
}

// parseSignal accepts "SIGTERM", "TERM" or "15".
func parseSignal(v string) (int32, error) {
	if n, err := strconv.ParseInt(v, 10, 32); err == nil && n > 0 && n < 65 {
		return int32(n), nil
	}
	name := strings.TrimPrefix(strings.ToUpper(v), "SIG")
	for n, s := range map[int32]string{1: "HUP", 2: "INT", 3: "QUIT", 6: "ABRT", 9: "KILL", 10: "USR1", 12: "USR2", 14: "ALRM", 15: "TERM", 18: "CONT", 19: "STOP", 20: "TSTP"} {
		if s == name {
			return n, nil
		}
	}
	return 0, slurmerr.New(slurmerr.InvalidQuery, "invalid signal %q", v)
}

// SlurmV0044DeleteJobs implements DELETE /jobs/.
func (s *Server) SlurmV0044DeleteJobs(ctx context.Context, req api.OptV0044KillJobsMsg) (api.SlurmV0044DeleteJobsRes, error) {
	s.count(ctx, "REQUEST_KILL_JOBS")
	m, _ := req.Get()
	sig := int32(syscall.SIGKILL)
	if v, ok := m.Signal.Get(); ok && v != "" {
		n, err := parseSignal(v)
		if err != nil {
			return &api.V0044OpenapiKillJobsRespStatusCode{StatusCode: 422, Response: api.V0044OpenapiKillJobsResp{
				Status: api.V0044KillJobsRespMsg{}, Meta: s.meta(ctx), Errors: errorsOf(err, "signal"), Warnings: api.V0044OpenapiWarnings{}}}, nil
		}
		sig = n
	}
	var kf controller.KillFlags
	for _, f := range m.Flags {
		switch f {
		case api.V0044KillJobsMsgFlagsItemBATCHJOB:
			kf.Batch = true
		case api.V0044KillJobsMsgFlagsItemFULLJOB:
			kf.Full = true
		}
	}
	ids := []string(m.Jobs)
	if len(ids) == 0 {
		// Filters select jobs from the current list.
		who := caller(ctx)
		for _, j := range s.ctl.Jobs(controller.JobFilter{}) {
			if j.State.Terminal() {
				continue
			}
			if u, ok := m.UserName.Get(); ok && u != "" && u != j.Req.UserName {
				continue
			}
			if p, ok := m.Partition.Get(); ok && p != "" && p != j.Req.Partition {
				continue
			}
			if n, ok := m.JobName.Get(); ok && n != "" && n != j.Req.Name {
				continue
			}
			if j.Req.UserID != who.UID && !s.ctl.Privileged(who) {
				continue
			}
			ids = append(ids, strconv.FormatUint(uint64(j.ID), 10))
		}
	}
	sort.Strings(ids)
	out := api.V0044KillJobsRespMsg{}
	for _, id := range ids {
		out = append(out, s.cancelOne(ctx, id, sig, kf))
	}
	return &api.V0044OpenapiKillJobsResp{Status: out, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmV0044PostJob implements POST /job/{job_id} (update).
func (s *Server) SlurmV0044PostJob(ctx context.Context, req api.OptV0044JobDescMsg, params api.SlurmV0044PostJobParams) (api.SlurmV0044PostJobRes, error) {
	s.count(ctx, "REQUEST_UPDATE_JOB")
	fail := func(err error, source string) (api.SlurmV0044PostJobRes, error) {
		e := apiError(err, source)
		if !e.Description.IsSet() || e.Description.Value == "" {
			e.Description = api.NewOptString("Job update requested failed")
		}
		return &api.V0044OpenapiJobPostResponseStatusCode{StatusCode: httpStatus(err), Response: api.V0044OpenapiJobPostResponse{
			Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	sel, err := parseSelector(params.JobID, s.ctl.MaxArraySize())
	if err != nil {
		return fail(err, "_job_post_update")
	}
	d, _ := req.Get()
	u, err := updateFromWire(&d)
	if err != nil {
		return fail(err, "_job_post_update")
	}
	if err := s.ctl.Update(ctx, caller(ctx), sel, u); err != nil {
		// The controller's refusal, as slurmrestd reports what
		// slurm_update_job2() answered.
		return fail(err, "slurm_update_job2()")
	}
	return &api.V0044OpenapiJobPostResponse{Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

func updateFromWire(d *api.V0044JobDescMsg) (controller.JobUpdate, error) {
	var u controller.JobUpdate
	if v, inf, ok := u32Value(d.TimeLimit); ok {
		if inf {
			v = job.Infinite
		}
		u.TimeLimit = &v
	}
	if p, ok := d.Partition.Get(); ok {
		u.Partition = &p
	}
	if n, ok := d.Name.Get(); ok {
		u.Name = &n
	}
	if c, ok := d.Comment.Get(); ok {
		u.Comment = &c
	}
	if v, _, ok := u32Value(d.Priority); ok {
		u.Priority = &v
	}
	if n, ok := d.Nice.Get(); ok {
		u.Nice = &n
	}
	if h, ok := d.Hold.Get(); ok {
		u.Hold = &h
	}
	if v, _, ok := u64Value(d.BeginTime); ok {
		t := time.Unix(int64(v), 0)
		u.BeginTime = &t
	}
	if n, ok := d.MinimumNodes.Get(); ok {
		v := uint32(n)
		u.MinNodes = &v
	}
	if n, ok := d.Tasks.Get(); ok {
		v := uint32(n)
		u.NumTasks = &v
	}
	if r, ok := d.Requeue.Get(); ok {
		u.Requeue = &r
	}
	if dep, ok := d.Dependency.Get(); ok {
		u.Dependency = &dep
	}
	return u, nil
}

// defaultSwitchWait is SchedulerParameters' max_switch_wait default: how
// long a --switches job without @wait holds out for fewer switches.
const defaultSwitchWait = 300 * time.Second

// SlurmV0044PostJobAllocate implements POST /job/allocate: an allocation
// without a batch script (salloc, srun outside a job), released by its
// owner through POST /drover/v1/job/{job_id}/complete.
func (s *Server) SlurmV0044PostJobAllocate(ctx context.Context, req api.OptV0044JobAllocReq) (api.SlurmV0044PostJobAllocateRes, error) {
	s.count(ctx, "REQUEST_RESOURCE_ALLOCATION")
	fail := func(status int, err error, source string) (api.SlurmV0044PostJobAllocateRes, error) {
		return &api.V0044OpenapiJobAllocRespStatusCode{StatusCode: status, Response: api.V0044OpenapiJobAllocResp{
			Meta: s.meta(ctx), Errors: errorsOf(err, source), Warnings: api.V0044OpenapiWarnings{},
		}}, nil
	}
	r, ok := req.Get()
	desc, hasJob := r.Job.Get()
	descs := []api.V0044JobDescMsg{desc}
	switch {
	case ok && !hasJob && len(r.Hetjob) > 0:
		// A heterogeneous allocation (salloc A : B).
		descs = r.Hetjob
	case !ok || !hasJob:
		return fail(422, slurmerr.New(slurmerr.InvalidQuery, `Populated "job" field is required for job allocation`), "_job_post_allocate")
	}
	var subs []controller.Submission
	for i := range descs {
		d := &descs[i]
		if d.Script.Or("") != "" {
			return fail(422, slurmerr.New(slurmerr.InvalidQuery, "an allocation has no batch script"), "_job_post_allocate")
		}
		sub, err := submissionFromWire(d, s.ctl.MaxArraySize())
		if err != nil {
			return fail(422, err, "_job_post_allocate")
		}
		if len(sub.Req.Array.Tasks) > 0 {
			return fail(422, slurmerr.New(slurmerr.InvalidArray, "an allocation cannot be an array"), "_job_post_allocate")
		}
		sub.Req.Interactive = true
		subs = append(subs, sub)
	}
	var res controller.SubmitResult
	var err error
	if len(subs) > 1 {
		res, err = s.ctl.SubmitHet(ctx, caller(ctx), subs)
	} else {
		res, err = s.ctl.Submit(ctx, caller(ctx), subs[0])
	}
	if err != nil {
		e := apiError(err, "slurm_allocate_resources()")
		if d := detailOf(err); d != "" {
			e.Description = api.NewOptString(d)
		}
		return &api.V0044OpenapiJobAllocRespStatusCode{StatusCode: failoverStatus(err, 500), Response: api.V0044OpenapiJobAllocResp{
			Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{},
		}}, nil
	}
	return &api.V0044OpenapiJobAllocResp{
		JobID: api.NewOptInt32(int32(res.JobID)), JobSubmitUserMsg: api.NewOptString(res.UserMessage),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: warningsOf(res.Warnings, "_job_post_allocate"),
	}, nil
}
