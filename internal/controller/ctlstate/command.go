package ctlstate

import (
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/reservation"
)

// Command is one change of the controller's durable state, a record of the
// state log, applied by State.Apply in log order. It carries everything it
// needs (times included), so replaying the log, or replicating it with
// raft later, reaches the same state. Op says which payload it carries.
type Command struct {
	Op   Op        `json:"op"`
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

	Submit *SubmitCmd `json:"submit,omitempty"`
	// Request, with OpSubmit, names the client request the submission
	// answers (droverapi.RequestIDHeader) and its submitter: a command
	// repeating one applied within RequestTTL makes no job and answers
	// the first one's (requests.go).
	Request *ClientRequest `json:"request,omitempty"`
	// Het submits a heterogeneous job (with opSubmit, in place of
	// Submit): one record per component, with consecutive ids.
	Het      []*SubmitCmd `json:"het,omitempty"`
	Start    *StartCmd    `json:"start,omitempty"`
	End      *EndCmd      `json:"end,omitempty"`
	Cancel   *CancelCmd   `json:"cancel,omitempty"`
	Update   *UpdateCmd   `json:"update,omitempty"`
	Requeue  *RequeueCmd  `json:"requeue,omitempty"`
	ResvSet  *ResvSetCmd  `json:"resv_set,omitempty"`
	ResvDel  *ResvDelCmd  `json:"resv_delete,omitempty"`
	Usage    *UsageCmd    `json:"usage,omitempty"`
	NodeSet  *NodeSetCmd  `json:"node_set,omitempty"`
	NodeFail *NodeFailCmd `json:"node_fail,omitempty"`
	Purge    *PurgeCmd    `json:"purge,omitempty"`
	Split    *SplitCmd    `json:"split,omitempty"`
	Acct     *AcctCmd     `json:"acct,omitempty"`
	Step     *StepCmd     `json:"step,omitempty"`
	StepEnd  *StepEndCmd  `json:"step_end,omitempty"`
	Warn     *WarnCmd     `json:"warn,omitempty"`
	StepUse  *StepUseCmd  `json:"step_use,omitempty"`
	AcctAck  *AcctAckCmd  `json:"acct_ack,omitempty"`
	// NodeCreate and NodeDelete change the dynamic nodes.
	NodeCreate *NodeCreateCmd `json:"node_create,omitempty"`
	NodeDelete *NodeDeleteCmd `json:"node_delete,omitempty"`
	// PartSet and PartDelete change partitions at run time.
	PartSet    *PartSetCmd    `json:"part_set,omitempty"`
	PartDelete *PartDeleteCmd `json:"part_delete,omitempty"`
}

// Op names a command's kind; its value is what the log records.
type Op string

// The commands, one payload each (the payload of Command named alike).
const (
	OpSubmit  Op = "submit"
	OpStart   Op = "start"
	OpEnd     Op = "end"
	OpCancel  Op = "cancel"
	OpUpdate  Op = "update"
	OpRequeue Op = "requeue"
	OpSplit   Op = "split"
	OpPurge   Op = "purge"
	OpWarn    Op = "warn"
	// OpNodeSet is an administrative node change, OpNodeFail a node that
	// stopped answering.
	OpNodeSet  Op = "node_set"
	OpNodeFail Op = "node_fail"
	// OpNodeCreate and OpNodeDelete change the dynamic nodes.
	OpNodeCreate Op = "node_create"
	OpNodeDelete Op = "node_delete"
	// OpPartSet and OpPartDelete change partitions at run time.
	OpPartSet    Op = "part_set"
	OpPartDelete Op = "part_delete"
	OpResvSet    Op = "resv_set"
	OpResvDel    Op = "resv_delete"
	// OpUsage sets fair-share and limits usage.
	OpUsage Op = "usage"
	// OpAcct changes the accounting model (QOS, accounts, users,
	// associations), which is part of the replicated state as the
	// association manager's cache is slurmctld's view of slurmdbd: one
	// command applies a change whole.
	OpAcct Op = "acct"
	// OpAcctAck removes from the outbox what the store now holds.
	OpAcctAck Op = "acct_ack"
	// OpStepUse records what one node's tasks of a step used.
	OpStepUse Op = "step_use"
	// OpStep and OpStepEnd record srun's steps: srun asks the controller
	// for a step within a running job (REQUEST_JOB_STEP_CREATE), launches
	// its tasks on the nodes itself with the credential the controller
	// signs, and reports the step's end.
	OpStep    Op = "step"
	OpStepEnd Op = "step_end"
)

// ResvSetCmd creates a reservation or replaces one of the same name.
type ResvSetCmd struct {
	Resv reservation.Reservation `json:"resv"`
}

// UsageCmd sets every user's fair-share usage as of its time.
type UsageCmd struct {
	Usage priority.Usage `json:"usage"`
	// Limits is the usage the limits read besides fair-share's
	// (State.LimitUsage).
	Limits priority.Usage `json:"limits,omitempty"`
}

// ResvDelCmd removes a reservation.
type ResvDelCmd struct {
	Name string `json:"name"`
}

