package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
)

// The controller's durable state changes only through these commands, each
// applied by fsm.apply in log order. A command carries everything it needs
// (times included), so replaying the log, or replicating it with raft later,
// reaches the same state.
type command struct {
	Op   string    `json:"op"`
	Time time.Time `json:"time"`
	// MinJobID is FirstJobId when the command was proposed: ids assigned
	// from then on are at least this. It travels in every command rather
	// than seeding the state from the configuration, so that replaying
	// the log after FirstJobId changed gives every job the id it had.
	MinJobID job.ID `json:"min_job_id,omitempty"`
	// RequeueDelay is how long a job this command requeues waits before
	// it may start again (BeginTime): slurmctld waits for the credentials
	// of the run it cut short to expire (AuthInfo cred_expire, and a
	// second). It travels in the command for the reason MinJobID does.
	RequeueDelay time.Duration `json:"requeue_delay,omitempty"`

	Submit *submitCmd `json:"submit,omitempty"`
	// Het submits a heterogeneous job (with opSubmit, in place of
	// Submit): one record per component, with consecutive ids.
	Het      []*submitCmd `json:"het,omitempty"`
	Start    *startCmd    `json:"start,omitempty"`
	End      *endCmd      `json:"end,omitempty"`
	Cancel   *cancelCmd   `json:"cancel,omitempty"`
	Update   *updateCmd   `json:"update,omitempty"`
	Requeue  *requeueCmd  `json:"requeue,omitempty"`
	ResvSet  *resvSetCmd  `json:"resv_set,omitempty"`
	ResvDel  *resvDelCmd  `json:"resv_delete,omitempty"`
	Usage    *usageCmd    `json:"usage,omitempty"`
	NodeSet  *nodeSetCmd  `json:"node_set,omitempty"`
	NodeFail *nodeFailCmd `json:"node_fail,omitempty"`
	Purge    *purgeCmd    `json:"purge,omitempty"`
	Split    *splitCmd    `json:"split,omitempty"`
	Acct     *acctCmd     `json:"acct,omitempty"`
	Step     *stepCmd     `json:"step,omitempty"`
	StepEnd  *stepEndCmd  `json:"step_end,omitempty"`
	Warn     *warnCmd     `json:"warn,omitempty"`
	StepUse  *stepUseCmd  `json:"step_use,omitempty"`
	AcctAck  *acctAckCmd  `json:"acct_ack,omitempty"`
	// NodeCreate and NodeDelete change the dynamic nodes.
	NodeCreate *nodeCreateCmd `json:"node_create,omitempty"`
	NodeDelete *nodeDeleteCmd `json:"node_delete,omitempty"`
	// PartSet and PartDelete change partitions at run time.
	PartSet    *partSetCmd    `json:"part_set,omitempty"`
	PartDelete *partDeleteCmd `json:"part_delete,omitempty"`
}

const (
	opSubmit   = "submit"
	opStart    = "start"
	opEnd      = "end"
	opCancel   = "cancel"
	opUpdate   = "update"
	opRequeue  = "requeue"
	opNodeSet  = "node_set"
	opNodeFail = "node_fail"
	opPurge    = "purge"
	opSplit    = "split"
	opUsage    = "usage"
	opResvSet  = "resv_set"
	opResvDel  = "resv_delete"
	opWarn     = "warn"
)

// resvSetCmd creates a reservation or replaces one of the same name.
type resvSetCmd struct {
	Resv reservation.Reservation `json:"resv"`
}

// usageCmd sets every user's fair-share usage as of its time.
type usageCmd struct {
	Usage priority.Usage `json:"usage"`
	// Limits is the usage the limits read besides fair-share's
	// (fsm.LimitUsage).
	Limits priority.Usage `json:"limits,omitempty"`
}

// resvDelCmd removes a reservation.
type resvDelCmd struct {
	Name string `json:"name"`
}

type submitCmd struct {
	Req       job.Request `json:"req"`
	ScriptKey string      `json:"script_key,omitempty"`
	Hold      job.Hold    `json:"hold"`
	Priority  uint32      `json:"priority"`
	// Limits says AccountingStorageEnforce=limits held the submission
	// to the submit limits (decided when the command was made, so that
	// replaying it decides the same).
	Limits bool `json:"limits,omitempty"`
	// PartQOS is each partition's QOS then, for the submit limits of
	// partition QOS.
	PartQOS map[string]string `json:"part_qos,omitempty"`
}

