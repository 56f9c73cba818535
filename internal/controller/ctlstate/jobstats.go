package ctlstate

import (
	"fmt"
	"maps"
	"sync"

	"github.com/droverhq/drover/internal/job"
)

// JobCount names one of the counts JobCounts keeps.
type JobCount int

// The counts behind Slurm 25.11's metrics/openmetrics job metrics, as
// slurmctld's statistics.c derives them from each job record.
const (
	// CountJobs counts records, an array's pending tasks each
	// (slurm_jobs).
	CountJobs JobCount = iota
	// CountRecords counts records once each (slurm_user_jobs and
	// slurm_account_jobs count that way).
	CountRecords
	// CountLive counts records not yet completed: running, pending, or
	// ended with processes still being killed (slurm_partition_jobs).
	CountLive
	CountPending // an array's pending tasks each
	CountHold    // pending and held, an array's tasks each
	CountRunning
	CountSuspended
	CountCompleted
	CountCancelled
	CountFailed
	CountTimeout
	CountNodeFail
	CountPreempted
	CountBootFail
	CountDeadline
	CountOutOfMemory
	CountCompleting
	CountFinished // ended (terminal state), completing or not
	CountStarted  // past pending
	// CountCPUsAlloc, CountNodesAlloc and CountMemAllocMB sum what the
	// running and suspended jobs hold. Memory is in MB, as slurmctld
	// reports it under its _bytes names (tres_alloc_cnt[TRES_ARRAY_MEM]).
	CountCPUsAlloc
	CountNodesAlloc
	CountMemAllocMB
	// NumJobCounts is how many counts there are.
	NumJobCounts
)

// JobCounts are the counts of a set of jobs, by JobCount.
type JobCounts [NumJobCounts]uint64

func (c *JobCounts) add(o *JobCounts) {
	for i := range c {
		c[i] += o[i]
	}
}

func (c *JobCounts) sub(o *JobCounts) {
	for i := range c {
		c[i] -= o[i]
	}
}

func (c *JobCounts) zero() bool { return *c == JobCounts{} }

// countJob is what one record adds to the counts, as statistics.c's
// _fill_jobs_statistics counts it.
func countJob(j *job.Job) JobCounts {
	var c JobCounts
	tasks := uint64(1)
	if j.IsArrayMeta() && len(j.PendingTasks) > 0 {
		tasks = uint64(len(j.PendingTasks))
	}
	c[CountJobs], c[CountRecords] = tasks, 1
	switch j.State {
	case job.Pending:
		c[CountPending] = tasks
		if j.Hold != job.NotHeld {
			c[CountHold] = tasks
		}
	case job.Running:
		c[CountRunning] = 1
	case job.Suspended:
		c[CountSuspended] = 1
	case job.Completed:
		c[CountCompleted] = 1
	case job.Cancelled:
		c[CountCancelled] = 1
	case job.Failed:
		c[CountFailed] = 1
	case job.Timeout:
		c[CountTimeout] = 1
	case job.NodeFail:
		c[CountNodeFail] = 1
	case job.Preempted:
		c[CountPreempted] = 1
	case job.BootFail:
		c[CountBootFail] = 1
	case job.Deadline:
		c[CountDeadline] = 1
	case job.OutOfMemory:
		c[CountOutOfMemory] = 1
	}
	if j.Completing {
		c[CountCompleting] = 1
	}
	if j.State.Terminal() {
		c[CountFinished] = 1
	}
	if j.State != job.Pending {
		c[CountStarted] = 1
	}
	// IS_JOB_COMPLETED: ended and no longer completing.
	if !j.State.Terminal() || j.Completing {
		c[CountLive] = 1
	}
	if (j.State == job.Running || j.State == job.Suspended) && j.Alloc != nil {
		t := j.AllocTRES()
		c[CountCPUsAlloc], c[CountNodesAlloc], c[CountMemAllocMB] = uint64(t.CPUs), uint64(t.Nodes), t.MemMB
	}
	return c
}

// PartitionJobs are the jobs of one partition: their counts and, for
// autoscalers (Slinky), the most nodes any pending job asks for.
type PartitionJobs struct {
	Counts JobCounts
	// MaxJobNodes is the largest max_nodes (at least min_nodes) and
	// MinJobNodes the largest min_nodes of the pending jobs; the NoHold
	// pair leaves held jobs out.
	MaxJobNodes, MinJobNodes             uint32
	MaxJobNodesNoHold, MinJobNodesNoHold uint32
}

