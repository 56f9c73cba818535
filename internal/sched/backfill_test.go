package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
)

func backfillSched() *Backfill {
	p := DefaultBackfillParams()
	return &Backfill{Params: p}
}

// running marks a job as running on nodes of the snapshot for the rest of
// its time limit (minutes from now).
func running(s *Snapshot, id job.ID, minutes int, alloc job.Allocation) {
	for _, na := range alloc.Nodes {
		for i := range s.Nodes {
			ns := &s.Nodes[i]
			if ns.Node.Name != na.Node {
				continue
			}
			ns.Used.CPUs += na.CPUs
			ns.Used.MemMB += na.MemMB
			ns.Used.Jobs++
			for _, g := range na.GPUs {
				for len(ns.Used.GPUs) <= g {
					ns.Used.GPUs = append(ns.Used.GPUs, false)
				}
				ns.Used.GPUs[g] = true
			}
		}
	}
	a := alloc
	s.Running = append(s.Running, Running{ID: id, Alloc: &a, End: s.Now.Add(time.Duration(minutes) * time.Minute)})
}

func wholeNodes(names ...string) job.Allocation {
	var a job.Allocation
	for _, n := range names {
		a.Nodes = append(a.Nodes, job.NodeAlloc{Node: n, CPUs: 8, MemMB: 16000, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Tasks: 1})
	}
	return a
}

// Story 3: a 4-node training job waits for two busy nodes; a short
// evaluation job runs on an idle node in the gap, a long one does not.
func TestBackfillRunsShortJobInTheGap(t *testing.T) {
	nodes := testNodes(4, 8, 8)
	train := pending(10, job.Request{MinNodes: 4, Exclusive: true, TimeLimit: 7 * 24 * 60})
	train.Priority = 1000
	evalShort := pending(11, job.Request{GPUsPerNode: 1, TimeLimit: 30})
	evalLong := pending(12, job.Request{GPUsPerNode: 1, TimeLimit: 120})
	s := snapshot(nodes, train, evalShort, evalLong)
	running(s, 1, 60, wholeNodes("n1", "n2"))
	s.Backfill = true

	plan := backfillSched().Schedule(s)
	if len(plan.Starts) != 1 || plan.Starts[0].JobID != 11 {
		t.Fatalf("starts = %+v, want job 11 only", plan.Starts)
	}
	if !plan.Backfilled[11] {
		t.Errorf("job 11 not marked backfilled")
	}
	pl, ok := plan.Planned[10]
	if !ok || !pl.Start.Equal(s.Now.Add(time.Hour)) {
		t.Fatalf("training job planned %+v, want start at +1h", pl)
	}
	if got := fmt.Sprint(pl.Nodes); got != "[n1 n2 n3 n4]" {
		t.Errorf("training job planned on %s", got)
	}
	if got := plan.Reasons[12]; got != job.ReasonPriority {
		t.Errorf("long eval job reason %q, want Priority", got)
	}
	if pl := plan.Planned[12]; !pl.Start.Equal(s.Now.Add(time.Hour+7*24*time.Hour)) && !pl.Start.IsZero() {
		t.Errorf("long eval job planned at %v", pl.Start)
	}
	if _, ok := plan.Reasons[11]; ok {
		t.Errorf("started job keeps reason %q", plan.Reasons[11])
	}

	// Without the backfill pass the main pass alone starts nothing.
	s.Backfill = false
	if plan := backfillSched().Schedule(s); len(plan.Starts) != 0 || plan.Planned != nil {
		t.Errorf("main pass alone: starts %+v planned %+v", plan.Starts, plan.Planned)
	}
}

func TestBackfillRespectsWindowAndLimits(t *testing.T) {
	nodes := testNodes(2, 8, 0)
	big := pending(10, job.Request{MinNodes: 2, TimeLimit: 60})
	big.Priority = 1000
	small := pending(11, job.Request{TimeLimit: 10})
	s := snapshot(nodes, big, small)
	running(s, 1, 3*24*60, job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 8, Tasks: 1}}})
	s.Backfill = true
	plan := backfillSched().Schedule(s)
	if _, ok := plan.Planned[10]; ok {
		t.Errorf("job beyond bf_window planned: %+v", plan.Planned[10])
	}
	if len(plan.Starts) != 1 || plan.Starts[0].JobID != 11 {
		t.Errorf("starts %+v, want the small job", plan.Starts)
	}

	b := backfillSched()
	b.Params.MaxJobTest = 1
	if plan := b.Schedule(s); len(plan.Starts) != 0 {
		t.Errorf("bf_max_job_test=1 started %+v", plan.Starts)
	}
	b = backfillSched()
	b.Params.MaxJobUser = 1
	if plan := b.Schedule(s); len(plan.Starts) != 0 {
		t.Errorf("bf_max_job_user=1 started %+v", plan.Starts)
	}
}

