package ctlstate

import (
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/acctrec"
	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
)

// Job accounting is written after the fact, from the state: each command
// that changes a job leaves the job's record (and its steps') in an
// outbox that is part of the state, so it is as durable as the change
// and replicated with it; the controller's accounting agent copies the
// outbox into the store and then commits an acknowledgement (OpAcctAck)
// that empties what it wrote. A store that is down or slow only lets the
// outbox grow, as slurmctld's DBD agent queue does; a restart loses
// nothing, and a record written twice (a crash between the write and the
// acknowledgement) replaces itself.

// Outbox holds the records not yet in the store, keyed by job, run
// and step, each with the sequence number of its last change.
type Outbox struct {
	Seq   uint64                 `json:"seq"`
	Jobs  map[string]*outboxJob  `json:"jobs,omitempty"`
	Steps map[string]*outboxStep `json:"steps,omitempty"`
	Usage map[string]*outboxUse  `json:"usage,omitempty"`
	// Events are nodes' periods out of service, keyed NODE@START.
	Events map[string]*outboxEvent `json:"events,omitempty"`
}

type outboxEvent struct {
	Seq uint64        `json:"seq"`
	Rec acctrec.Event `json:"rec"`
}

func (o *Outbox) putEvent(r acctrec.Event) {
	if o.Events == nil {
		o.Events = map[string]*outboxEvent{}
	}
	o.Seq++
	o.Events[r.Node+"@"+strconv.FormatInt(r.Start.UnixNano(), 10)] = &outboxEvent{Seq: o.Seq, Rec: r}
}

// nodeEvent records a node's change of service: a node that goes DOWN or
// DRAIN opens an event, one that returns closes it (slurmctld's
// clusteracct_storage_g_node_down and node_up). Its CPUs are filled in
// when the agent writes it, from the node's definition.
func (s *State) nodeEvent(name string, a *NodeAdmin, wasOut bool, t time.Time) {
	out := a.Down || a.Drain
	if !s.acctOn || out == wasOut {
		return
	}
	if out {
		state := "DRAIN"
		if a.Down {
			state = "DOWN"
		}
		a.OutSince, a.OutState, a.OutReason = t, state, a.Reason
		s.Outbox.putEvent(acctrec.Event{Node: name, Start: t, State: state, Reason: a.Reason})
		return
	}
	if !a.OutSince.IsZero() {
		s.Outbox.putEvent(acctrec.Event{Node: name, Start: a.OutSince, End: t, State: a.OutState, Reason: a.OutReason})
	}
	a.OutSince, a.OutState, a.OutReason = time.Time{}, "", ""
}

type outboxUse struct {
	Seq uint64            `json:"seq"`
	Rec acctrec.NodeUsage `json:"rec"`
}

type outboxJob struct {
	Seq uint64      `json:"seq"`
	Rec acctrec.Job `json:"rec"`
}

type outboxStep struct {
	Seq uint64       `json:"seq"`
	Rec acctrec.Step `json:"rec"`
}

// Len is the number of records waiting.
func (o *Outbox) Len() int { return len(o.Jobs) + len(o.Steps) + len(o.Usage) + len(o.Events) }

func (o *Outbox) putUsage(r acctrec.NodeUsage) {
	if o.Usage == nil {
		o.Usage = map[string]*outboxUse{}
	}
	o.Seq++
	key := strconv.FormatUint(uint64(r.JobID), 10) + "." + strconv.FormatUint(uint64(r.Run), 10) + "." +
		strconv.FormatUint(uint64(r.StepID), 10) + "@" + r.Node
	o.Usage[key] = &outboxUse{Seq: o.Seq, Rec: r}
}

func (s *State) applyStepUse(c *Command) {
	if !s.acctOn {
		return
	}
	d := c.StepUse.Report
	s.Outbox.putUsage(acctrec.NodeUsage{JobID: d.JobID, Run: c.StepUse.Run, StepID: d.StepID, Node: d.Node, Tasks: d.Tasks,
		Usage: acctrec.Usage{UserCPU: d.Usage.UserCPU, SystemCPU: d.Usage.SystemCPU, MaxRSS: d.Usage.MaxRSS, MaxRSSNode: d.Node,
			MaxRSSTask: d.MaxRSSTask, AveRSS: d.AveRSS, MaxDiskRead: d.Usage.MaxDiskRead, MaxDiskWrite: d.Usage.MaxDiskWrite,
			MaxVMSize: d.Usage.MaxVMSize, MaxPages: d.Usage.MaxPages, Stats: d.Stats}})
}