// NodeUse is what running and completing jobs hold of one node, the sums
// the controller's usage walk makes (usageLocked), kept as jobs change.
type NodeUse struct {
	CPUs  uint32
	MemMB uint64
	GPUs  int
	Jobs  int
	// Completing counts jobs still being killed on the node.
	Completing int
}

// JobStats are the job counts of the whole state, as of one moment.
type JobStats struct {
	Total       JobCounts
	ByPartition map[string]PartitionJobs
	ByUser      map[string]JobCounts
	ByAccount   map[string]JobCounts
	Nodes       map[string]NodeUse
}

// nodeSpan is how many pending jobs ask for a node count: its largest
// key is the partition's max, and it stays right when jobs go.
type nodeSpan map[uint32]uint32

func (s nodeSpan) add(n uint32, d int) {
	if v := int64(s[n]) + int64(d); v > 0 {
		s[n] = uint32(v)
	} else {
		delete(s, n)
	}
}

func (s nodeSpan) max() uint32 {
	var m uint32
	for n := range s {
		m = max(m, n)
	}
	return m
}

// partTally is one partition's running counts.
type partTally struct {
	counts               JobCounts
	maxNodes, minNodes   nodeSpan
	maxNoHold, minNoHold nodeSpan
}

// statsEntry is what one job added to the tallies, so that its change
// takes exactly that away.
type statsEntry struct {
	part, user, account string
	counts              JobCounts
	// pending: the job's node counts went into the partition's spans.
	pending, held      bool
	minNodes, maxNodes uint32
	alloc              []nodeShare
	completing         bool
}

// nodeShare is one node's part of an entry's allocation.
type nodeShare struct {
	node  string
	cpus  uint32
	memMB uint64
	gpus  int
}

// jobStats keeps JobStats up to date command by command, so that a
// metrics scrape costs as much with 100,000 jobs as with ten: like the
// submit tally it is derived state, built from the jobs on first use and
// then updated from the jobs each command touched, never saved. Its own
// lock lets scrapes read it under the controller's read lock.
type jobStats struct {
	mu      sync.Mutex
	built   bool
	byJob   map[job.ID]*statsEntry
	total   JobCounts
	parts   map[string]*partTally
	users   map[string]*JobCounts
	accts   map[string]*JobCounts
	nodeUse map[string]*NodeUse
}

func (t *jobStats) build(s *State) {
	t.built, t.total = true, JobCounts{}
	t.byJob, t.parts = map[job.ID]*statsEntry{}, map[string]*partTally{}
	t.users, t.accts, t.nodeUse = map[string]*JobCounts{}, map[string]*JobCounts{}, map[string]*NodeUse{}
	for _, id := range s.order {
		t.update(id, s.Jobs[id])
	}
}

// update counts job id as it is now (nil: gone).
func (t *jobStats) update(id job.ID, j *job.Job) {
	if old := t.byJob[id]; old != nil {
		t.apply(old, -1)
		delete(t.byJob, id)
	}
	if j == nil {
		return
	}
	e := &statsEntry{part: j.Req.Partition, user: j.Req.UserName, account: j.Req.Account, counts: countJob(j)}
	if j.State == job.Pending {
		e.pending, e.held = true, j.Hold != job.NotHeld
		e.minNodes = j.Req.MinNodes
		e.maxNodes = max(j.Req.MaxNodes, j.Req.MinNodes)
	}
	if j.Alloc != nil && (j.State == job.Running || j.Completing) {
		e.completing = j.Completing
		e.alloc = make([]nodeShare, len(j.Alloc.Nodes))
		for i, na := range j.Alloc.Nodes {
			e.alloc[i] = nodeShare{na.Node, na.CPUs, na.MemMB, len(na.GPUs)}
		}
	}
	t.byJob[id] = e
	t.apply(e, 1)
}

