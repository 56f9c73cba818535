// Package sim replays a workload trace against simulated nodes in virtual
// time, through the controller's own scheduler (internal/sched): the same
// snapshot in, the same plan out, with the clock a number the simulator
// advances from event to event instead of the wall clock.
package sim

import (
	"container/heap"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/trace"
)

// Policy names a scheduler: "fifo" (sched/builtin) or "backfill"
// (sched/backfill).
type Policy string

// The policies.
const (
	FIFO     Policy = "fifo"
	Backfill Policy = "backfill"
)

// Cluster is the simulated machine: Nodes alike, each with CPUs processors
// and GPUs GPUs.
type Cluster struct {
	Nodes int
	CPUs  int
	GPUs  int
}

// Config is one simulation.
type Config struct {
	Cluster Cluster
	Policy  Policy
	// Backfill are the bf_* settings of a backfill run.
	Backfill sched.BackfillParams
	// Progress, when set, is told how the replay goes every few hundred
	// events and once at the end (it decides itself how often to show
	// it).
	Progress func(Progress)
}

// Progress is how far a replay has got.
type Progress struct {
	// Ended and Total count jobs: ended so far, and in the replay.
	Ended, Total int
	// Now is the simulated time, in seconds of the trace.
	Now int64
	// Done says the replay is over.
	Done bool
}

// Outcome is what happened to one job.
type Outcome struct {
	Submit, Start, End int64
	// Size is the processors or GPUs the job held.
	Size int
}

// Result is one run's outcomes and cost.
type Result struct {
	Policy   Policy
	Outcomes []Outcome
	// Skipped counts jobs larger than the machine, which never run.
	Skipped int
	// Cycles is the number of scheduling cycles run.
	Cycles int
	Wall   time.Duration
}

// epoch anchors virtual time; any fixed instant works.
var epoch = time.Unix(1_000_000_000, 0)

// simJob is a trace job during the run.
type simJob struct {
	j      *job.Job
	run    int64 // seconds it runs once started (its time limit at most)
	size   int
	submit int64
	need   amount
}

// amount is processors and GPUs, counted over the whole machine.
type amount struct{ cpus, gpus int }

func (a amount) within(b amount) bool { return a.cpus <= b.cpus && a.gpus <= b.gpus }

// needOf is what a request takes of the machine in all.
func needOf(r *job.Request, c Cluster) amount {
	nodes := int(max(r.MinNodes, 1))
	if r.Exclusive {
		return amount{nodes * max(c.CPUs, 1), nodes * c.GPUs}
	}
	tasks := int(max(r.NumTasks, r.MinNodes, 1))
	return amount{tasks * int(max(r.CPUsPerTask, 1)), nodes * int(r.GPUsPerNode)}
}

