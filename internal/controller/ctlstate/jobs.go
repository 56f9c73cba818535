package ctlstate

import (
	"slices"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

func (s *State) applySubmit(c *Command) Result {
	subs := c.Het
	if len(subs) == 0 {
		subs = []*SubmitCmd{c.Submit}
	}
	if c.Request != nil {
		if first, ok := s.Submitted(c.Request.RequestKey, c.Time); ok {
			// A retry: it answers what the first did, and the scripts
			// stored with it belong to no job.
			res := Result{JobID: first.JobID, Repeated: &first}
			for _, sub := range subs {
				if sub.ScriptKey != "" {
					res.Unreferenced = append(res.Unreferenced, sub.ScriptKey)
				}
			}
			return res
		}
	}
	for _, sub := range subs {
		if !sub.Limits {
			continue
		}
		if err := s.SubmitLimitErr(&sub.Req, sub.PartQOS); err != nil {
			// Its script stays in the store: a submission with the same
			// script may be on its way, and the controller refuses most
			// before they store one.
			return Result{Err: err}
		}
	}
	leader := s.NextJobID
	for i, sub := range subs {
		j := s.submitOne(sub, c.Time)
		if len(c.Het) > 0 {
			j.HetJobID, j.HetJobOffset, j.HetSize = leader, uint32(i), uint32(len(subs))
		}
	}
	res := Result{JobID: leader}
	if c.Request != nil {
		s.rememberRequest(*c.Request, res, subs[0].Hold != job.NotHeld, c.Time)
	}
	return res
}

// submitOne queues one job record with the next id.
func (s *State) submitOne(sub *SubmitCmd, t time.Time) *job.Job {
	id := s.NextJobID
	s.NextJobID++
	s.SubmitSeq++
	j := &job.Job{
		ID:           id,
		Req:          sub.Req,
		ScriptKey:    sub.ScriptKey,
		State:        job.Pending,
		Reason:       job.ReasonNone,
		Hold:         sub.Hold,
		Priority:     sub.Priority,
		SubmitTime:   t,
		EligibleTime: t,
		ArrayTaskID:  job.NoTask,
	}
	if len(j.Req.Array.Tasks) > 0 {
		j.ArrayJobID = id
		j.PendingTasks = slices.Clone(j.Req.Array.Tasks)
	}
	if j.Hold != job.NotHeld {
		j.Priority = 0
		j.Reason = job.ReasonHeldUser
		if j.Hold == job.HeldAdmin {
			j.Reason = job.ReasonHeldAdmin
		}
	}
	if !j.Req.BeginTime.IsZero() && j.Req.BeginTime.After(t) {
		j.EligibleTime = j.Req.BeginTime
	}
	s.touch(j, t)
	s.insert(j)
	s.Counters.Submitted++
	return j
}

func (s *State) applyStart(c *Command) Result {
	var res Result
	skip := s.partialHetStarts(c.Start.Starts)
	for _, st := range c.Start.Starts {
		j := s.Jobs[st.JobID]
		if j == nil || j.State != job.Pending || j.Hold != job.NotHeld || skip[j.HetJobID] {
			continue
		}
		target := j
		if st.Task != job.NoTask {
			if !j.IsArrayMeta() {
				continue
			}
			if target = s.splitTask(j, st.Task, c.Time); target == nil {
				continue
			}
		}
		alloc := st.Alloc
		target.Alloc = &alloc
		target.State = job.Running
		target.Reason = job.ReasonNone
		target.StartTime = c.Time
		target.EndTime = endTime(c.Time, target.Req.TimeLimit)
		target.WarnSent = false
		target.PlannedStart = time.Time{}
		target.Backfilled = st.Backfill
		if len(alloc.Nodes) > 0 {
			target.BatchHost = alloc.Nodes[0].Node
		}
		s.touch(target, c.Time)
		s.Counters.Started++
		res.Started = append(res.Started, StartEntry{JobID: target.ID, Task: st.Task, Alloc: alloc})
	}
	return res
}

// partialHetStarts lists the heterogeneous jobs some of whose components
// the starts leave out or cannot start: their components start together
// or not at all.
func (s *State) partialHetStarts(starts []StartEntry) map[job.ID]bool {
	var starting map[job.ID]int
	for _, st := range starts {
		if j := s.Jobs[st.JobID]; j != nil && j.IsHet() {
			if starting == nil {
				starting = map[job.ID]int{}
			}
			if j.State == job.Pending && j.Hold == job.NotHeld {
				starting[j.HetJobID]++
			}
		}
	}
	var skip map[job.ID]bool
	for leader, n := range starting {
		if l := s.Jobs[leader]; l == nil || n != int(l.HetSize) {
			if skip == nil {
				skip = map[job.ID]bool{}
			}
			skip[leader] = true
		}
	}
	return skip
}

// splitTask gives a pending array task its own record, as slurmctld splits
// a task off the array's pending record when it starts, is cancelled or
// is updated on its own. The last pending task takes over the array's own
// record. It returns nil when the task is not pending in meta.
func (s *State) splitTask(meta *job.Job, task uint32, t time.Time) *job.Job {
	idx := slices.Index(meta.PendingTasks, task)
	if idx < 0 {
		return nil
	}
	s.touch(meta, t)
	if len(meta.PendingTasks) == 1 {
		meta.PendingTasks = nil
		meta.ArrayTaskID = task
		return meta
	}
	rec := meta.Clone()
	rec.ID = s.NextJobID
	s.NextJobID++
	rec.ArrayTaskID = task
	rec.PendingTasks = nil
	meta.PendingTasks = slices.Delete(meta.PendingTasks, idx, idx+1)
	s.touch(rec, t)
	s.insert(rec)
	return rec
}

// endTime is when a job started at start hits its limit. A job without a
// limit shows an end a year away, as slurmctld reports it; such jobs are
// never timed out (enforceTimeLimits skips them).
func endTime(start time.Time, limitMin uint32) time.Time {
	if limitMin == job.Infinite || limitMin == 0 {
		return start.Add(365 * 24 * time.Hour)
	}
	return start.Add(time.Duration(limitMin) * time.Minute)
}

func (s *State) applyEnd(c *Command) Result {
	e := c.End
	j := s.Jobs[e.JobID]
	if j == nil || j.Alloc == nil {
		return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "job %d not running", e.JobID)}
	}
	ran := j.State == job.Running
	if ran {
		j.State = e.State
		j.EndTime = c.Time
		s.count(e.State)
	}
	if j.State.Terminal() && j.Completing {
		// Cancelled or timed out earlier: keep that state, record how the
		// processes ended.
		j.Completing = false
	}
	j.ExitCode, j.Signal = e.ExitCode, e.Signal
	j.BatchUsage = e.Usage
	switch {
	case j.State == job.Failed && e.Signal != 0:
		// slurmctld's FAIL_SIGNAL: the script died of a signal.
		j.Reason = job.ReasonRaisedSignal
	case j.State == job.Failed:
		j.Reason = job.ReasonNonZeroExitCode
	case j.State == job.Timeout:
		j.Reason = job.ReasonTimeLimit
	case j.State == job.NodeFail:
		j.Reason = job.ReasonNodeDown
	}
	j.Completing = false
	s.touch(j, c.Time)
	res := Result{Ended: []job.ID{j.ID}}
	if ran {
		// A run cancelled or timed out was recorded when that was decided.
		res.Runs = []job.Job{*j}
	}
	s.endHetSiblings(j, c.Time, &res)
	return res
}