// apply adds entry e to the tallies (d = 1) or takes it away (d = -1).
func (t *jobStats) apply(e *statsEntry, d int) {
	step := func(c *JobCounts) {
		if d > 0 {
			c.add(&e.counts)
		} else {
			c.sub(&e.counts)
		}
	}
	step(&t.total)
	p := t.parts[e.part]
	if p == nil {
		p = &partTally{maxNodes: nodeSpan{}, minNodes: nodeSpan{}, maxNoHold: nodeSpan{}, minNoHold: nodeSpan{}}
		t.parts[e.part] = p
	}
	step(&p.counts)
	if e.pending {
		p.maxNodes.add(e.maxNodes, d)
		p.minNodes.add(e.minNodes, d)
		if !e.held {
			p.maxNoHold.add(e.maxNodes, d)
			p.minNoHold.add(e.minNodes, d)
		}
	}
	if p.counts.zero() {
		delete(t.parts, e.part)
	}
	stepKey(t.users, e.user, step)
	stepKey(t.accts, e.account, step)
	for _, ns := range e.alloc {
		u := t.nodeUse[ns.node]
		if u == nil {
			u = &NodeUse{}
			t.nodeUse[ns.node] = u
		}
		u.CPUs = uint32(int64(u.CPUs) + int64(d)*int64(ns.cpus))
		u.MemMB = uint64(int64(u.MemMB) + int64(d)*int64(ns.memMB))
		u.GPUs += d * ns.gpus
		u.Jobs += d
		if e.completing {
			u.Completing += d
		}
		if *u == (NodeUse{}) {
			delete(t.nodeUse, ns.node)
		}
	}
}

// stepKey applies step to m's counts under key, dropping them once zero
// so that users and accounts with no jobs left leave the metrics.
func stepKey(m map[string]*JobCounts, key string, step func(*JobCounts)) {
	c := m[key]
	if c == nil {
		c = &JobCounts{}
		m[key] = c
	}
	step(c)
	if c.zero() {
		delete(m, key)
	}
}

// statsTouched brings the job stats up to date with the jobs the command
// just applied changed.
func (s *State) statsTouched() {
	t := s.stats
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.built {
		return
	}
	for _, id := range s.touched {
		t.update(id, s.Jobs[id])
	}
}

// JobStats returns the job counts: the totals, by partition, user and
// account, and what jobs hold of each node. The first call counts every
// job; later ones copy the running counts, whose size is that of the
// partitions, users, accounts and nodes, not of the jobs. The caller
// holds the state for reading.
func (s *State) JobStats() JobStats {
	t := s.stats
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.built {
		t.build(s)
	}
	return t.snapshot()
}

func (t *jobStats) snapshot() JobStats {
	out := JobStats{Total: t.total, ByPartition: make(map[string]PartitionJobs, len(t.parts)),
		ByUser: make(map[string]JobCounts, len(t.users)), ByAccount: make(map[string]JobCounts, len(t.accts)),
		Nodes: make(map[string]NodeUse, len(t.nodeUse))}
	for name, p := range t.parts {
		out.ByPartition[name] = PartitionJobs{Counts: p.counts, MaxJobNodes: p.maxNodes.max(), MinJobNodes: p.minNodes.max(),
			MaxJobNodesNoHold: p.maxNoHold.max(), MinJobNodesNoHold: p.minNoHold.max()}
	}
	for name, c := range t.users {
		out.ByUser[name] = *c
	}
	for name, c := range t.accts {
		out.ByAccount[name] = *c
	}
	for name, u := range t.nodeUse {
		out.Nodes[name] = *u
	}
	return out
}

// CheckJobStats says whether the running job stats match a count of
// every job. They are derived state kept up to date command by command;
// tests call this after each step to catch a change they missed.
func (s *State) CheckJobStats() error {
	kept := s.stats
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if !kept.built {
		return fmt.Errorf("no job stats kept")
	}
	var fresh jobStats
	fresh.build(s)
	got, want := kept.snapshot(), fresh.snapshot()
	switch {
	case got.Total != want.Total:
		return fmt.Errorf("totals %v, counted %v", got.Total, want.Total)
	case !maps.Equal(got.ByPartition, want.ByPartition):
		return fmt.Errorf("partitions %v, counted %v", got.ByPartition, want.ByPartition)
	case !maps.Equal(got.ByUser, want.ByUser):
		return fmt.Errorf("users %v, counted %v", got.ByUser, want.ByUser)
	case !maps.Equal(got.ByAccount, want.ByAccount):
		return fmt.Errorf("accounts %v, counted %v", got.ByAccount, want.ByAccount)
	case !maps.Equal(got.Nodes, want.Nodes):
		return fmt.Errorf("nodes %v, counted %v", got.Nodes, want.Nodes)
	}
	return nil
}