type startCmd struct {
	Starts []startEntry `json:"starts"`
}

type startEntry struct {
	JobID job.ID         `json:"job_id"`
	Task  uint32         `json:"task"`
	Alloc job.Allocation `json:"alloc"`
	// Backfill marks a start the backfill pass made (Scheduler=Backfill).
	Backfill bool `json:"backfill,omitempty"`
}

// endCmd records how a running job ended (its processes are gone).
type endCmd struct {
	JobID    job.ID     `json:"job_id"`
	State    job.State  `json:"state"`
	ExitCode int32      `json:"exit_code"`
	Signal   int32      `json:"signal"`
	Usage    *job.Usage `json:"usage,omitempty"`
}

// cancelCmd ends pending jobs at once and marks running ones CANCELLED and
// completing (their processes are being killed). State, when not zero
// (Pending), is used instead of CANCELLED: TIMEOUT at the time limit.
type cancelCmd struct {
	JobIDs []job.ID   `json:"job_ids"`
	UID    uint32     `json:"uid"`
	State  job.State  `json:"state"`
	Reason job.Reason `json:"reason"`
	// Tasks limits the cancel of an array meta-record to these pending
	// tasks (empty: all).
	Tasks []uint32 `json:"tasks,omitempty"`
}

type updateCmd struct {
	JobID      job.ID     `json:"job_id"`
	Dependency *string    `json:"dependency,omitempty"`
	TimeLimit  *uint32    `json:"time_limit,omitempty"`
	Partition  *string    `json:"partition,omitempty"`
	Name       *string    `json:"name,omitempty"`
	Comment    *string    `json:"comment,omitempty"`
	Priority   *uint32    `json:"priority,omitempty"`
	Nice       *int32     `json:"nice,omitempty"`
	Hold       *job.Hold  `json:"hold,omitempty"`
	BeginTime  *time.Time `json:"begin_time,omitempty"`
	MinNodes   *uint32    `json:"min_nodes,omitempty"`
	NumTasks   *uint32    `json:"num_tasks,omitempty"`
	Requeue    *bool      `json:"requeue,omitempty"`
}

type requeueCmd struct {
	JobID  job.ID     `json:"job_id"`
	Hold   bool       `json:"hold"`
	Reason job.Reason `json:"reason"`
	// IfRunning requeues only a job that still runs and was not asked to
	// end: a failed launch must not bring back a job cancelled meanwhile.
	IfRunning bool `json:"if_running,omitempty"`
	// OnEnd does not requeue a running job yet: it marks it to be
	// requeued when its processes are gone (Job.RequeueOnEnd).
	OnEnd bool `json:"on_end,omitempty"`
	// As is the state the ending run is recorded with (Job.RequeueAs).
	As job.State `json:"as,omitempty"`
}

// nodeSetCmd is an administrative node change (scontrol update NodeName=).
type nodeSetCmd struct {
	Name   string `json:"name"`
	Drain  *bool  `json:"drain,omitempty"`
	Down   *bool  `json:"down,omitempty"`
	Reason string `json:"reason"`
	UID    uint32 `json:"uid"`
}

// nodeFailCmd marks a node down (not responding) and fails its jobs.
type nodeFailCmd struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// splitCmd gives pending array tasks records of their own, so that one
// task can be changed alone (scontrol release 12_3).
type splitCmd struct {
	JobID job.ID   `json:"job_id"`
	Tasks []uint32 `json:"tasks"`
}

type purgeCmd struct {
	Before time.Time `json:"before"`
}

// nodeAdmin is the durable part of a node's state.
type nodeAdmin struct {
	Drain      bool      `json:"drain"`
	Down       bool      `json:"down"`
	Reason     string    `json:"reason"`
	ReasonUID  uint32    `json:"reason_uid"`
	ReasonTime time.Time `json:"reason_time"`
	// OutSince is when the node went out of service (DOWN or DRAIN),
	// the start of its accounting event.
	OutSince time.Time `json:"out_since,omitzero"`
	// OutState and OutReason are the state and reason the period began
	// with, for the event that closes it.
	OutState  string `json:"out_state,omitempty"`
	OutReason string `json:"out_reason,omitempty"`
}