func (o *Outbox) putJob(r acctrec.Job) {
	if o.Jobs == nil {
		o.Jobs = map[string]*outboxJob{}
	}
	o.Seq++
	o.Jobs[strconv.FormatUint(uint64(r.JobID), 10)+"."+strconv.FormatUint(uint64(r.Run), 10)] = &outboxJob{Seq: o.Seq, Rec: r}
}

func (o *Outbox) putStep(r acctrec.Step) {
	if o.Steps == nil {
		o.Steps = map[string]*outboxStep{}
	}
	o.Seq++
	key := strconv.FormatUint(uint64(r.JobID), 10) + "." + strconv.FormatUint(uint64(r.Run), 10) + "." + strconv.FormatUint(uint64(r.StepID), 10)
	o.Steps[key] = &outboxStep{Seq: o.Seq, Rec: r}
}

// ack drops the entries written up to seq.
func (o *Outbox) ack(seq uint64) {
	for k, e := range o.Jobs {
		if e.Seq <= seq {
			delete(o.Jobs, k)
		}
	}
	for k, e := range o.Steps {
		if e.Seq <= seq {
			delete(o.Steps, k)
		}
	}
	for k, e := range o.Usage {
		if e.Seq <= seq {
			delete(o.Usage, k)
		}
	}
	for k, e := range o.Events {
		if e.Seq <= seq {
			delete(o.Events, k)
		}
	}
}

// markAcct notes that a job changed in the command being applied; its
// record is taken once the command is done with it (recordAcct), and the
// submit tally counts it again (tallyTouched).
func (s *State) markAcct(id job.ID) {
	s.touched = append(s.touched, id)
}

// recordAcct puts into the outbox the records of what the command just
// applied changed: the runs that ended (a requeued job's lost run among
// them) and the jobs it touched, as they are now.
func (s *State) recordAcct(res *Result) {
	if !s.acctOn || (len(s.touched) == 0 && len(res.Runs) == 0) {
		s.touched = s.touched[:0]
		return
	}
	for i := range res.Runs {
		s.putRun(&res.Runs[i], true)
	}
	seen := map[job.ID]bool{}
	// A run that ended is recorded as it ended, not as the pending
	// record it turned back into (a requeue keeps the restart count
	// until the job starts again).
	ended := map[runKey]bool{}
	for i := range res.Runs {
		ended[runKey{res.Runs[i].ID, res.Runs[i].RestartCount}] = true
	}
	for _, id := range s.touched {
		if seen[id] {
			continue
		}
		seen[id] = true
		if j := s.Jobs[id]; j != nil && !(j.State == job.Pending && ended[runKey{id, j.RestartCount}]) {
			s.putRun(j, false)
		}
	}
	s.touched = s.touched[:0]
}

type runKey struct {
	id  job.ID
	run uint32
}

// putRun records a job's run and, once it has started, its batch step.
// An ended run that is not in a terminal state went back to the queue:
// sacct shows it REQUEUED.
func (s *State) putRun(j *job.Job, ended bool) {
	rec := jobRecord(j)
	switch {
	case ended && !j.State.Terminal():
		rec.State = "REQUEUED"
	case !j.State.Terminal():
		// The end slurmctld expects for a running job is not one yet.
		rec.End = time.Time{}
	}
	s.Outbox.putJob(rec)
	if j.StartTime.IsZero() || j.BatchHost == "" || !j.RunsScript() {
		// Not started, or an allocation without a batch script.
		return
	}
	st := acctrec.Step{JobID: rec.JobID, Run: rec.Run, StepID: acctrec.StepBatch, Name: "batch",
		Nodes: j.BatchHost, NodeCount: 1, Tasks: 1, Start: j.StartTime, End: rec.End, State: rec.State,
		ExitCode: j.ExitCode, Signal: j.Signal}
	if u := j.BatchUsage; u != nil {
		st.Usage = acctrec.Usage{UserCPU: u.UserCPU, SystemCPU: u.SystemCPU, MaxRSS: u.MaxRSS, MaxRSSNode: j.BatchHost,
			AveRSS: u.MaxRSS, MaxDiskRead: u.MaxDiskRead, MaxDiskWrite: u.MaxDiskWrite, MaxVMSize: u.MaxVMSize, MaxPages: u.MaxPages}
		st.Usage.Stats.AddTask(*u, j.BatchHost, 0)
	}
	if j.Alloc != nil && len(j.Alloc.Nodes) > 0 {
		na := j.Alloc.Nodes[0]
		st.CPUs = na.CPUs
		st.AllocTRES = "cpu=" + strconv.FormatUint(uint64(na.CPUs), 10)
		if na.MemMB > 0 {
			st.AllocTRES += ",mem=" + job.FormatMemMB(na.MemMB)
		}
		st.AllocTRES += ",node=1"
	}
	switch j.State {
	case job.Cancelled:
		// The batch shell dies of the signal that cancelled it.
		st.State, st.Signal = "CANCELLED", 15
	case job.Timeout:
		st.State, st.Signal = "CANCELLED", 15
	}
	if !j.State.Terminal() && j.State != job.Running {
		// A run that went back to the queue: its batch step ended with it.
		st.State = rec.State
	}
	s.Outbox.putStep(st)
}