// Run replays a trace. Jobs are submitted at their trace times, start when
// the scheduler plans them, and end after their run time, or at their time
// limit if that comes first (as slurmctld ends them).
func Run(t *trace.Trace, cfg Config) (*Result, error) {
	c := cfg.Cluster
	if c.Nodes <= 0 {
		return nil, fmt.Errorf("cluster of %d nodes", c.Nodes)
	}
	begin := time.Now()
	part := &partition.Partition{Name: "sim", MaxTime: partition.Infinite, State: partition.Up}
	var s sched.Scheduler = &sched.FIFO{}
	params := cfg.Backfill
	if params == (sched.BackfillParams{}) {
		params = sched.DefaultBackfillParams()
	}
	if cfg.Policy == Backfill {
		s = &sched.Backfill{Params: params}
	} else if cfg.Policy != FIFO {
		return nil, fmt.Errorf("unknown policy %q (fifo or backfill)", cfg.Policy)
	}
	// Only starts matter here: plans for display are not kept.
	snap := &sched.Snapshot{
		StartsOnly: true,
		// The passes take their starts in the nodes' usage themselves.
		InPlace:      true,
		Partitions:   map[string]*partition.Partition{part.Name: part},
		ArrayRunning: map[job.ID]uint32{},
		Blocked:      map[job.ID]job.Reason{},
	}
	byName := map[string]int{}
	for i := range c.Nodes {
		n := &node.Node{Name: "n" + strconv.Itoa(i+1), CPUs: uint32(max(c.CPUs, 1)), Registered: true, Responding: true}
		for g := range c.GPUs {
			n.GPUs = append(n.GPUs, node.GPU{Index: g})
		}
		part.Nodes = append(part.Nodes, n.Name)
		snap.Nodes = append(snap.Nodes, sched.NodeState{Node: n, Used: node.Alloc{GPUs: make([]bool, c.GPUs)}})
		byName[n.Name] = i
	}

	res := &Result{Policy: cfg.Policy}
	jobs := make([]simJob, 0, len(t.Jobs))
	for i := range t.Jobs {
		tj := &t.Jobs[i]
		r, size, ok := request(t.Kind, tj, c)
		if !ok {
			res.Skipped++
			continue
		}
		id := job.ID(len(jobs) + 1)
		limit := int64(r.TimeLimit) * 60
		jobs = append(jobs, simJob{
			j: &job.Job{ID: id, Req: r, State: job.Pending, Priority: 1, ArrayTaskID: job.NoTask,
				SubmitTime: epoch.Add(time.Duration(tj.Submit) * time.Second)},
			run: min(tj.Run, limit), size: size, submit: tj.Submit, need: needOf(&r, c),
		})
	}
	res.Outcomes = make([]Outcome, len(jobs))
	byID := func(id job.ID) *simJob { return &jobs[id-1] }

	var ends endHeap
	var pending []*job.Job
	// The running jobs are the snapshot's own list, kept from cycle to
	// cycle: an end swaps the last one into its place (at[id] is its
	// index), so a cycle copies nothing.
	at := map[job.ID]int{}
	free := amount{c.Nodes * max(c.CPUs, 1), c.Nodes * c.GPUs}
	next := 0
	lastBF := int64(math.MinInt64 / 2)
	interval := int64(params.Interval / time.Second)
	now := int64(0)
	if len(jobs) > 0 {
		now = jobs[0].submit
	}
	ended, events := 0, 0
	for next < len(jobs) || len(ends) > 0 || len(pending) > 0 {
		if events++; cfg.Progress != nil && events%256 == 0 {
			cfg.Progress(Progress{Ended: ended, Total: len(jobs), Now: now})
		}
		// Everything due by now: ends free their nodes, submissions queue.
		for len(ends) > 0 && ends[0].at <= now {
			e := heap.Pop(&ends).(end)
			sj := byID(e.id)
			release(snap, byName, sj.j.Alloc)
			free.cpus += int(sj.j.Alloc.TotalCPUs())
			free.gpus += sj.j.Alloc.TotalGPUs()
			i, last := at[e.id], len(snap.Running)-1
			snap.Running[i] = snap.Running[last]
			at[snap.Running[i].ID] = i
			snap.Running = snap.Running[:last]
			delete(at, e.id)
			res.Outcomes[e.id-1].End = e.at
			ended++
		}
		for next < len(jobs) && jobs[next].submit <= now {
			pending = append(pending, jobs[next].j)
			next++
		}
		wantBF := false
		// A cycle in which no pending job fits in what is free, counted
		// over the whole machine, could start nothing: it is skipped, as
		// its outcome is known (plans are not kept from pass to pass).
		due := cfg.Policy == Backfill && now-lastBF >= interval
		if due {
			lastBF = now
		}
		main := len(pending) > 0 && byID(pending[0].ID).need.within(free)
		bf := false
		if due {
			for _, j := range pending[:min(len(pending), params.MaxJobTest)] {
				if byID(j.ID).need.within(free) {
					bf = true
					break
				}
			}
		}
		if main || bf {
			snap.Now = epoch.Add(time.Duration(now) * time.Second)
			snap.Pending = pending
			snap.Backfill = bf
			plan := s.Schedule(snap)
			res.Cycles++
			if len(plan.Starts) > 0 {
				started := make(map[job.ID]bool, len(plan.Starts))
				for _, st := range plan.Starts {
					sj := byID(st.JobID)
					a := st.Alloc
					sj.j.Alloc = &a
					sj.j.State = job.Running
					free.cpus -= int(a.TotalCPUs())
					free.gpus -= a.TotalGPUs()
					endAt := now + max(sj.run, 0)
					at[st.JobID] = len(snap.Running)
					snap.Running = append(snap.Running, sched.Running{ID: st.JobID, Alloc: &a,
						End: snap.Now.Add(time.Duration(int64(sj.j.Req.TimeLimit)*60) * time.Second)})
					heap.Push(&ends, end{at: endAt, id: st.JobID})
					res.Outcomes[st.JobID-1] = Outcome{Submit: sj.submit, Start: now, Size: sj.size}
					started[st.JobID] = true
				}
				kept := pending[:0]
				for _, j := range pending {
					if !started[j.ID] {
						kept = append(kept, j)
					}
				}
				clear(pending[len(kept):])
				pending = kept
			}
		}
		// A backfill pass held back by bf_interval is owed once the
		// interval is over, even if nothing else happens by then.
		wantBF = cfg.Policy == Backfill && len(pending) > 0 && !due
		// Advance to the next event.
		nextAt := int64(math.MaxInt64)
		if len(ends) > 0 {
			nextAt = ends[0].at
		}
		if next < len(jobs) {
			nextAt = min(nextAt, jobs[next].submit)
		}
		if wantBF {
			nextAt = min(nextAt, lastBF+interval)
		}
		if nextAt == math.MaxInt64 {
			if len(pending) > 0 {
				return nil, fmt.Errorf("%d jobs can never start on %d nodes (first: job %d)", len(pending), c.Nodes, pending[0].ID)
			}
			break
		}
		now = max(now, nextAt)
	}
	res.Wall = time.Since(begin)
	if cfg.Progress != nil {
		cfg.Progress(Progress{Ended: ended, Total: len(jobs), Now: now, Done: true})
	}
	return res, nil
}