func (s *State) count(st job.State) {
	switch st {
	case job.Completed:
		s.Counters.Completed++
	case job.Cancelled:
		s.Counters.Cancelled++
	default:
		s.Counters.Failed++
	}
}

func (s *State) applyCancel(c *Command) Result {
	var res Result
	state := c.Cancel.State
	if state == job.Pending {
		state = job.Cancelled
	}
	for _, id := range c.Cancel.JobIDs {
		j := s.Jobs[id]
		if j == nil || j.State.Terminal() {
			continue
		}
		if j.IsArrayMeta() && len(c.Cancel.Tasks) > 0 {
			// Each cancelled pending task becomes a CANCELLED record of
			// its own, as squeue -t all shows them.
			for _, task := range c.Cancel.Tasks {
				if rec := s.splitTask(j, task, c.Time); rec != nil {
					s.cancelRecord(rec, c, state)
					res.Ended = append(res.Ended, rec.ID)
					res.Runs = append(res.Runs, *rec)
				}
			}
			continue
		}
		s.cancelRecord(j, c, state)
		res.Ended = append(res.Ended, id)
		res.Runs = append(res.Runs, *j)
	}
	return res
}

// cancelRecord ends one record: a pending one at once (an array's pending
// record keeps its task list, shown as N_[a-b] CANCELLED), a running one
// once its processes are gone (completing).
func (s *State) cancelRecord(j *job.Job, c *Command, state job.State) {
	j.CancelledBy = c.Cancel.UID
	j.EndTime = c.Time
	if j.State == job.Running && j.RunsScript() {
		// An allocation has no script to wait for; its steps are
		// killed on the nodes as it ends.
		j.Completing = true
	}
	j.State = state
	if c.Cancel.Reason != "" {
		j.Reason = c.Cancel.Reason
	}
	s.count(state)
	s.touch(j, c.Time)
}