// fsm is the controller's in-memory state. Every field is guarded by the
// Controller's mutex; apply runs with it held for writing.
type fsm struct {
	NextJobID job.ID                `json:"next_job_id"`
	Jobs      map[job.ID]*job.Job   `json:"jobs"`
	Nodes     map[string]*nodeAdmin `json:"nodes"`
	// Resvs are the advance reservations by name.
	Resvs map[string]*reservation.Reservation `json:"reservations"`
	// Usage is each association's decayed usage for fair-share, keyed
	// priority.AssocKey, as of UsageTime.
	Usage     priority.Usage `json:"usage"`
	UsageTime time.Time      `json:"usage_time"`
	// LimitUsage is what limits read besides fair-share usage, decayed
	// alike: "wall:ACCOUNT/USER" job-seconds (GrpWall), "cpu:ACCOUNT/USER"
	// CPU-seconds (GrpTRESMins=cpu), "qos:NAME" billing-seconds,
	// "qoscpu:NAME" CPU-seconds and "qoswall:NAME" job-seconds.
	LimitUsage priority.Usage `json:"limit_usage"`
	// SubmitSeq orders submissions for priority/basic style priorities.
	SubmitSeq uint64 `json:"submit_seq"`
	// LastUpdate is the time of the last change to any job.
	LastJobUpdate  time.Time `json:"last_job_update"`
	LastNodeUpdate time.Time `json:"last_node_update"`
	// Counters for diag.
	Counters counters `json:"counters"`
	// Acct is the accounting model: QOS, accounts, users, associations.
	// Never nil; a change replaces it whole.
	Acct *assoc.Model `json:"accounting"`
	// Steps are the running steps of each running job, and NextStep the
	// id its next step gets; both go when the job stops running.
	Steps    map[job.ID][]*job.Step `json:"steps"`
	NextStep map[job.ID]uint32      `json:"next_step"`
	// DynNodes are the nodes made at run time (scontrol create, REST
	// new/node, a node daemon started --dynamic), by name: slurm.conf
	// does not list them, so the state keeps their definitions.
	DynNodes map[string]*node.Node `json:"dyn_nodes"`
	// Parts are partitions made or changed at run time (scontrol create
	// and update, REST v0.0.45 partitions), whole records by name, and
	// PartsGone slurm.conf's partitions deleted at run time: both win
	// over slurm.conf.
	Parts     map[string]*partition.Partition `json:"parts"`
	PartsGone map[string]bool                 `json:"parts_gone"`
	// Outbox holds the accounting records not yet in the store
	// (acctout.go).
	Outbox acctOutbox `json:"acct_outbox"`

	// acctOn says accounting is kept (not accounting_storage/none): the
	// outbox is filled only then. touched lists the jobs the command
	// being applied changed.
	acctOn  bool
	touched []job.ID
	// tally counts the jobs the submit limits read (submittally.go).
	tally *submitTally

	// byID keeps job ids sorted for stable listing.
	order []job.ID
	// applied counts the commands applied, so that a reader can tell
	// whether anything changed since it last looked.
	applied uint64
}

type counters struct {
	Submitted uint64 `json:"submitted"`
	Started   uint64 `json:"started"`
	Completed uint64 `json:"completed"`
	Cancelled uint64 `json:"cancelled"`
	Failed    uint64 `json:"failed"`
}

func newFSM(firstJobID job.ID) *fsm {
	return &fsm{NextJobID: firstJobID, Jobs: map[job.ID]*job.Job{}, Nodes: map[string]*nodeAdmin{}, Resvs: map[string]*reservation.Reservation{}, Acct: assoc.New(),
		Steps: map[job.ID][]*job.Step{}, NextStep: map[job.ID]uint32{}, DynNodes: map[string]*node.Node{},
		Parts: map[string]*partition.Partition{}, PartsGone: map[string]bool{}, tally: &submitTally{}}
}

// applyResult is what a proposer gets back.
type applyResult struct {
	JobID   job.ID
	StepID  uint32
	Started []startEntry
	// Ended lists the jobs a command moved to a terminal state, or back
	// to the queue after a node failure.
	Ended []job.ID
	// Kill lists batch scripts to end on their nodes after a node went
	// down: the job was requeued or ended meanwhile.
	Kill []batchOn
	// EndSteps lists allocations without a batch script of their own (a
	// heterogeneous job's other components) that ended or went back to
	// the queue with their leader: their steps are ended on the nodes.
	EndSteps []stepsOn
	// Split lists the records a split produced.
	Split []job.ID
	// Unreferenced lists script keys no job refers to any more.
	Unreferenced []string
	// Runs are the runs of jobs that ended, as they ended, for the job
	// completion log (not part of the state: replaying the log does not
	// write them again).
	Runs []job.Job
	Err  error
}