// randomWorkload builds a busy cluster and a queue of mixed jobs.
func randomWorkload(r *rand.Rand) *Snapshot {
	nNodes := 2 + r.IntN(7)
	nodes := testNodes(nNodes, 8, 4)
	var jobs []*job.Job
	for i := 0; i < 5+r.IntN(25); i++ {
		req := job.Request{TimeLimit: uint32(1 + r.IntN(300))}
		switch r.IntN(5) {
		case 0:
			req.MinNodes = uint32(1 + r.IntN(nNodes))
			req.Exclusive = true
		case 1:
			req.GPUsPerNode = uint32(1 + r.IntN(4))
		case 2:
			req.NumTasks = uint32(1 + r.IntN(12))
		case 3:
			req.MinNodes = uint32(1 + r.IntN(min(nNodes, 3)))
			req.TasksPerNode = uint32(1 + r.IntN(4))
			req.MemPerNode = uint64(1000 * (1 + r.IntN(16)))
		default:
			req.CPUsPerTask = uint32(1 + r.IntN(8))
			req.GPUsPerJob = uint32(r.IntN(3))
		}
		if r.IntN(10) == 0 {
			req.TimeLimit = job.Infinite
		}
		j := pending(job.ID(100+i), req)
		j.Priority = uint32(r.IntN(5))
		j.Req.UserID = uint32(r.IntN(3))
		jobs = append(jobs, j)
	}
	s := snapshot(nodes, jobs...)
	// Fill part of the cluster with running jobs of random remaining time.
	for i, nd := range nodes {
		if r.IntN(3) == 0 {
			continue
		}
		cpus := uint32(1 + r.IntN(8))
		gpus := []int{}
		for g := 0; g < r.IntN(5); g++ {
			gpus = append(gpus, g)
		}
		running(s, job.ID(1+i), 1+r.IntN(400), job.Allocation{Nodes: []job.NodeAlloc{{Node: nd.Name, CPUs: cpus, MemMB: uint64(1000 * r.IntN(16)), GPUs: gpus, Tasks: 1}}})
	}
	s.Backfill = true
	return s
}

// booking is a job's hold on nodes over [from, to) in a plan.
type booking struct {
	id       job.ID
	from, to time.Time
	nodes    []job.NodeAlloc
}

// The plan never gives a node more than it has at any moment: running
// jobs until their ends, started jobs for their limits and planned jobs
// from their planned starts. A planned start therefore holds whatever
// lower-priority work starts meanwhile.
func TestPropertyBackfillPlanNeverOverbooks(t *testing.T) {
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		s := randomWorkload(r)
		b := backfillSched()
		b.Params.Resolution = time.Second
		b.Params.MaxJobTest = 1000
		plan := b.Schedule(s)
		byID := map[job.ID]*job.Job{}
		for _, j := range s.Pending {
			byID[j.ID] = j
		}
		var res []booking
		for _, rj := range s.Running {
			res = append(res, booking{rj.ID, s.Now, rj.End, rj.Alloc.Nodes})
		}
		limit := func(id job.ID) time.Duration {
			l := byID[id].Req.TimeLimit
			if l == job.Infinite {
				return 1000 * 24 * time.Hour
			}
			return time.Duration(l) * time.Minute
		}
		for _, st := range plan.Starts {
			res = append(res, booking{st.JobID, s.Now, s.Now.Add(limit(st.JobID)), st.Alloc.Nodes})
		}
		for id, pl := range plan.Planned {
			// Re-place the planned job where it was planned, from the
			// recorded nodes: its share is its request's, as on start.
			res = append(res, booking{id, pl.Start, pl.Start.Add(limit(id)), plannedShares(t, b, s, byID[id], pl)})
		}
		checkNoOverbooking(t, seed, s, res)
	}
}