// SubmitCmd queues a job (one record per component of a heterogeneous
// job, in Command.Het).
type SubmitCmd struct {
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

// StartCmd starts the jobs a scheduling cycle placed.
type StartCmd struct {
	Starts []StartEntry `json:"starts"`
}

// StartEntry is one start: a job, or one pending task of an array, and
// its allocation.
type StartEntry struct {
	JobID job.ID         `json:"job_id"`
	Task  uint32         `json:"task"`
	Alloc job.Allocation `json:"alloc"`
	// Backfill marks a start the backfill pass made (Scheduler=Backfill).
	Backfill bool `json:"backfill,omitempty"`
}

// EndCmd records how a running job ended (its processes are gone).
type EndCmd struct {
	JobID    job.ID     `json:"job_id"`
	State    job.State  `json:"state"`
	ExitCode int32      `json:"exit_code"`
	Signal   int32      `json:"signal"`
	Usage    *job.Usage `json:"usage,omitempty"`
}

// CancelCmd ends pending jobs at once and marks running ones CANCELLED and
// completing (their processes are being killed). State, when not zero
// (Pending), is used instead of CANCELLED: TIMEOUT at the time limit.
type CancelCmd struct {
	JobIDs []job.ID   `json:"job_ids"`
	UID    uint32     `json:"uid"`
	State  job.State  `json:"state"`
	Reason job.Reason `json:"reason"`
	// Tasks limits the cancel of an array meta-record to these pending
	// tasks (empty: all).
	Tasks []uint32 `json:"tasks,omitempty"`
}

// UpdateCmd changes a job (scontrol update JobId=); nil members keep
// their value.
type UpdateCmd struct {
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

// RequeueCmd puts a job back in the queue under its id (scontrol
// requeue, a failed launch, preemption).
type RequeueCmd struct {
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

// NodeSetCmd is an administrative node change (scontrol update NodeName=).
type NodeSetCmd struct {
	Name   string `json:"name"`
	Drain  *bool  `json:"drain,omitempty"`
	Down   *bool  `json:"down,omitempty"`
	Reason string `json:"reason"`
	UID    uint32 `json:"uid"`
}

// NodeFailCmd marks a node down (not responding) and fails its jobs.
type NodeFailCmd struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// SplitCmd gives pending array tasks records of their own, so that one
// task can be changed alone (scontrol release 12_3).
type SplitCmd struct {
	JobID job.ID   `json:"job_id"`
	Tasks []uint32 `json:"tasks"`
}

// PurgeCmd forgets the jobs that ended before Before (MinJobAge).
type PurgeCmd struct {
	Before time.Time `json:"before"`
}

// AcctCmd applies a change to the accounting model, all or nothing.
type AcctCmd struct {
	Change assoc.Change `json:"change"`
}

// StepUseCmd records what one node's tasks of a step used (Run is the
// job's run they belong to), for accounting.
type StepUseCmd struct {
	Report NodeStepUsage `json:"report"`
	Run    uint32        `json:"run"`
}

// NodeStepUsage is what a node's tasks of a step used, as the node daemon
// reports it (nodeproto.StepDone, which converts to it): the log keeps the
// report as it came, and the state machine knows nothing of the node
// protocol. The two must keep the same fields, in the same order, under
// the same JSON names, which the conversion and
// TestNodeStepUsageMatchesReport check.
type NodeStepUsage struct {
	Node       string    `json:"node"`
	JobID      uint32    `json:"job_id"`
	StepID     uint32    `json:"step_id"`
	Tasks      uint32    `json:"tasks"`
	Usage      job.Usage `json:"usage"`
	MaxRSSTask uint32    `json:"max_rss_task"`
	AveRSS     uint64    `json:"ave_rss"`
	// Stats are the node's tasks' measures, task by task.
	Stats job.UsageStats `json:"stats,omitzero"`
}

// AcctAckCmd acknowledges what the accounting store now holds.
type AcctAckCmd struct {
	// UpTo is the newest outbox sequence number written: entries at or
	// below it go; entries changed since keep their newer numbers.
	UpTo uint64 `json:"up_to"`
}

// NodeCreateCmd adds dynamic nodes.
type NodeCreateCmd struct {
	Nodes []node.Node `json:"nodes"`
}

// NodeDeleteCmd removes dynamic nodes.
type NodeDeleteCmd struct {
	Names []string `json:"names"`
}

// PartSetCmd makes or replaces a partition.
type PartSetCmd struct {
	Partition partition.Partition `json:"partition"`
}

// PartDeleteCmd deletes a partition.
type PartDeleteCmd struct {
	Name string `json:"name"`
}

// StepCmd records a new step; its id is the job's next.
type StepCmd struct {
	Step job.Step `json:"step"`
	// HetStepID asks for the id another component of the same
	// heterogeneous job already gave the step (srun A : B).
	HetStepID *uint32 `json:"het_step_id,omitempty"`
}

// StepEndCmd removes a step that ended.
type StepEndCmd struct {
	JobID  job.ID `json:"job_id"`
	StepID uint32 `json:"step_id"`
	// How it ended, as srun reports it (accounting's record).
	ExitCode  int32 `json:"exit_code,omitempty"`
	Signal    int32 `json:"signal,omitempty"`
	Cancelled bool  `json:"cancelled,omitempty"`
}

// WarnCmd records that a run got its --signal warning, so that it is sent
// once per run, even across a controller restart.
type WarnCmd struct {
	JobID job.ID `json:"job_id"`
	// Start is the run's start time: a requeued job's next run is
	// warned again.
	Start time.Time `json:"start"`
}
