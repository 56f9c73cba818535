package squeue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
)

// record is one line-to-be of the output: a job seen through one of its
// partitions (squeue_job_rec_t). With -P a job pending in several
// partitions gets one record per partition.
type record struct {
	job      *readmodel.Job
	part     string
	partPrio uint32
	// jobPrio is the job's priority in this partition (-P), 0 to use
	// the job's own.
	jobPrio uint32
}

// filter selects and copies the jobs to print, in the controller's order,
// as squeue's _filter_job and _filter_job_part do.
func (q *queue) filter(jobs []*readmodel.Job, now time.Time) []*record {
	o := q.opts
	var recs []*record
	for _, j := range jobs {
		if !q.keep(j, now) {
			continue
		}
		if o.priority {
			for _, p := range splitList(j.Partition) {
				if !q.keepPartition(p) {
					continue
				}
				recs = append(recs, &record{job: j, part: p, jobPrio: j.Priority})
			}
			continue
		}
		if !q.keepPartition(j.Partition) {
			continue
		}
		recs = append(recs, &record{job: j, part: j.Partition})
	}
	return recs
}

// keepPartition reports whether a job in the given (possibly
// comma-separated) partitions passes -p.
func (q *queue) keepPartition(parts string) bool {
	if q.opts.partitions == nil {
		return true
	}
	for _, p := range splitList(parts) {
		for _, want := range q.opts.partitions {
			if p == want {
				return true
			}
		}
	}
	return false
}

// keep applies every filter but the partition one. Like Slurm's, it may
// narrow an array record to the tasks -j asked for.
func (q *queue) keep(j *readmodel.Job, now time.Time) bool {
	o := q.opts
	if j.JobID == 0 {
		return false
	}
	partial := false
	if o.jobs != nil {
		match := false
		for _, s := range o.jobs {
			if (s.task == readmodel.NoVal && (s.jobID == j.ArrayJobID || s.jobID == j.JobID)) ||
				(s.task == j.ArrayTaskID && s.jobID == j.ArrayJobID) {
				match = true
				break
			}
			if s.task != readmodel.NoVal && s.jobID == j.ArrayJobID && j.ArrayTaskStr != "" {
				if tasks, ok := jobfmt.ParseTaskSet(j.ArrayTaskStr); ok && tasks.Contains(s.task) {
					match, partial = true, true
					break
				}
			}
			if j.HetJobID != 0 && s.jobID == j.HetJobID {
				match = true
				break
			}
		}
		if !match {
			return false
		}
	}
	if o.licenses != nil && !matchLicenses(j.Licenses, o.licenses) {
		return false
	}
	if o.accounts != nil && !anyFold(o.accounts, j.Account) {
		return false
	}
	if o.qos != nil && !anyFold(o.qos, j.QOS) {
		return false
	}
	if !q.keepState(j.State) {
		return false
	}
	if o.nodes != nil && !hostlist.Intersects(o.nodes, j.Nodes) {
		return false
	}
	if o.notMe && j.UserID == q.env.User.UID {
		return false
	}
	if o.users != nil && !matchUser(o.users, j) {
		return false
	}
	if o.reservation != "" {
		if j.Reservation == "" || !anyExact(splitList(o.reservation), splitList(j.Reservation)) {
			return false
		}
	}
	if o.names != nil && !anyFold(o.names, j.Name) {
		return false
	}
	if partial {
		narrowArray(j, o.jobs)
	}
	if o.runOver != 0 && (!j.State.IsRunning() || jobfmt.TimeUsed(j, now) < o.runOver) {
		return false
	}
	if o.runUnder != 0 && (!j.State.IsRunning() || jobfmt.TimeUsed(j, now) >= o.runUnder) {
		return false
	}
	return true
}

// keepState applies -t, or by default keeps the jobs that are still in the
// queue: pending, running, suspended, completing or staging out.
func (q *queue) keepState(s readmodel.State) bool {
	o := q.opts
	switch {
	case o.allStates:
		return true
	case o.states != nil:
		for _, want := range o.states {
			if want.Flags() != 0 {
				if want&s != 0 {
					return true
				}
			} else if want == s {
				return true
			}
		}
		return false
	}
	return s.IsPending() || s.IsRunning() || s.IsStageOut() || s.IsSuspended() || s.IsCompleting()
}

// narrowArray keeps only the tasks of an array meta record that -j named:
// a single task prints as "131_3", several as "131_[3,5]".
func narrowArray(j *readmodel.Job, sels []jobSel) {
	tasks, _ := jobfmt.ParseTaskSet(j.ArrayTaskStr)
	var want jobfmt.TaskSet
	for _, s := range sels {
		if s.jobID == j.ArrayJobID && s.task <= jobfmt.MaxTaskID {
			want.Add(s.task)
		}
	}
	tasks.Intersect(want)
	if tasks.Len() == 1 {
		j.ArrayTaskID, _ = tasks.First()
		j.ArrayTaskStr = ""
		return
	}
	j.ArrayTaskStr = tasks.String()
}

func matchLicenses(have string, want []string) bool {
	for _, tok := range splitList(have) {
		name, _, _ := strings.Cut(tok, ":")
		for _, w := range want {
			if name == w {
				return true
			}
		}
	}
	return false
}

func matchUser(users []userSel, j *readmodel.Job) bool {
	for _, u := range users {
		if u.hasUID && u.uid == j.UserID {
			return true
		}
		if !u.hasUID && u.name == j.UserName && j.UserName != "" {
			return true
		}
	}
	return false
}

func anyFold(list []string, v string) bool {
	if v == "" {
		return false
	}
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

func anyExact(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// resolveNodes maps -w names to node names as squeue does before loading
// jobs: "localhost" is this host, and every name must be a node the
// controller knows ("Invalid node name X" otherwise).
func (q *queue) resolveNodes(ctx context.Context) error {
	o, env := q.opts, q.env
	if o.nodes == nil {
		return nil
	}
	ans, err := readmodel.GetNodes(ctx, env.Client, readmodel.NodesDefault)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_node error: %s\n", transportError(err))
		return &exitError{1}
	}
	switch {
	case ans.Status < 0:
		return errors.New("unexpected node list response")
	case ans.Failed():
		fmt.Fprintf(env.Stderr, "slurm_load_node error: %s\n", problemError(ans.Status, ans.Errors))
		return &exitError{1}
	}
	known := map[string]string{}
	for _, n := range ans.Records {
		name := n.Name
		known[name] = name
		if h := n.Hostname; h != "" {
			if _, dup := known[h]; !dup {
				known[h] = name
			}
		}
	}
	mapped := make([]string, 0, len(o.nodes))
	for _, n := range o.nodes {
		look := n
		if strings.EqualFold(n, "localhost") {
			look, _, _ = strings.Cut(env.Hostname, ".")
		}
		name, found := known[look]
		if !found {
			fmt.Fprintf(env.Stderr, "%s: error: Invalid node name %s\n", env.Prog, n)
			return &exitError{1}
		}
		mapped = append(mapped, name)
	}
	o.nodes = mapped
	return nil
}

// problemError is restError over a read answer's errors[].
func problemError(status int, errs []readmodel.Problem) error {
	for _, e := range errs {
		if e.Error != "" {
			return &slurmError{msg: e.Error}
		}
	}
	return &slurmError{msg: "Unexpected message received", cause: fmt.Errorf("HTTP status %d", status)}
}