func (s *State) applyUpdate(c *Command) Result {
	u := c.Update
	j := s.Jobs[u.JobID]
	if j == nil {
		return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	// The proposer checked these rules against the state it saw; the job
	// may have started or ended since (a scheduling cycle commits starts
	// concurrently), so they are checked again in log order, where the
	// answer is final: a hold must never land on a running job.
	if j.State.Terminal() {
		return Result{Err: slurmerr.New(slurmerr.AlreadyDone, "")}
	}
	if j.State != job.Pending && (u.Hold != nil || u.Partition != nil || u.MinNodes != nil || u.NumTasks != nil || u.BeginTime != nil) {
		return Result{Err: slurmerr.New(slurmerr.JobNotPending, "")}
	}
	if u.TimeLimit != nil {
		j.Req.TimeLimit = *u.TimeLimit
		if j.State == job.Running {
			j.EndTime = endTime(j.StartTime, j.Req.TimeLimit)
		}
	}
	if u.Partition != nil {
		j.Req.Partition = *u.Partition
	}
	if u.Name != nil {
		j.Req.Name = *u.Name
	}
	if u.Comment != nil {
		j.Req.Comment = *u.Comment
	}
	if u.Nice != nil {
		j.Priority = uint32(max(int64(j.Priority)+int64(j.Req.Nice)-int64(*u.Nice), 1))
		j.Req.Nice = *u.Nice
	}
	if u.Priority != nil {
		j.Priority = *u.Priority
		j.PrioritySet = *u.Priority > 0
		switch {
		case j.State != job.Pending:
		case *u.Priority == 0:
			j.Hold = job.HeldAdmin
			j.Reason = job.ReasonHeldAdmin
		case j.Hold != job.NotHeld:
			// A held job is one with priority 0: giving it a priority
			// releases it, as in slurmctld.
			j.Hold = job.NotHeld
			j.Reason = job.ReasonNone
		}
	}
	if u.Hold != nil {
		j.Hold = *u.Hold
		switch j.Hold {
		case job.NotHeld:
			if j.Priority == 0 {
				j.Priority = BasePriority(s.SubmitSeq)
			}
			j.Reason = job.ReasonNone
		case job.HeldUser:
			j.Priority, j.Reason = 0, job.ReasonHeldUser
		case job.HeldAdmin:
			j.Priority, j.Reason = 0, job.ReasonHeldAdmin
		}
	}
	if u.BeginTime != nil {
		j.Req.BeginTime = *u.BeginTime
		j.EligibleTime = *u.BeginTime
	}
	if u.MinNodes != nil {
		j.Req.MinNodes = *u.MinNodes
	}
	if u.NumTasks != nil {
		j.Req.NumTasks = *u.NumTasks
	}
	if u.Requeue != nil {
		j.Req.Requeue = *u.Requeue
	}
	if u.Dependency != nil {
		j.Req.Dependency = *u.Dependency
	}
	s.touch(j, c.Time)
	return Result{JobID: j.ID}
}

func (s *State) applyRequeue(c *Command) Result {
	j := s.Jobs[c.Requeue.JobID]
	if j == nil {
		return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	if c.Requeue.OnEnd {
		if j.State != job.Running || j.Completing {
			return Result{Err: slurmerr.New(slurmerr.TransitionStateNoUpdate, "")}
		}
		j.RequeueOnEnd, j.RequeueHold, j.RequeueAs = true, c.Requeue.Hold, c.Requeue.As
		s.touch(j, c.Time)
		return Result{JobID: j.ID}
	}
	if c.Requeue.IfRunning && j.State != job.Running {
		if j.Completing {
			// It was ending anyway: it ended without running.
			j.Completing = false
			s.touch(j, c.Time)
		}
		return Result{JobID: j.ID}
	}
	res := Result{JobID: j.ID}
	as := j.RequeueAs
	if run := s.requeue(j, c.Time, c.Requeue.Hold, c.Requeue.Reason, as, c.RequeueDelay); run != nil {
		res.Runs = []job.Job{*run}
	}
	s.requeueHetSiblings(j, c.Time, c.Requeue.Hold, c.Requeue.Reason, as, c.RequeueDelay, &res)
	return res
}

// requeue puts a job back in the queue under the same id, as a new run
// that may begin after delay, and returns the run that ended (nil for a
// job that had finished), in state as.
func (s *State) requeue(j *job.Job, t time.Time, hold bool, reason job.Reason, as job.State, delay time.Duration) *job.Job {
	var run *job.Job
	if j.State == job.Running || j.Completing {
		r := *j
		r.State, r.EndTime, r.Completing = as, t, false
		run = &r
	}
	j.RequeueAs = job.Pending
	j.State = job.Pending
	j.Alloc = nil
	j.BatchHost = ""
	j.StartTime, j.EndTime = time.Time{}, time.Time{}
	j.Completing = false
	j.RequeueOnEnd, j.RequeueHold = false, false
	j.Backfilled = false
	j.ExitCode, j.Signal = 0, 0
	j.RestartCount++
	j.SubmitTime = t
	j.EligibleTime = t
	if delay > 0 {
		j.Req.BeginTime = t.Add(delay)
		j.EligibleTime = j.Req.BeginTime
	}
	j.Reason = reason
	if j.Reason == "" {
		j.Reason = job.ReasonNone
	}
	if hold {
		j.Hold = job.HeldAdmin
		j.Priority = 0
		j.Reason = job.ReasonHeldAdmin
	}
	s.touch(j, t)
	return run
}

// hetSiblings returns the components of leader l's heterogeneous job
// other than l itself.
func (s *State) hetSiblings(l *job.Job) []*job.Job {
	if !l.IsHetLeader() {
		return nil
	}
	var out []*job.Job
	for _, id := range l.HetComponents()[1:] {
		if c := s.Jobs[id]; c != nil {
			out = append(out, c)
		}
	}
	return out
}

// endHetSiblings ends the running components of leader l's job as l
// ended: its batch script was theirs too.
func (s *State) endHetSiblings(l *job.Job, t time.Time, res *Result) {
	for _, c := range s.hetSiblings(l) {
		if c.State != job.Running {
			continue
		}
		if c.Alloc != nil {
			res.EndSteps = append(res.EndSteps, StepsOn{c.ID, c.Alloc.NodeNames()})
		}
		c.State, c.Reason, c.EndTime = l.State, l.Reason, t
		c.ExitCode, c.Signal = l.ExitCode, l.Signal
		c.Completing = false
		s.count(c.State)
		s.touch(c, t)
		res.Ended = append(res.Ended, c.ID)
		res.Runs = append(res.Runs, *c)
	}
}

// requeueHetSiblings puts the other components of leader l's job back in
// the queue with it: a heterogeneous job is requeued whole.
func (s *State) requeueHetSiblings(l *job.Job, t time.Time, hold bool, reason job.Reason, as job.State, delay time.Duration, res *Result) {
	for _, c := range s.hetSiblings(l) {
		if c.State == job.Pending {
			continue
		}
		if c.Alloc != nil && c.State == job.Running {
			res.EndSteps = append(res.EndSteps, StepsOn{c.ID, c.Alloc.NodeNames()})
		}
		if run := s.requeue(c, t, hold, reason, as, delay); run != nil {
			res.Runs = append(res.Runs, *run)
		}
	}
}

// failJobsOn deals with the jobs holding a node that failed, as slurmctld
// does: a job that may be requeued (--requeue, or JobRequeue=1) goes back
// to the queue under its id as a new run, at once when the node ran its
// batch script, else once the batch host has ended the script; any other
// job ends NODE_FAIL. Ended lists the jobs that left the node, Kill the
// batch scripts that may still run (on the node itself, when an
// administrator set it DOWN).
func (s *State) failJobsOn(name string, t time.Time, delay time.Duration) Result {
	var res Result
	var hetDone map[job.ID]bool
	for _, id := range s.order {
		j := s.Jobs[id]
		if j.Alloc == nil || (j.State != job.Running && !j.Completing) {
			continue
		}
		if !slices.Contains(j.Alloc.NodeNames(), name) {
			continue
		}
		if j.IsHet() {
			// A heterogeneous job fails whole, through its leader, as
			// if the node were the leader's.
			l := s.Jobs[j.HetJobID]
			if hetDone[j.HetJobID] || l == nil || l.Alloc == nil || (l.State != job.Running && !l.Completing) {
				continue
			}
			if hetDone == nil {
				hetDone = map[job.ID]bool{}
			}
			hetDone[l.ID] = true
			j = l
		}
		s.failJob(j, name, t, delay, &res)
	}
	return res
}

// failJob deals with one job that held a failed node (a heterogeneous
// job's leader for all its components), as failJobsOn says.
func (s *State) failJob(j *job.Job, name string, t time.Time, delay time.Duration, res *Result) {
	if j.BatchHost != "" {
		res.Kill = append(res.Kill, BatchOn{j.ID, j.BatchHost})
	}
	switch {
	case j.State == job.Running && j.Req.Requeue && j.BatchHost == name:
		if run := s.requeue(j, t, j.RequeueOnEnd && j.RequeueHold, "", job.NodeFail, delay); run != nil {
			res.Runs = append(res.Runs, *run)
		}
		s.requeueHetSiblings(j, t, false, "", job.NodeFail, delay, res)
	case j.State == job.Running && j.Req.Requeue:
		// Requeued (with every component) once its batch host reports
		// the script ended.
		j.RequeueOnEnd, j.RequeueAs = true, job.NodeFail
		s.touch(j, t)
		return
	case j.State == job.Running:
		j.State = job.NodeFail
		j.Reason = job.ReasonNodeDown
		j.EndTime = t
		s.count(job.NodeFail)
		res.Runs = append(res.Runs, *j)
		s.endHetSiblings(j, t, res)
	}
	j.Completing = false
	s.touch(j, t)
	res.Ended = append(res.Ended, j.ID)
}

func (s *State) applySplit(c *Command) Result {
	meta := s.Jobs[c.Split.JobID]
	if meta == nil || !meta.IsArrayMeta() || meta.State != job.Pending {
		return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	var res Result
	for _, t := range c.Split.Tasks {
		if rec := s.splitTask(meta, t, c.Time); rec != nil {
			res.Split = append(res.Split, rec.ID)
		}
	}
	return res
}

func (s *State) applyPurge(c *Command) Result {
	kept := s.order[:0]
	purgedKeys := map[string]bool{}
	for _, id := range s.order {
		j := s.Jobs[id]
		if j.State.Terminal() && !j.Completing && j.EndTime.Before(c.Purge.Before) {
			if j.ScriptKey != "" {
				purgedKeys[j.ScriptKey] = true
			}
			delete(s.Jobs, id)
			delete(s.Steps, id)
			delete(s.NextStep, id)
			// The job stats count ended jobs too: they forget it.
			s.touched = append(s.touched, id)
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
	if len(purgedKeys) == 0 {
		return Result{}
	}
	// Tasks of an array share one script: it goes with the last of them.
	for _, id := range s.order {
		delete(purgedKeys, s.Jobs[id].ScriptKey)
	}
	res := Result{}
	for k := range purgedKeys {
		res.Unreferenced = append(res.Unreferenced, k)
	}
	slices.Sort(res.Unreferenced)
	return res
}

// BasePriority mimics priority/basic: earlier submissions rank higher.
// slurmctld counts down from 0xffff0000, but v0.0.44 carries priorities as
// int32 (uint32_no_val_struct's number is format int32), so a priority at
// or above 2^31 would reach REST clients negative or not at all; Drover
// counts down from 0x7fff0000 instead, which keeps the order.
func BasePriority(seq uint64) uint32 {
	const top = 0x7FFF0000
	if seq >= top {
		return 1
	}
	return uint32(top - seq)
}

func (s *State) applyWarn(c *Command) Result {
	j := s.Jobs[c.Warn.JobID]
	if j == nil || j.State != job.Running || !j.StartTime.Equal(c.Warn.Start) {
		return Result{}
	}
	j.WarnSent = true
	s.touch(j, c.Time)
	return Result{JobID: j.ID}
}
