// Package sched decides which pending jobs start where. A Scheduler is a
// pure function of a read-only Snapshot (which carries the clock) to a Plan;
// the controller validates the plan and commits it through the state log.
// Nothing here reads the wall clock or does I/O, so the same code runs in
// the controller and, later, in the trace simulator.
package sched

import (
	"github.com/droverhq/drover/internal/acctpolicy"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/topology"
)

// Scheduler plans job starts.
type Scheduler interface {
	// Schedule returns the starts and pending reasons for one cycle. It must
	// not modify anything the snapshot points to (but see InPlace).
	Schedule(s *Snapshot) *Plan
}

// Snapshot is the read-only state one scheduling cycle sees.
type Snapshot struct {
	Now time.Time
	// Pending are the pending job records (array meta-records included).
	Pending []*job.Job
	// Nodes are all nodes, in configuration order, with what is in use.
	Nodes []NodeState
	// Partitions by name.
	Partitions map[string]*partition.Partition
	// ArrayRunning counts the running tasks of each array job id, for %N
	// throttles.
	ArrayRunning map[job.ID]uint32
	// Blocked are pending jobs that may not start yet for a reason the
	// controller decided (an unsatisfied dependency), with that reason.
	Blocked map[job.ID]job.Reason
	// Running are the jobs holding resources, with when they must end, so
	// that backfill can plan when their resources come back.
	Running []Running
	// Reservations are the advance reservations: their nodes are theirs
	// over their windows.
	Reservations []*reservation.Reservation
	// Topology groups nodes by switch or block (nil: flat).
	Topology *topology.Topology
	// Preempt is PreemptType=preempt/partition_prio: a job that does not
	// fit may preempt running jobs of partitions of a lower PriorityTier
	// whose PreemptMode is not OFF.
	Preempt bool
	// PreemptQOS is PreemptType=preempt/qos: a job that does not fit may
	// preempt running jobs whose QOS its own QOS's Preempt list names;
	// QOS has the QOS by name.
	PreemptQOS bool
	QOS        map[string]QOS
	// Backfill asks a backfill scheduler to plan this cycle (bf_interval
	// has passed); without it only the main pass runs.
	Backfill bool
	// StartsOnly says the caller reads only the plan's starts (the
	// simulator): the backfill pass may stop planning once it has shown
	// that no job left to test can start now.
	StartsOnly bool
	// InPlace says the caller keeps this snapshot from cycle to cycle and
	// changes nothing in its nodes and partitions but the nodes' usage
	// (the simulator). The pass then takes the resources of the jobs it
	// starts in Nodes' Used themselves, not in a copy, so the caller
	// finds them taken when Schedule returns, and what a pass derives
	// from the nodes and partitions (positions, usable nodes) serves the
	// next cycle too: a cycle costs the jobs it looks at, not the nodes.
	InPlace bool
	// Policy holds jobs to their associations' and QOS's limits (nil:
	// none); the pass tells it of the jobs it starts.
	Policy *acctpolicy.Policy
}

// Running is a job holding resources until End at the latest (zero: no
// time limit).
type Running struct {
	ID    job.ID
	Alloc *job.Allocation
	End   time.Time
	// Partition and Start describe it for preemption; Ending marks a job
	// already being ended or requeued, whose resources come back soon.
	Partition string
	QOS       string
	Start     time.Time
	Ending    bool
}

// QOS is what preempt/qos reads of a QOS: its priority (the lowest is
// preempted first) and the QOS it may preempt.
type QOS struct {
	Priority uint32
	Preempt  []string
}

// NodeState is a node and the share of it held by running jobs.
type NodeState struct {
	Node *node.Node
	Used node.Alloc
}

// Start asks the controller to start one job, or one task of an array
// meta-record (Task != job.NoTask), on Alloc.
type Start struct {
	JobID job.ID
	Task  uint32
	Alloc job.Allocation
}

// Plan is a scheduler's decision for one cycle.
type Plan struct {
	Starts  []Start
	Reasons map[job.ID]job.Reason
	// Planned are the expected starts of pending jobs the backfill pass
	// planned (nil when it did not run).
	Planned map[job.ID]Planned
	// Backfilled are the starts the backfill pass made (a subset of Starts).
	Backfilled map[job.ID]bool
	// Preempt lists running jobs to preempt, each for the pending job
	// that needs its resources (which starts once they are free).
	Preempt []Preemption
}

// Preemption is a running job to end or requeue so that a pending job of
// a higher partition PriorityTier can start.
type Preemption struct {
	Victim, For job.ID
}

// Planned is where and when backfill expects a pending job to start.
type Planned struct {
	Start time.Time
	Nodes []string
}