// request turns a trace job into what a user would have asked Slurm for
// on the simulated machine. The time limit is the trace's estimate, or
// the run time (rounded up to a minute) where the trace has none.
func request(k trace.Kind, tj *trace.Job, c Cluster) (job.Request, int, bool) {
	est := tj.Estimate
	if est <= 0 {
		est = tj.Run
	}
	r := job.Request{Partition: "sim", TimeLimit: uint32(max((est+59)/60, 1))}
	switch k {
	case trace.GPU:
		if c.GPUs <= 0 {
			return r, 0, false
		}
		if tj.GPUs <= c.GPUs {
			r.GPUsPerNode = uint32(tj.GPUs)
		} else {
			if tj.GPUs%c.GPUs != 0 || tj.GPUs/c.GPUs > c.Nodes {
				return r, 0, false
			}
			r.MinNodes = uint32(tj.GPUs / c.GPUs)
			r.GPUsPerNode = uint32(c.GPUs)
			r.Exclusive = true
		}
		return r, tj.GPUs, true
	default:
		cpus := max(c.CPUs, 1)
		if tj.Procs > c.Nodes*cpus {
			return r, 0, false
		}
		// sbatch -n PROCS: the tasks go wherever processors are free,
		// on as many nodes as that takes, as the logged machines
		// allocated processors.
		r.NumTasks = uint32(tj.Procs)
		return r, tj.Procs, true
	}
}

func release(s *sched.Snapshot, byName map[string]int, a *job.Allocation) {
	for _, na := range a.Nodes {
		u := &s.Nodes[byName[na.Node]].Used
		u.CPUs -= na.CPUs
		u.MemMB -= na.MemMB
		u.Jobs--
		for _, g := range na.GPUs {
			u.GPUs[g] = false
		}
	}
}

type end struct {
	at int64
	id job.ID
}

type endHeap []end

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].id < h[j].id
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(end)) }
func (h *endHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