// plannedShares re-derives what a planned job would hold on its planned
// nodes by placing it there on empty nodes (the count of CPUs, memory and
// GPUs does not depend on what else runs).
func plannedShares(t *testing.T, b *Backfill, s *Snapshot, j *job.Job, pl Planned) []job.NodeAlloc {
	t.Helper()
	part := s.Partitions[j.Req.Partition]
	sh := shapeOf(&j.Req, b.defMemPerCPU(part), b.defMemPerNode(part))
	var cands []*NodeState
	for _, name := range pl.Nodes {
		for i := range s.Nodes {
			if s.Nodes[i].Node.Name == name {
				cands = append(cands, &NodeState{Node: s.Nodes[i].Node})
			}
		}
	}
	a, ok := sh.place(cands, nil)
	if !ok {
		t.Fatalf("job %d cannot be placed on its planned nodes %v even when empty", j.ID, pl.Nodes)
	}
	// GPU indices are not comparable across the two placements; keep the
	// counts only, checked below as counts.
	return a.Nodes
}

func checkNoOverbooking(t *testing.T, seed uint64, s *Snapshot, res []booking) {
	t.Helper()
	var times []time.Time
	for _, r := range res {
		times = append(times, r.from)
	}
	nodeByName := map[string]*node.Node{}
	for _, ns := range s.Nodes {
		nodeByName[ns.Node.Name] = ns.Node
	}
	for _, at := range times {
		cpus := map[string]uint32{}
		gpus := map[string]int{}
		mem := map[string]uint64{}
		var who = map[string][]job.ID{}
		for _, r := range res {
			if r.from.After(at) || !r.to.After(at) {
				continue
			}
			for _, na := range r.nodes {
				cpus[na.Node] += na.CPUs
				gpus[na.Node] += len(na.GPUs)
				mem[na.Node] += na.MemMB
				who[na.Node] = append(who[na.Node], r.id)
			}
		}
		for name, c := range cpus {
			n := nodeByName[name]
			if c > n.CPUs || gpus[name] > len(n.GPUs) || mem[name] > n.RealMemory {
				t.Fatalf("seed %d: at %v node %s holds cpus %d/%d gpus %d/%d mem %d/%d for jobs %v",
					seed, at.Sub(s.Now), name, c, n.CPUs, gpus[name], len(n.GPUs), mem[name], n.RealMemory, who[name])
			}
		}
	}
}

// A job's plan depends only on the jobs above it: taking every job below
// it out of the queue leaves its start (now or planned) unchanged, so no
// lower-priority job, backfilled or not, delays it.
func TestPropertyLowerPriorityJobsNeverDelayHigher(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		s := randomWorkload(r)
		b := backfillSched()
		b.Params.MaxJobTest = 1000
		full := b.Schedule(s)
		order := b.mainPass(s).order
		for k := 1; k < len(order); k++ {
			sub := *s
			sub.Pending = order[:k]
			part := b.Schedule(&sub)
			id := order[k-1].ID
			if got, want := startOf(part, s.Now, id), startOf(full, s.Now, id); !got.Equal(want) {
				t.Fatalf("seed %d: job %d (rank %d) starts %v alone with those above it, %v with the whole queue",
					seed, id, k, got.Sub(s.Now), want.Sub(s.Now))
			}
		}
	}
}

// startOf is when the plan starts a job: now, its planned start, or zero.
func startOf(p *Plan, now time.Time, id job.ID) time.Time {
	for _, st := range p.Starts {
		if st.JobID == id {
			return now
		}
	}
	return p.Planned[id].Start
}

func TestParseBackfillParams(t *testing.T) {
	p, warn := ParseBackfillParams("bf_max_job_test=100, bf_window=2880,bf_resolution=30,bf_continue,bf_max_job_user=4,bf_interval=5,default_queue_depth=10")
	want := BackfillParams{MaxJobTest: 100, Window: 48 * time.Hour, Resolution: 30 * time.Second, MaxJobUser: 4, Interval: 5 * time.Second, Continue: true}
	if p != want || len(warn) != 0 {
		t.Errorf("got %+v %q, want %+v", p, warn, want)
	}
	p, warn = ParseBackfillParams("bf_interval=0,bf_window=x,bf_resolution")
	if p != DefaultBackfillParams() || len(warn) != 3 || warn[0] != "Invalid SchedulerParameters bf_interval: 0" {
		t.Errorf("bad values: got %+v %q", p, warn)
	}
}

func FuzzParseBackfillParams(f *testing.F) {
	f.Add("bf_max_job_test=100,bf_window=2880,bf_continue")
	f.Add("bf_interval=-1,,=,bf_resolution=99999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		p, _ := ParseBackfillParams(s)
		if p.MaxJobTest < 1 || p.Window < time.Minute || p.Resolution < time.Second || p.Interval < time.Second || p.MaxJobUser < 0 {
			t.Fatalf("%q gave out-of-range %+v", s, p)
		}
	})
}