func (s *fsm) apply(c *command) applyResult {
	s.applied++
	if s.NextJobID < c.MinJobID {
		s.NextJobID = c.MinJobID
	}
	res := s.applyOp(c)
	s.tallyTouched()
	s.recordAcct(&res)
	return res
}

func (s *fsm) applyOp(c *command) applyResult {
	switch c.Op {
	case opSubmit:
		return s.applySubmit(c)
	case opStart:
		return s.applyStart(c)
	case opEnd:
		return s.applyEnd(c)
	case opCancel:
		return s.applyCancel(c)
	case opUpdate:
		return s.applyUpdate(c)
	case opRequeue:
		return s.applyRequeue(c)
	case opNodeSet:
		return s.applyNodeSet(c)
	case opNodeFail:
		return s.applyNodeFail(c)
	case opNodeCreate:
		return s.applyNodeCreate(c)
	case opNodeDelete:
		return s.applyNodeDelete(c)
	case opPartSet:
		return s.applyPartSet(c)
	case opPartDelete:
		return s.applyPartDelete(c)
	case opPurge:
		return s.applyPurge(c)
	case opSplit:
		return s.applySplit(c)
	case opUsage:
		s.Usage, s.UsageTime, s.LimitUsage = upgradeUsage(c.Usage.Usage), c.Time, c.Usage.Limits
		return applyResult{}
	case opAcct:
		return s.applyAcct(c)
	case opStep:
		return s.applyStep(c)
	case opStepEnd:
		return s.applyStepEnd(c)
	case opWarn:
		return s.applyWarn(c)
	case opStepUse:
		s.applyStepUse(c)
		return applyResult{}
	case opAcctAck:
		s.Outbox.ack(c.AcctAck.UpTo)
		return applyResult{}
	case opResvSet:
		r := c.ResvSet.Resv
		s.Resvs[r.Name] = &r
		return applyResult{}
	case opResvDel:
		if s.Resvs[c.ResvDel.Name] == nil {
			return applyResult{Err: slurmerr.New(slurmerr.ReservationInvalid, "")}
		}
		delete(s.Resvs, c.ResvDel.Name)
		return applyResult{}
	}
	return applyResult{Err: fmt.Errorf("unknown command %q", c.Op)}
}

func (s *fsm) touch(j *job.Job, t time.Time) {
	s.markAcct(j.ID)
	if j.State != job.Running || j.Completing {
		// A job that stops running takes its steps along; a requeued
		// run numbers its steps from 0 again.
		for _, st := range s.Steps[j.ID] {
			s.putStep(j, st, stepEndState(j), t)
		}
		delete(s.Steps, j.ID)
		delete(s.NextStep, j.ID)
	}
	j.LastUpdate = t
	if t.After(s.LastJobUpdate) {
		s.LastJobUpdate = t
	}
}

func (s *fsm) insert(j *job.Job) {
	s.Jobs[j.ID] = j
	// Ids only grow, so appending keeps order except after wraparound.
	if n := len(s.order); n == 0 || s.order[n-1] < j.ID {
		s.order = append(s.order, j.ID)
		return
	}
	i, _ := slices.BinarySearch(s.order, j.ID)
	s.order = slices.Insert(s.order, i, j.ID)
}

func (s *fsm) applySubmit(c *command) applyResult {
	subs := c.Het
	if len(subs) == 0 {
		subs = []*submitCmd{c.Submit}
	}
	for _, sub := range subs {
		if !sub.Limits {
			continue
		}
		if err := s.submitLimitErr(&sub.Req, sub.PartQOS); err != nil {
			// Its script stays in the store: a submission with the same
			// script may be on its way, and the controller refuses most
			// before they store one.
			return applyResult{Err: err}
		}
	}
	leader := s.NextJobID
	for i, sub := range subs {
		j := s.submitOne(sub, c.Time)
		if len(c.Het) > 0 {
			j.HetJobID, j.HetJobOffset, j.HetSize = leader, uint32(i), uint32(len(subs))
		}
	}
	return applyResult{JobID: leader}
}

