package controller

import (
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/node"
)

// MetricsView is what the metrics endpoints report, read at one moment:
// the job counts kept as the state changes (ctlstate.JobStats), and the
// nodes and partitions as they are. Reading it costs as much with
// 100,000 jobs as with ten: it walks nodes, partitions, users and
// accounts, never the jobs.
type MetricsView struct {
	Jobs       ctlstate.JobStats
	Nodes      []NodeMetrics
	Partitions []PartitionMetrics
}

// NodeMetrics is one node's state and what jobs hold of it.
type NodeMetrics struct {
	Name string
	// Flags are the node's state as scontrol shows it (node.StateFlags):
	// a base state then flags.
	Flags      []string
	CPUs       uint32
	MemMB      uint64
	FreeMemMB  uint64
	GPUs       int
	Use        ctlstate.NodeUse
	Dynamic    bool
	Partitions []string
}

// PartitionMetrics is one partition's size.
type PartitionMetrics struct {
	Name  string
	Nodes []string
	CPUs  uint32
}

// Metrics reads the view the metrics endpoints report.
func (c *Controller) Metrics() MetricsView {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v := MetricsView{Jobs: c.st.JobStats()}
	v.Nodes = make([]NodeMetrics, 0, len(c.nodeOrder))
	for _, name := range c.nodeOrder {
		n := c.nodes[name]
		use := v.Jobs.Nodes[name]
		view := *n
		if a := c.st.Nodes[name]; a != nil {
			view.Drain, view.Down = a.Drain, a.Down
		}
		flags := view.StateFlags(node.Alloc{CPUs: use.CPUs, MemMB: use.MemMB, Jobs: use.Jobs}, use.Completing > 0)
		v.Nodes = append(v.Nodes, NodeMetrics{Name: name, Flags: flags, CPUs: n.CPUs, MemMB: n.RealMemory, FreeMemMB: n.FreeMemMB,
			GPUs: len(n.GPUs), Use: use, Dynamic: c.st.DynNodes[name] != nil, Partitions: c.partitionsOfLocked(name)})
	}
	v.Partitions = make([]PartitionMetrics, 0, len(c.partOrder))
	for _, name := range c.partOrder {
		p := c.parts[name]
		pm := PartitionMetrics{Name: name, Nodes: p.Nodes}
		for _, n := range p.Nodes {
			if nd := c.nodes[n]; nd != nil {
				pm.CPUs += nd.CPUs
			}
		}
		v.Partitions = append(v.Partitions, pm)
	}
	return v
}

// SchedulerStats are the scheduler's counters as sdiag and
// /metrics/scheduler both report them: one reading, so that the two
// never disagree.
type SchedulerStats struct {
	// Time is when they were read (the controller's clock).
	Time time.Time
	// Start is when the counters started (the controller's start).
	Start                                                     time.Time
	Cycles, LastCycleMicros, MaxCycleMicros, TotalCycleMicros uint64
	LastCycleTime                                             time.Time
	// Backfill passes run inside the cycles (BackfillCycles counts them,
	// BackfillLastMicros is the last one's time).
	BackfillCycles, BackfillLastMicros, BackfillMaxMicros, BackfillTotalMicros uint64
	LastBackfill                                                               time.Time
	Backfilled                                                                 uint64
	Submitted, Started, Completed, Cancelled, Failed                           uint64
	// Pending counts pending jobs (an array's tasks each) and Running
	// the running ones (not the suspended), from the job stats, as
	// slurmctld's _foreach_job_running counts them for sdiag.
	Pending, Running uint64
	AcctQueued       int
	// CycleDepth sums the jobs the main cycles looked at.
	CycleDepth uint64
	// ScheduleExits counts why main cycles ended, in the order of
	// sdiag's "Main scheduler exit" (slurmctld's schedule_exit): end of
	// job queue, default_queue_depth, sched_max_job_start, licenses,
	// max_rpc_cnt, max_sched_time.
	ScheduleExits [6]uint64
	// Serving is the requests being served as this was read, the one
	// reading it among them when it is /diag's.
	Serving int
}

// SchedulerStats reads the scheduler's counters.
func (c *Controller) SchedulerStats() SchedulerStats {
	c.mu.RLock()
	js := c.st.JobStats()
	k := c.st.Counters
	last := c.lastBackfill
	c.mu.RUnlock()
	st := &c.stats
	return SchedulerStats{
		Time: c.now(), Start: c.started,
		Cycles: st.ScheduleCycles.Load(), LastCycleMicros: uint64(st.LastCycleMicros.Load()),
		MaxCycleMicros: uint64(st.MaxCycleMicros.Load()), TotalCycleMicros: uint64(st.TotalCycleMicros.Load()),
		LastCycleTime:  time.Unix(st.LastCycleTime.Load(), 0),
		BackfillCycles: st.BackfillCycles.Load(), BackfillLastMicros: uint64(st.BackfillLastMicros.Load()),
		BackfillMaxMicros: uint64(st.BackfillMaxMicros.Load()), BackfillTotalMicros: uint64(st.BackfillTotalMicros.Load()),
		LastBackfill: last, Backfilled: st.Backfilled.Load(),
		Submitted: k.Submitted, Started: k.Started, Completed: k.Completed, Cancelled: k.Cancelled, Failed: k.Failed,
		Pending: js.Total[ctlstate.CountPending], Running: js.Total[ctlstate.CountRunning],
		AcctQueued: c.AcctQueued(),
		CycleDepth: st.CycleDepth.Load(), ScheduleExits: [6]uint64{st.ExitEndOfQueue.Load()},
		Serving: int(st.serving.Load()),
	}
}

// Observer receives the timings behind Drover's own metrics. Its methods
// are called on the controller's hot paths and must not block.
type Observer interface {
	// SchedulePass is one scheduling cycle; backfill says the backfill
	// planner ran in it.
	SchedulePass(backfill bool, took time.Duration)
	// Heartbeat is one node daemon heartbeat received.
	Heartbeat()
	// PluginCall is one call the controller made to a plugin: its kind
	// ("job_submit") and operation, how long it took and its error.
	PluginCall(kind, op string, took time.Duration, err error)
}

// noObserver is the Observer of a controller given none.
type noObserver struct{}

func (noObserver) SchedulePass(bool, time.Duration)                {}
func (noObserver) Heartbeat()                                      {}
func (noObserver) PluginCall(string, string, time.Duration, error) {}

func (c *Controller) observer() Observer {
	if c.cfg.Observer == nil {
		return noObserver{}
	}
	return c.cfg.Observer
}

// MetricsSettings are what decides whether the Slurm metrics sets are
// served: slurm.conf's MetricsType, and whether PrivateData is set at
// all, which turns them off as it does slurmctld's.
func (c *Controller) MetricsSettings() (metricsType string, private bool) {
	return c.cfg.MetricsType, len(c.cfg.PrivateData) > 0
}
