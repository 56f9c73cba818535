package scancel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// selection is the job list scancel works through when it has to look at
// the jobs before signalling them (a signal, a filter, -b or -i).
type selection struct {
	jobs []readmodel.Job
	// live marks records still to consider: Slurm zeroes the job id of the
	// others.
	live []bool
	// targets mirror options.targets; done marks those settled.
	done    []bool
	found   []bool
	pending []bool
}

// signalSelected loads the jobs, checks the ids given, applies the filters
// and signals what is left, pending jobs first (so none of them starts
// while running ones are being cancelled), as scancel's default path does.
func (c *canceller) signalSelected(ctx context.Context) int {
	jobs, err := c.loadJobs(ctx)
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_jobs error: %s\n", err)
		return 1
	}
	s := &selection{jobs: jobs, live: make([]bool, len(jobs))}
	for i := range jobs {
		s.live[i] = jobs[i].JobID != 0 && !jobs[i].State.IsFinished()
	}
	rc := c.verify(s)
	if c.opts.filtered() {
		c.filter(s)
	}
	rc = max(rc, c.cancelPass(ctx, s, true))
	rc = max(rc, c.cancelPass(ctx, s, false))
	return rc
}

// loadJobs is GET /jobs with every job (SHOW_ALL).
func (c *canceller) loadJobs(ctx context.Context) ([]readmodel.Job, error) {
	ans, err := readmodel.GetJobs(ctx, c.env.Client, readmodel.JobsAll)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", connectionMessage, readmodel.ClientError(err))
	}
	switch {
	case ans.Status < 0:
		return nil, errors.New("unexpected job list response")
	case ans.Failed():
		for _, p := range ans.Errors {
			if p.Number == 0 {
				continue
			}
			if p.Error == "" {
				return nil, errors.New(slurmerr.Code(p.Number).Message())
			}
			return nil, errors.New(p.Error)
		}
		return nil, fmt.Errorf("%s (HTTP %d)", slurmerr.Unspecified.Message(), ans.Status)
	}
	jobs := make([]readmodel.Job, len(ans.Records))
	for i := range ans.Records {
		jobs[i] = ans.Records[i].Job
	}
	return jobs, nil
}

// matches reports whether record j is one the target names
// (_verify_job_ids' test).
func matches(t Target, j *readmodel.Job) bool {
	switch t.Task {
	case readmodel.NoVal:
		return t.JobID == j.JobID || t.JobID == j.ArrayJobID
	case AllTasks:
		return t.JobID == j.ArrayJobID
	}
	if t.JobID != j.ArrayJobID {
		return false
	}
	if j.ArrayTaskID == t.Task {
		return true
	}
	tasks, ok := jobfmt.ParseTaskSet(j.ArrayTaskStr)
	return ok && tasks.Contains(t.Task)
}

// verify checks that every target names a live job. Records no target
// names are dropped; targets naming nothing are reported ("Invalid job id
// specified", unless -Q) and make the exit code 1.
func (c *canceller) verify(s *selection) int {
	n := len(c.opts.targets)
	s.done, s.found, s.pending = make([]bool, n), make([]bool, n), make([]bool, n)
	if n == 0 {
		return 0
	}
	for i := range s.jobs {
		if !s.live[i] {
			continue
		}
		j := &s.jobs[i]
		referenced := false
		for k, t := range c.opts.targets {
			if matches(t, j) {
				s.found[k], referenced = true, true
				if j.State.IsPending() {
					s.pending[k] = true
				}
			}
		}
		s.live[i] = referenced
	}
	rc := 0
	for k, t := range c.opts.targets {
		if s.found[k] {
			continue
		}
		rc = 1
		s.done[k] = true
		if c.opts.verbose >= 0 {
			c.errorf("Kill job error on job id %s: %s", t, errInvalidJobID.Message())
		}
	}
	return rc
}

// filter drops the records that fail a filter, and jobs that are no longer
// pending, running or suspended.
func (c *canceller) filter(s *selection) {
	o := c.opts
	kept := 0
	for i := range s.jobs {
		if !s.live[i] {
			continue
		}
		j := &s.jobs[i]
		base := j.State.Base()
		keep := base == readmodel.StatePending || base == readmodel.StateRunning || base == readmodel.StateSuspended
		keep = keep && (o.account == "" || j.Account == o.account)
		keep = keep && (o.jobName == "" || j.Name == o.jobName)
		keep = keep && (o.partition == "" || j.Partition == o.partition)
		keep = keep && (o.qos == "" || j.QOS == o.qos)
		keep = keep && (o.reservation == "" || j.Reservation == o.reservation)
		keep = keep && (!o.hasState || base == o.state)
		keep = keep && (o.user == "" || userMatches(o.user, j))
		keep = keep && (o.nodelist == nil || hostlist.Intersects(o.nodelist, j.Nodes))
		keep = keep && (o.wckey == "" || wckeyMatches(o.wckey, j.WCKey))
		s.live[i] = keep
		if keep {
			kept++
		}
	}
	if kept == 0 && o.verbose > 0 {
		c.errorf("No active jobs match ALL job filters, including: %s", o.filterText())
	}
}

// userMatches compares -u (a name or a uid) with a job's owner.
func userMatches(user string, j *readmodel.Job) bool {
	if uid, err := strconv.ParseUint(user, 10, 32); err == nil {
		return uint32(uid) == j.UserID
	}
	return user == j.UserName
}

// wckeyMatches applies --wckey: a job's default wckey ("*name") matches
// "name" unless the option itself starts with '*'.
func wckeyMatches(want, have string) bool {
	if !strings.HasPrefix(want, "*") {
		have = strings.TrimPrefix(have, "*")
	}
	return want == have
}