// submitOne queues one job record with the next id.
func (s *fsm) submitOne(sub *submitCmd, t time.Time) *job.Job {
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

func (s *fsm) applyStart(c *command) applyResult {
	var res applyResult
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
		res.Started = append(res.Started, startEntry{JobID: target.ID, Task: st.Task, Alloc: alloc})
	}
	return res
}

// partialHetStarts lists the heterogeneous jobs some of whose components
// the starts leave out or cannot start: their components start together
// or not at all.
func (s *fsm) partialHetStarts(starts []startEntry) map[job.ID]bool {
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
func (s *fsm) splitTask(meta *job.Job, task uint32, t time.Time) *job.Job {
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

func (s *fsm) applyEnd(c *command) applyResult {
	e := c.End
	j := s.Jobs[e.JobID]
	if j == nil || j.Alloc == nil {
		return applyResult{Err: slurmerr.New(slurmerr.InvalidJobID, "job %d not running", e.JobID)}
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
	res := applyResult{Ended: []job.ID{j.ID}}
	if ran {
		// A run cancelled or timed out was recorded when that was decided.
		res.Runs = []job.Job{*j}
	}
	s.endHetSiblings(j, c.Time, &res)
	return res
}

func (s *fsm) count(st job.State) {
	switch st {
	case job.Completed:
		s.Counters.Completed++
	case job.Cancelled:
		s.Counters.Cancelled++
	default:
		s.Counters.Failed++
	}
}

func (s *fsm) applyCancel(c *command) applyResult {
	var res applyResult
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
func (s *fsm) cancelRecord(j *job.Job, c *command, state job.State) {
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

func (s *fsm) applyUpdate(c *command) applyResult {
	u := c.Update
	j := s.Jobs[u.JobID]
	if j == nil {
		return applyResult{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	// The proposer checked these rules against the state it saw; the job
	// may have started or ended since (a scheduling cycle commits starts
	// concurrently), so they are checked again in log order, where the
	// answer is final: a hold must never land on a running job.
	if j.State.Terminal() {
		return applyResult{Err: slurmerr.New(slurmerr.AlreadyDone, "")}
	}
	if j.State != job.Pending && (u.Hold != nil || u.Partition != nil || u.MinNodes != nil || u.NumTasks != nil || u.BeginTime != nil) {
		return applyResult{Err: slurmerr.New(slurmerr.JobNotPending, "")}
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
				j.Priority = basePriority(s.SubmitSeq)
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
	return applyResult{JobID: j.ID}
}

func (s *fsm) applyRequeue(c *command) applyResult {
	j := s.Jobs[c.Requeue.JobID]
	if j == nil {
		return applyResult{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	if c.Requeue.OnEnd {
		if j.State != job.Running || j.Completing {
			return applyResult{Err: slurmerr.New(slurmerr.TransitionStateNoUpdate, "")}
		}
		j.RequeueOnEnd, j.RequeueHold, j.RequeueAs = true, c.Requeue.Hold, c.Requeue.As
		s.touch(j, c.Time)
		return applyResult{JobID: j.ID}
	}
	if c.Requeue.IfRunning && j.State != job.Running {
		if j.Completing {
			// It was ending anyway: it ended without running.
			j.Completing = false
			s.touch(j, c.Time)
		}
		return applyResult{JobID: j.ID}
	}
	res := applyResult{JobID: j.ID}
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
func (s *fsm) requeue(j *job.Job, t time.Time, hold bool, reason job.Reason, as job.State, delay time.Duration) *job.Job {
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

func (s *fsm) admin(name string) *nodeAdmin {
	a := s.Nodes[name]
	if a == nil {
		a = &nodeAdmin{}
		s.Nodes[name] = a
	}
	return a
}

func (s *fsm) applyNodeSet(c *command) applyResult {
	n := c.NodeSet
	a := s.admin(n.Name)
	wasOut := a.Down || a.Drain
	defer s.nodeEvent(n.Name, a, wasOut, c.Time)
	if n.Drain != nil {
		a.Drain = *n.Drain
	}
	if n.Down != nil {
		a.Down = *n.Down
	}
	if a.Drain || a.Down {
		a.Reason, a.ReasonUID, a.ReasonTime = n.Reason, n.UID, c.Time
	} else {
		a.Reason, a.ReasonUID, a.ReasonTime = "", 0, time.Time{}
	}
	s.LastNodeUpdate = c.Time
	if n.Down != nil && *n.Down {
		return s.failJobsOn(n.Name, c.Time, c.RequeueDelay)
	}
	return applyResult{}
}

func (s *fsm) applyNodeFail(c *command) applyResult {
	a := s.admin(c.NodeFail.Name)
	wasOut := a.Down || a.Drain
	defer s.nodeEvent(c.NodeFail.Name, a, wasOut, c.Time)
	a.Down = true
	a.Reason, a.ReasonUID, a.ReasonTime = c.NodeFail.Reason, 0, c.Time
	s.LastNodeUpdate = c.Time
	return s.failJobsOn(c.NodeFail.Name, c.Time, c.RequeueDelay)
}

// stepsOn names the nodes of an allocation whose steps must end.
type stepsOn struct {
	JobID job.ID
	Nodes []string
}

// hetSiblings returns the components of leader l's heterogeneous job
// other than l itself.
func (s *fsm) hetSiblings(l *job.Job) []*job.Job {
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
func (s *fsm) endHetSiblings(l *job.Job, t time.Time, res *applyResult) {
	for _, c := range s.hetSiblings(l) {
		if c.State != job.Running {
			continue
		}
		if c.Alloc != nil {
			res.EndSteps = append(res.EndSteps, stepsOn{c.ID, c.Alloc.NodeNames()})
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
func (s *fsm) requeueHetSiblings(l *job.Job, t time.Time, hold bool, reason job.Reason, as job.State, delay time.Duration, res *applyResult) {
	for _, c := range s.hetSiblings(l) {
		if c.State == job.Pending {
			continue
		}
		if c.Alloc != nil && c.State == job.Running {
			res.EndSteps = append(res.EndSteps, stepsOn{c.ID, c.Alloc.NodeNames()})
		}
		if run := s.requeue(c, t, hold, reason, as, delay); run != nil {
			res.Runs = append(res.Runs, *run)
		}
	}
}

// batchOn names a job's batch script on a node.
type batchOn struct {
	JobID job.ID
	Node  string
}

// failJobsOn deals with the jobs holding a node that failed, as slurmctld
// does: a job that may be requeued (--requeue, or JobRequeue=1) goes back
// to the queue under its id as a new run, at once when the node ran its
// batch script, else once the batch host has ended the script; any other
// job ends NODE_FAIL. Ended lists the jobs that left the node, Kill the
// batch scripts that may still run (on the node itself, when an
// administrator set it DOWN).
func (s *fsm) failJobsOn(name string, t time.Time, delay time.Duration) applyResult {
	var res applyResult
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
func (s *fsm) failJob(j *job.Job, name string, t time.Time, delay time.Duration, res *applyResult) {
	if j.BatchHost != "" {
		res.Kill = append(res.Kill, batchOn{j.ID, j.BatchHost})
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

func (s *fsm) applySplit(c *command) applyResult {
	meta := s.Jobs[c.Split.JobID]
	if meta == nil || !meta.IsArrayMeta() || meta.State != job.Pending {
		return applyResult{Err: slurmerr.New(slurmerr.InvalidJobID, "")}
	}
	var res applyResult
	for _, t := range c.Split.Tasks {
		if rec := s.splitTask(meta, t, c.Time); rec != nil {
			res.Split = append(res.Split, rec.ID)
		}
	}
	return res
}

func (s *fsm) applyPurge(c *command) applyResult {
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
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
	if len(purgedKeys) == 0 {
		return applyResult{}
	}
	// Tasks of an array share one script: it goes with the last of them.
	for _, id := range s.order {
		delete(purgedKeys, s.Jobs[id].ScriptKey)
	}
	res := applyResult{}
	for k := range purgedKeys {
		res.Unreferenced = append(res.Unreferenced, k)
	}
	slices.Sort(res.Unreferenced)
	return res
}

// scriptKeys lists the script keys jobs refer to.
func (s *fsm) scriptKeys() map[string]bool {
	out := map[string]bool{}
	for _, j := range s.Jobs {
		if j.ScriptKey != "" {
			out[j.ScriptKey] = true
		}
	}
	return out
}

// basePriority mimics priority/basic: earlier submissions rank higher.
// slurmctld counts down from 0xffff0000, but v0.0.44 carries priorities as
// int32 (uint32_no_val_struct's number is format int32), so a priority at
// or above 2^31 would reach REST clients negative or not at all; Drover
// counts down from 0x7fff0000 instead, which keeps the order.
func basePriority(seq uint64) uint32 {
	const top = 0x7FFF0000
	if seq >= top {
		return 1
	}
	return uint32(top - seq)
}

// The snapshot is the JSON object json.Marshal(s) would produce (version 1
// state files hold exactly that), written a piece at a time: with 100,000
// jobs the whole object is about 130 MB, and building it in one buffer
// made the controller's resident memory several times its live heap.
// Members are written in the order of these names; restore reads them in
// any order.
const (
	snapNextJobID      = "next_job_id"
	snapSubmitSeq      = "submit_seq"
	snapLastJobUpdate  = "last_job_update"
	snapLastNodeUpdate = "last_node_update"
	snapCounters       = "counters"
	snapResvs          = "reservations"
	snapUsage          = "usage"
	snapUsageTime      = "usage_time"
	snapLimitUsage     = "limit_usage"
	snapAcct           = "accounting"
	snapSteps          = "steps"
	snapNextStep       = "next_step"
	snapDynNodes       = "dyn_nodes"
	snapParts          = "parts"
	snapPartsGone      = "parts_gone"
	snapNodes          = "nodes"
	snapOutbox         = "acct_outbox"
	snapJobs           = "jobs"
)

// snapshot writes the state to w: the scalar fields, then the nodes and
// the jobs one at a time. json.Encoder reuses its encoding buffers, so the
// memory it needs is that of the largest job, not of the state.
func (s *fsm) snapshot(w io.Writer) error {
	sw := snapshotWriter{w: w, enc: json.NewEncoder(w)}
	sw.raw("{")
	sw.member(snapNextJobID, s.NextJobID)
	sw.raw(",")
	sw.member(snapSubmitSeq, s.SubmitSeq)
	sw.raw(",")
	sw.member(snapLastJobUpdate, s.LastJobUpdate)
	sw.raw(",")
	sw.member(snapLastNodeUpdate, s.LastNodeUpdate)
	sw.raw(",")
	sw.member(snapCounters, s.Counters)
	sw.raw(",\"" + snapNodes + "\":{")
	names := make([]string, 0, len(s.Nodes))
	for name := range s.Nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			sw.raw(",")
		}
		sw.member(name, s.Nodes[name])
	}
	sw.raw("},")
	sw.member(snapResvs, s.Resvs)
	sw.raw(",")
	sw.member(snapUsage, s.Usage)
	sw.raw(",")
	sw.member(snapUsageTime, s.UsageTime)
	sw.raw(",")
	sw.member(snapLimitUsage, s.LimitUsage)
	sw.raw(",")
	sw.member(snapAcct, s.Acct)
	sw.raw(",")
	sw.member(snapSteps, s.Steps)
	sw.raw(",")
	sw.member(snapNextStep, s.NextStep)
	sw.raw(",")
	sw.member(snapDynNodes, s.DynNodes)
	sw.raw(",")
	sw.member(snapParts, s.Parts)
	sw.raw(",")
	sw.member(snapPartsGone, s.PartsGone)
	sw.raw(",")
	sw.member(snapOutbox, s.Outbox)
	sw.raw(",\"" + snapJobs + "\":{")
	var key []byte
	for i, id := range s.order {
		if i > 0 {
			sw.raw(",")
		}
		key = append(strconv.AppendUint(append(key[:0], '"'), uint64(id), 10), '"', ':')
		sw.write(key)
		sw.value(s.Jobs[id])
	}
	sw.raw("}}")
	if sw.err != nil {
		return fmt.Errorf("write snapshot: %w", sw.err)
	}
	return nil
}

// snapshotWriter keeps the first error, so that snapshot reads as the
// document it writes.
type snapshotWriter struct {
	w   io.Writer
	enc *json.Encoder
	err error
}

func (sw *snapshotWriter) write(b []byte) {
	if sw.err == nil {
		_, sw.err = sw.w.Write(b)
	}
}

func (sw *snapshotWriter) raw(s string) {
	if sw.err == nil {
		_, sw.err = io.WriteString(sw.w, s)
	}
}

// value writes v as JSON followed by a newline, which JSON allows between
// tokens and which keeps the file readable with line tools.
func (sw *snapshotWriter) value(v any) {
	if sw.err == nil {
		sw.err = sw.enc.Encode(v)
	}
}

func (sw *snapshotWriter) member(name string, v any) {
	if sw.err != nil {
		return
	}
	key, err := json.Marshal(name)
	if err != nil {
		sw.err = err
		return
	}
	sw.write(key)
	sw.raw(":")
	sw.value(v)
}

// restore replaces the state with a snapshot read from r, decoding one job
// at a time. It reads what snapshot writes and what json.Marshal(s) wrote
// before snapshots were streamed.
func (s *fsm) restore(r io.Reader) error {
	n := newFSM(s.NextJobID)
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("decode snapshot: %w", err)
		}
		name, _ := tok.(string)
		switch name {
		case snapNextJobID:
			err = dec.Decode(&n.NextJobID)
		case snapSubmitSeq:
			err = dec.Decode(&n.SubmitSeq)
		case snapLastJobUpdate:
			err = dec.Decode(&n.LastJobUpdate)
		case snapLastNodeUpdate:
			err = dec.Decode(&n.LastNodeUpdate)
		case snapCounters:
			err = dec.Decode(&n.Counters)
		case snapResvs:
			err = dec.Decode(&n.Resvs)
		case snapUsage:
			err = dec.Decode(&n.Usage)
		case snapUsageTime:
			err = dec.Decode(&n.UsageTime)
		case snapLimitUsage:
			err = dec.Decode(&n.LimitUsage)
		case snapSteps:
			err = dec.Decode(&n.Steps)
		case snapNextStep:
			err = dec.Decode(&n.NextStep)
		case snapDynNodes:
			err = dec.Decode(&n.DynNodes)
		case snapParts:
			err = dec.Decode(&n.Parts)
		case snapPartsGone:
			err = dec.Decode(&n.PartsGone)
		case snapOutbox:
			err = dec.Decode(&n.Outbox)
		case snapAcct:
			var m *assoc.Model
			err = dec.Decode(&m)
			n.Acct = m
		case snapNodes:
			err = decodeObject(dec, func(name string) error {
				a := &nodeAdmin{}
				if err := dec.Decode(a); err != nil {
					return fmt.Errorf("node %q: %w", name, err)
				}
				n.Nodes[name] = a
				return nil
			})
		case snapJobs:
			err = decodeObject(dec, func(key string) error {
				id, err := strconv.ParseUint(key, 10, 32)
				if err != nil {
					return fmt.Errorf("job id %q: %w", key, err)
				}
				j := &job.Job{}
				if err := dec.Decode(j); err != nil {
					return fmt.Errorf("job %d: %w", id, err)
				}
				n.Jobs[job.ID(id)] = j
				return nil
			})
		default:
			// A member this build does not know, as json.Unmarshal
			// ignores one.
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fmt.Errorf("decode snapshot: %s: %w", name, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("decode snapshot: data after the state (%v)", err)
	}
	if n.Resvs == nil {
		n.Resvs = map[string]*reservation.Reservation{}
	}
	if n.Acct == nil {
		n.Acct = assoc.New()
	}
	if n.Steps == nil {
		n.Steps = map[job.ID][]*job.Step{}
	}
	if n.DynNodes == nil {
		n.DynNodes = map[string]*node.Node{}
	}
	if n.Parts == nil {
		n.Parts = map[string]*partition.Partition{}
	}
	if n.PartsGone == nil {
		n.PartsGone = map[string]bool{}
	}
	if n.NextStep == nil {
		n.NextStep = map[job.ID]uint32{}
	}
	if n.Usage != nil {
		n.Usage = upgradeUsage(n.Usage)
	}
	n.order = slices.Sorted(maps.Keys(n.Jobs))
	n.acctOn = s.acctOn
	*s = *n
	return nil
}

// decodeObject calls member for each member of the JSON object next in dec,
// with the decoder positioned at the member's value. null is an empty
// object, as json.Unmarshal reads a nil map.
func decodeObject(dec *json.Decoder, member func(name string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("got %v, want an object", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := member(tok.(string)); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %v", tok, want)
	}
	return nil
}