// The heaps that find one-node jobs' starts give the plan that reading
// every node gives.
func TestPropertyHeapsMatchScan(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		s := randomWorkload(r)
		fast, slow := backfillSched(), backfillSched()
		fast.Params.MaxJobTest, slow.Params.MaxJobTest = 1000, 1000
		slow.scanOnly = true
		a, b := fast.Schedule(s), slow.Schedule(s)
		if fmt.Sprint(a.Starts) != fmt.Sprint(b.Starts) || fmt.Sprint(a.Planned) != fmt.Sprint(b.Planned) {
			t.Fatalf("seed %d: heaps\n%v\n%v\nscan\n%v\n%v", seed, a.Starts, a.Planned, b.Starts, b.Planned)
		}
	}
}

// A pass asked for starts only starts exactly what a whole pass starts.
func TestPropertyStartsOnlySameStarts(t *testing.T) {
	stopped := 0
	for seed := uint64(0); seed < 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		s := randomWorkload(r)
		if seed%2 == 1 {
			// A second partition over some of the nodes, with some of the
			// jobs: an aggregate of one partition says nothing of another.
			other := &partition.Partition{Name: "other", MaxTime: partition.Infinite}
			for i, ns := range s.Nodes {
				if i%2 == 0 {
					other.Nodes = append(other.Nodes, ns.Node.Name)
				}
			}
			s.Partitions["other"] = other
			for _, j := range s.Pending {
				if r.IntN(2) == 0 {
					j.Req.Partition = "other"
				}
			}
		}
		whole, quick := backfillSched(), backfillSched()
		whole.Params.MaxJobTest, quick.Params.MaxJobTest = 1000, 1000
		a := whole.Schedule(s)
		s.StartsOnly = true
		b := quick.Schedule(s)
		if fmt.Sprint(a.Starts) != fmt.Sprint(b.Starts) {
			t.Fatalf("seed %d: whole pass starts\n%v\nstarts only\n%v", seed, a.Starts, b.Starts)
		}
		if len(b.Planned) < len(a.Planned) {
			stopped++
		}
	}
	// The shortcut must actually be taken on some workloads.
	if stopped == 0 {
		t.Errorf("no pass stopped early")
	}
	t.Logf("%d of 600 passes stopped early", stopped)
}

// A starts-only pass keeps one partition's aggregate to its own nodes:
// a reservation in another partition does not make a job of the first
// look as if it cannot start.
func TestStartsOnlyAggregateIsPerPartition(t *testing.T) {
	nodes := testNodes(4, 4, 0)
	mk := func() *Snapshot {
		a := pending(1, job.Request{MinNodes: 2, NumTasks: 2, CPUsPerTask: 4, TimeLimit: 120})
		b := pending(2, job.Request{MinNodes: 2, NumTasks: 2, CPUsPerTask: 4, TimeLimit: 60})
		c := pending(3, job.Request{NumTasks: 1, CPUsPerTask: 4, TimeLimit: 40})
		a.Req.Partition, b.Req.Partition, c.Req.Partition = "a", "b", "a"
		s := snapshot(nodes, a, b, c)
		s.Partitions["a"] = &partition.Partition{Name: "a", MaxTime: partition.Infinite, Nodes: []string{nodes[0].Name, nodes[1].Name}}
		s.Partitions["b"] = &partition.Partition{Name: "b", MaxTime: partition.Infinite, Nodes: []string{nodes[2].Name, nodes[3].Name}}
		full := func(n string) job.Allocation {
			return job.Allocation{Nodes: []job.NodeAlloc{{Node: n, CPUs: 4, Tasks: 1}}}
		}
		running(s, 91, 60, full(nodes[0].Name))
		running(s, 92, 30, full(nodes[2].Name))
		running(s, 93, 30, full(nodes[3].Name))
		s.Backfill = true
		return s
	}
	whole := backfillSched().Schedule(mk())
	quick := mk()
	quick.StartsOnly = true
	got := backfillSched().Schedule(quick)
	if len(whole.Starts) != 1 || whole.Starts[0].JobID != 3 || fmt.Sprint(got.Starts) != fmt.Sprint(whole.Starts) {
		t.Errorf("whole pass starts %v, starts-only pass %v", whole.Starts, got.Starts)
	}
}