// cancelPass signals the selected jobs: with pendingOnly, only those
// pending (or, with ids, the ids that named a pending job).
func (c *canceller) cancelPass(ctx context.Context, s *selection, pendingOnly bool) int {
	rc := 0
	if len(c.opts.targets) > 0 {
		for k, t := range c.opts.targets {
			if pendingOnly && !s.pending[k] {
				continue
			}
			for i := range s.jobs {
				if s.done[k] || !s.live[i] || !matches(t, &s.jobs[i]) {
					continue
				}
				j := &s.jobs[i]
				id := jobIDString(j, t.Task)
				if c.opts.interactive && !c.confirm(j, id) {
					s.done[k] = true
					continue
				}
				rc = max(rc, c.kill(ctx, id))
				if t.Task == readmodel.NoVal || t.Task == AllTasks {
					s.live[i] = false
				} else {
					s.done[k] = true
				}
			}
		}
		return rc
	}
	for i := range s.jobs {
		j := &s.jobs[i]
		if !s.live[i] || (pendingOnly && j.State != readmodel.StatePending) {
			continue
		}
		id := jobIDString(j, readmodel.NoVal)
		if c.opts.interactive && !c.confirm(j, id) {
			s.live[i] = false
			continue
		}
		rc = max(rc, c.kill(ctx, id))
		s.live[i] = false
	}
	return rc
}

// jobIDString names a record to the controller as scancel's
// _build_jobid_str does: the task asked for, the pending tasks of an array
// meta record ("131_[2-9]", without the throttle), the task a record
// stands for, or the plain job id.
func jobIDString(j *readmodel.Job, task uint32) string {
	switch {
	case task != readmodel.NoVal && task != AllTasks:
		return strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" + strconv.FormatUint(uint64(task), 10)
	case j.ArrayTaskStr != "":
		tasks, _, _ := strings.Cut(j.ArrayTaskStr, "%")
		return strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_[" + tasks + "]"
	case j.IsArrayTask():
		return strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" + strconv.FormatUint(uint64(j.ArrayTaskID), 10)
	}
	return strconv.FormatUint(uint64(j.JobID), 10)
}

// killMsg is the DELETE /jobs body for the options' filters and signal.
func (c *canceller) killMsg() v0044.V0044KillJobsMsg {
	o := c.opts
	opt := func(s string) v0044.OptString {
		if s == "" {
			return v0044.OptString{}
		}
		return v0044.NewOptString(s)
	}
	m := v0044.V0044KillJobsMsg{
		Account:     opt(o.account),
		JobName:     opt(o.jobName),
		Partition:   opt(o.partition),
		Qos:         opt(o.qos),
		Reservation: opt(o.reservation),
		Signal:      v0044.NewOptString(signalParam(c.signal())),
		UserName:    opt(o.user),
		Wckey:       opt(o.wckey),
		Flags:       c.flags(),
	}
	if _, err := strconv.ParseUint(o.user, 10, 32); err == nil {
		m.UserID = v0044.NewOptString(o.user)
	}
	if o.hasState {
		m.JobState = []v0044.V0044KillJobsMsgJobStateItem{v0044.V0044KillJobsMsgJobStateItem(o.state.String())}
	}
	if o.nodelist != nil {
		m.Nodes = v0044.V0044HostlistString(o.nodelist)
	}
	if o.verbose > 0 {
		m.Flags = append(m.Flags, v0044.V0044KillJobsMsgFlagsItemVERBOSE)
	}
	return m
}

// signalThroughController hands the whole request to the controller in
// one DELETE /jobs (scancel --ctld) and reports its per-job answers.
func (c *canceller) signalThroughController(ctx context.Context) int {
	o := c.opts
	msg := c.killMsg()
	msg.Jobs = append(v0044.V0044KillJobsMsgJobsArray{}, o.operands...)
	res, err := c.env.Client.SlurmV0044DeleteJobs(ctx, v0044.NewOptV0044KillJobsMsg(msg))
	if err != nil {
		c.errorf("%s", connectionMessage)
		return int(errConnection)
	}
	status, errs, ok := killJobsResult(res)
	if !ok {
		code, m := firstError(errs)
		if code == 0 {
			code, m = slurmerr.Unspecified, slurmerr.Unspecified.Message()
		}
		c.errorf("%s", m)
		return int(code)
	}
	success := false
	for _, s := range status {
		code, m := statusError(s)
		if code == 0 {
			success = true
		}
		if o.verbose <= 0 && (code == errAlreadyDone || code == errInvalidJobID) {
			continue
		}
		id := s.StepID
		if id == "" {
			id = strconv.Itoa(int(s.JobID.Number.Or(0)))
		}
		switch {
		case code != 0:
			c.errorf("Kill job error on job id %s: %s", id, m)
		case o.signal == 0:
			c.verbosef("Terminating %sjob %s", c.jobType(), id)
		default:
			c.verbosef("Signal %d to %sjob %s", o.signal, c.jobType(), id)
		}
	}
	if o.verbose > 0 && o.filtered() && (len(status) == 0 || !success) {
		c.errorf("No active jobs match ALL job filters, including: %s", o.filterText())
	}
	return 0
}

// killJobsResult unpacks a DELETE /jobs answer; ok is false for an error
// status.
func killJobsResult(res v0044.SlurmV0044DeleteJobsRes) (v0044.V0044KillJobsRespMsg, v0044.V0044OpenapiErrors, bool) {
	switch r := res.(type) {
	case *v0044.V0044OpenapiKillJobsResp:
		return r.Status, r.Errors, true
	case *v0044.V0044OpenapiKillJobsRespStatusCode:
		return r.Response.Status, r.Response.Errors, false
	}
	return nil, nil, false
}