// putStep records one of srun's steps; end is zero while it runs.
func (s *State) putStep(j *job.Job, st *job.Step, state string, end time.Time) {
	s.putStepEnd(j, st, state, end, 0, 0)
}

// putStepEnd records one of srun's steps with its exit status.
func (s *State) putStepEnd(j *job.Job, st *job.Step, state string, end time.Time, exitCode, signal int32) {
	if !s.acctOn {
		return
	}
	rec := acctrec.Step{JobID: uint32(j.ID), Run: j.RestartCount, StepID: st.ID, Name: st.Name,
		Nodes: hostlist.Compress(st.Nodes), NodeCount: uint32(len(st.Nodes)), Tasks: st.NumTasks(),
		Start: st.StartTime, State: state, ExitCode: exitCode, Signal: signal}
	var cpus uint32
	for _, c := range st.CPUs {
		cpus += c
	}
	rec.CPUs, rec.End = cpus, end
	s.Outbox.putStep(rec)
}

// jobRecord is a run of a job as accounting keeps it.
func jobRecord(j *job.Job) acctrec.Job {
	r := j.Req
	rec := acctrec.Job{
		JobID: uint32(j.ID), Run: j.RestartCount, ArrayJobID: uint32(j.ArrayJobID), ArrayTaskID: acctrec.NoTask,
		Name: r.Name, User: r.UserName, UID: r.UserID, Group: r.GroupName, GID: r.GroupID,
		Account: r.Account, QOS: r.QOS, Partition: r.Partition, Reservation: r.Reservation,
		ReqCPUs: j.CPUCount(), Submit: j.SubmitTime, Eligible: j.EligibleTime, Start: j.StartTime, End: j.EndTime,
		TimeLimit: r.TimeLimit, Priority: j.Priority, State: j.State.String(), Reason: string(j.Reason),
		KilledBy: -1, ExitCode: j.ExitCode, Signal: j.Signal,
		WorkDir: r.WorkDir, SubmitLine: r.SubmitLine, StdOut: r.StdOut, StdErr: r.StdErr, StdIn: r.StdIn,
		ReqTRES: j.ReqTRES().String(), HetJobID: uint32(j.HetJobID), HetJobOffset: j.HetJobOffset,
	}
	if j.IsArray() && !j.IsArrayMeta() {
		rec.ArrayTaskID = j.ArrayTaskID
	}
	if j.IsArrayMeta() {
		// The tasks still pending, as squeue shows them ("2-9%2").
		rec.ArrayTasks = arrayspec.Format(j.PendingTasks, j.Req.Array.MaxRunning)
	}
	switch {
	case r.MemPerCPU > 0:
		rec.ReqMemMB, rec.ReqMemPerCPU = r.MemPerCPU, true
	case r.MemPerNode > 0:
		rec.ReqMemMB = r.MemPerNode
	}
	if j.State == job.Cancelled {
		// The signal that ended the script is its batch step's; the
		// job of a cancel ends 0:0, as slurmdbd records it.
		rec.KilledBy = int64(j.CancelledBy)
		rec.ExitCode, rec.Signal = 0, 0
	}
	if j.State.Terminal() {
		// A reason says why a job waits: slurmdbd keeps none for one
		// that ended.
		rec.Reason = ""
	}
	if j.Alloc != nil && !j.StartTime.IsZero() {
		rec.Nodes = hostlist.Compress(j.Alloc.NodeNames())
		rec.NodeCount = uint32(len(j.Alloc.Nodes))
		rec.AllocCPUs = j.Alloc.TotalCPUs()
		rec.AllocTRES = j.AllocTRES().String()
	}
	return rec
}

// stepEndState is what a step still running becomes when its job stops:
// cancelled with the job, or the job's own end. An allocation without a
// batch script (srun's own, salloc's) ends with its step: the step ends
// as the job does.
func stepEndState(j *job.Job) string {
	if j.Req.Interactive && j.State.Terminal() {
		return j.State.String()
	}
	switch j.State {
	case job.Completed, job.Failed:
		// The batch script ended first; what it left running was
		// killed.
		return "CANCELLED"
	case job.Running:
		// Completing: ended by a cancel or a limit.
		return "CANCELLED"
	}
	return j.State.String()
}
