// Package ctlstate is the controller's durable state as a state machine,
// in the shape of Nomad's state store and of raft's FSM: jobs, node
// administrative state, reservations, the accounting model, fair-share
// usage, steps, dynamic nodes and run-time partitions, and the accounting
// outbox. It changes only by Apply, one Command at a time in log order; a
// command carries everything it needs (times included), so that applying
// the log again, or a replica applying it, reaches the same state.
// Snapshot and Restore stream the state to and from a file.
//
// The package knows nothing of where commands come from or where results
// go: the controller proposes commands through the state log
// (internal/state), applies what the log hands back, and reads the state
// here under its own lock. It does no I/O of its own (archtest holds it
// to that). The JSON of commands and snapshots is the on-disk format:
// names and shapes never change, members only get added.
package ctlstate

import (
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
)

// NodeAdmin is the durable part of a node's state.
type NodeAdmin struct {
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

// State is the controller's in-memory state. The caller guards it: Apply
// and Restore need it held for writing, Snapshot and every read of the
// fields for reading. The controller reads the fields directly (they are
// exported for the snapshot's JSON too); only Apply and Restore change
// them.
type State struct {
	NextJobID job.ID                `json:"next_job_id"`
	Jobs      map[job.ID]*job.Job   `json:"jobs"`
	Nodes     map[string]*NodeAdmin `json:"nodes"`
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
	Counters JobCounters `json:"counters"`
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
	// (outbox.go).
	Outbox Outbox `json:"acct_outbox"`
	// Requests are the submissions that named a client request, in log
	// order, kept until RequestTTL after each (requests.go), so that a
	// retry of one makes no second job.
	Requests []*SubmitRequest `json:"submit_requests"`

	// acctOn says accounting is kept (not accounting_storage/none): the
	// outbox is filled only then. touched lists the jobs the command
	// being applied changed.
	acctOn  bool
	touched []job.ID
	// tally counts the jobs the submit limits read (tally.go).
	tally *submitTally
	// stats counts the jobs for the metrics (jobstats.go).
	stats *jobStats

	// requestIdx indexes Requests by key (nil until Apply or Restore
	// needs it).
	requestIdx map[RequestKey]*SubmitRequest

	// order keeps job ids sorted for stable listing.
	order []job.ID
	// applied counts the commands applied, so that a reader can tell
	// whether anything changed since it last looked.
	applied uint64
}

// JobCounters are the jobs submitted, started and ended, for diag.
type JobCounters struct {
	Submitted uint64 `json:"submitted"`
	Started   uint64 `json:"started"`
	Completed uint64 `json:"completed"`
	Cancelled uint64 `json:"cancelled"`
	Failed    uint64 `json:"failed"`
}

// New returns an empty state whose first job gets id firstJobID.
// keepAcct says accounting is kept (not accounting_storage/none): only
// then does Apply fill the outbox. It is set before the log is replayed,
// as replay refills the outbox.
func New(firstJobID job.ID, keepAcct bool) *State {
	return &State{NextJobID: firstJobID, acctOn: keepAcct, Jobs: map[job.ID]*job.Job{}, Nodes: map[string]*NodeAdmin{}, Resvs: map[string]*reservation.Reservation{}, Acct: assoc.New(),
		Steps: map[job.ID][]*job.Step{}, NextStep: map[job.ID]uint32{}, DynNodes: map[string]*node.Node{},
		Parts: map[string]*partition.Partition{}, PartsGone: map[string]bool{}, tally: &submitTally{}, stats: &jobStats{}}
}

// Result is what applying a command gives its proposer.
type Result struct {
	JobID   job.ID
	StepID  uint32
	Started []StartEntry
	// Ended lists the jobs a command moved to a terminal state, or back
	// to the queue after a node failure.
	Ended []job.ID
	// Kill lists batch scripts to end on their nodes after a node went
	// down: the job was requeued or ended meanwhile.
	Kill []BatchOn
	// EndSteps lists allocations without a batch script of their own (a
	// heterogeneous job's other components) that ended or went back to
	// the queue with their leader: their steps are ended on the nodes.
	EndSteps []StepsOn
	// Split lists the records a split produced.
	Split []job.ID
	// Unreferenced lists script keys no job refers to any more.
	Unreferenced []string
	// Repeated is the first answer when a submit command repeated a
	// client request already applied (requests.go): the command made no
	// job, and JobID is that answer's.
	Repeated *SubmitRequest
	// RepeatedStep says a step command repeated a client request that
	// made the running step StepID: the command made no step.
	RepeatedStep bool
	// Runs are the runs of jobs that ended, as they ended, for the job
	// completion log (not part of the state: replaying the log does not
	// write them again).
	Runs []job.Job
	// Err is why the command changed nothing: a rule checked in log
	// order refused it (a hold on a job that started meanwhile).
	Err error
}

// Apply applies one command of the log. It never fails as a whole: a
// command the state refuses says why in Result.Err, and replaying the log
// refuses it again.
func (s *State) Apply(c *Command) Result {
	s.applied++
	if s.NextJobID < c.MinJobID {
		s.NextJobID = c.MinJobID
	}
	s.pruneRequests(c.Time)
	res := s.applyOp(c)
	s.tallyTouched()
	s.statsTouched()
	s.recordAcct(&res)
	return res
}

func (s *State) applyOp(c *Command) Result {
	switch c.Op {
	case OpSubmit:
		return s.applySubmit(c)
	case OpStart:
		return s.applyStart(c)
	case OpEnd:
		return s.applyEnd(c)
	case OpCancel:
		return s.applyCancel(c)
	case OpUpdate:
		return s.applyUpdate(c)
	case OpRequeue:
		return s.applyRequeue(c)
	case OpNodeSet:
		return s.applyNodeSet(c)
	case OpNodeFail:
		return s.applyNodeFail(c)
	case OpNodeCreate:
		return s.applyNodeCreate(c)
	case OpNodeDelete:
		return s.applyNodeDelete(c)
	case OpPartSet:
		return s.applyPartSet(c)
	case OpPartDelete:
		return s.applyPartDelete(c)
	case OpPurge:
		return s.applyPurge(c)
	case OpSplit:
		return s.applySplit(c)
	case OpUsage:
		s.Usage, s.UsageTime, s.LimitUsage = upgradeUsage(c.Usage.Usage), c.Time, c.Usage.Limits
		return Result{}
	case OpAcct:
		return s.applyAcct(c)
	case OpStep:
		return s.applyStep(c)
	case OpStepEnd:
		return s.applyStepEnd(c)
	case OpWarn:
		return s.applyWarn(c)
	case OpStepUse:
		s.applyStepUse(c)
		return Result{}
	case OpAcctAck:
		s.Outbox.ack(c.AcctAck.UpTo)
		return Result{}
	case OpResvSet:
		r := c.ResvSet.Resv
		s.Resvs[r.Name] = &r
		return Result{}
	case OpResvDel:
		if s.Resvs[c.ResvDel.Name] == nil {
			return Result{Err: slurmerr.New(slurmerr.ReservationInvalid, "")}
		}
		delete(s.Resvs, c.ResvDel.Name)
		return Result{}
	}
	return Result{Err: fmt.Errorf("unknown command %q", c.Op)}
}

func (s *State) touch(j *job.Job, t time.Time) {
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

func (s *State) insert(j *job.Job) {
	s.Jobs[j.ID] = j
	// Ids only grow, so appending keeps order except after wraparound.
	if n := len(s.order); n == 0 || s.order[n-1] < j.ID {
		s.order = append(s.order, j.ID)
		return
	}
	i, _ := slices.BinarySearch(s.order, j.ID)
	s.order = slices.Insert(s.order, i, j.ID)
}

// StepsOn names the nodes of an allocation whose steps must end.
type StepsOn struct {
	JobID job.ID
	Nodes []string
}

// BatchOn names a job's batch script on a node.
type BatchOn struct {
	JobID job.ID
	Node  string
}

// ScriptKeys lists the script keys jobs refer to.
func (s *State) ScriptKeys() map[string]bool {
	out := map[string]bool{}
	for _, j := range s.Jobs {
		if j.ScriptKey != "" {
			out[j.ScriptKey] = true
		}
	}
	return out
}

// JobIDs lists the jobs' ids in increasing order, for stable listing. The
// slice is the state's own, so that a scheduling cycle over 100,000 jobs
// copies nothing: read it under the lock and do not change it.
func (s *State) JobIDs() []job.ID { return s.order }

// Applied counts the commands applied, so that a reader can tell whether
// anything changed since it last looked.
func (s *State) Applied() uint64 { return s.applied }
