package sched

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/slurmerr"
)

func testNodes(n int, cpus uint32, gpus int) []*node.Node {
	var out []*node.Node
	for i := 1; i <= n; i++ {
		nd := &node.Node{Name: "n" + string(rune('0'+i)), CPUs: cpus, RealMemory: 16000, Registered: true, Responding: true}
		for g := 0; g < gpus; g++ {
			nd.GPUs = append(nd.GPUs, node.GPU{Index: g, Type: "a100"})
		}
		out = append(out, nd)
	}
	return out
}

func snapshot(nodes []*node.Node, jobs ...*job.Job) *Snapshot {
	p := &partition.Partition{Name: "gpu", MaxTime: partition.Infinite}
	s := &Snapshot{Now: time.Unix(1000, 0), Partitions: map[string]*partition.Partition{"gpu": p}}
	for _, n := range nodes {
		p.Nodes = append(p.Nodes, n.Name)
		s.Nodes = append(s.Nodes, NodeState{Node: n})
	}
	s.Pending = jobs
	return s
}

func pending(id job.ID, r job.Request) *job.Job {
	r.Partition = "gpu"
	if r.TimeLimit == 0 {
		r.TimeLimit = 60
	}
	return &job.Job{ID: id, Req: r, State: job.Pending, Priority: 100, SubmitTime: time.Unix(int64(id), 0), ArrayTaskID: job.NoTask}
}

func TestPlacementMatchesConsTres(t *testing.T) {
	tests := map[string]struct {
		req       job.Request
		wantTasks []uint32
		wantCPUs  []uint32
	}{
		"N2 n4 puts 3 then 1":     {job.Request{MinNodes: 2, NumTasks: 4}, []uint32{3, 1}, []uint32{3, 1}},
		"N4 n8 gives 5,1(x3)":     {job.Request{MinNodes: 4, NumTasks: 8}, []uint32{5, 1, 1, 1}, []uint32{5, 1, 1, 1}},
		"n2 c3 on one node":       {job.Request{NumTasks: 2, CPUsPerTask: 3}, []uint32{2}, []uint32{6}},
		"ntasks-per-node spreads": {job.Request{MinNodes: 2, TasksPerNode: 2}, []uint32{2, 2}, []uint32{2, 2}},
		"exclusive takes all":     {job.Request{Exclusive: true}, []uint32{1}, []uint32{8}},
		// No node count: as many nodes as the tasks take, filled in order.
		"n20 alone spreads 8,8,4": {job.Request{NumTasks: 20}, []uint32{8, 8, 4}, []uint32{8, 8, 4}},
		"n12 c2 spreads 4,4,4":    {job.Request{NumTasks: 12, CPUsPerTask: 2}, []uint32{4, 4, 4}, []uint32{8, 8, 8}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
			plan := f.Schedule(snapshot(testNodes(4, 8, 0), pending(1, tc.req)))
			if len(plan.Starts) != 1 {
				t.Fatalf("starts %v, reasons %v", plan.Starts, plan.Reasons)
			}
			var tasks, cpus []uint32
			for _, na := range plan.Starts[0].Alloc.Nodes {
				tasks = append(tasks, na.Tasks)
				cpus = append(cpus, na.CPUs)
			}
			if d := cmp.Diff(tc.wantTasks, tasks); d != "" {
				t.Errorf("tasks (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantCPUs, cpus); d != "" {
				t.Errorf("cpus (-want +got):\n%s", d)
			}
		})
	}
}

// A job of -n alone goes over partly used nodes when their free
// processors add up, as cons_tres spreads it; -N with the same tasks
// waits for its nodes; more tasks than the partition's processors never
// start.
func TestSpreadOverPartlyUsedNodes(t *testing.T) {
	f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
	s := snapshot(testNodes(4, 8, 0), pending(10, job.Request{NumTasks: 10}))
	for i := range s.Nodes {
		s.Nodes[i].Used = node.Alloc{CPUs: 5, Jobs: 1, MemMB: 500}
	}
	plan := f.Schedule(s)
	if len(plan.Starts) != 1 {
		t.Fatalf("-n 10 over 4 nodes with 3 free each: starts %v, reasons %v", plan.Starts, plan.Reasons)
	}
	var tasks []uint32
	for _, na := range plan.Starts[0].Alloc.Nodes {
		tasks = append(tasks, na.Tasks)
	}
	if d := cmp.Diff([]uint32{3, 3, 3, 1}, tasks); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}

	s = snapshot(testNodes(4, 8, 0), pending(11, job.Request{MinNodes: 2, MaxNodes: 2, NumTasks: 10}))
	for i := range s.Nodes {
		s.Nodes[i].Used = node.Alloc{CPUs: 5, Jobs: 1, MemMB: 500}
	}
	if plan := f.Schedule(s); len(plan.Starts) != 0 || plan.Reasons[11] != job.ReasonResources {
		t.Errorf("-N 2 -n 10 on nodes with 3 free each: starts %v, reasons %v", plan.Starts, plan.Reasons)
	}
	if err := Feasible(&job.Request{NumTasks: 33}, s.Partitions["gpu"], testNodes(4, 8, 0), Defaults{}); err == nil {
		t.Error("-n 33 on 32 processors is feasible")
	}
}

// Backfill plans a spread job on whole nodes and, when it can start now,
// starts it with the tasks it asked for.
func TestBackfillSpreadJob(t *testing.T) {
	b := backfillSched()
	nodes := testNodes(4, 8, 0)
	blocker := pending(1, job.Request{MinNodes: 4, MaxNodes: 4, NumTasks: 32, TimeLimit: 60})
	spread := pending(2, job.Request{NumTasks: 12, TimeLimit: 30})
	s := snapshot(nodes, blocker, spread)
	running(s, 50, 120, job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 2, Tasks: 2}}})
	s.Backfill = true
	plan := b.Schedule(s)
	if len(plan.Starts) != 1 || plan.Starts[0].JobID != 2 {
		t.Fatalf("starts %v, reasons %v", plan.Starts, plan.Reasons)
	}
	var total uint32
	for _, na := range plan.Starts[0].Alloc.Nodes {
		total += na.Tasks
	}
	if total != 12 {
		t.Errorf("spread job started with %d tasks, want 12: %+v", total, plan.Starts[0].Alloc.Nodes)
	}
}

// GPU packing goes to the busiest GPU node that holds the whole job: the
// busiest of all, with one CPU free, cannot take -n4, and the job starts
// on the idle node instead of waiting.
func TestGPUPackingNeedsTheWholeJob(t *testing.T) {
	f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
	for name, req := range map[string]job.Request{
		"-N1 -n4 --gres=gpu:1": {MinNodes: 1, MaxNodes: 1, NumTasks: 4, GPUsPerNode: 1},
		"-n4 --gres=gpu:1":     {NumTasks: 4, GPUsPerNode: 1},
	} {
		s := snapshot(testNodes(2, 8, 4), pending(1, req))
		s.Nodes[0].Used = node.Alloc{CPUs: 7, MemMB: 700, Jobs: 1, GPUs: []bool{true, true, true, false}}
		plan := f.Schedule(s)
		if len(plan.Starts) != 1 {
			t.Fatalf("%s: starts %v, reasons %v", name, plan.Starts, plan.Reasons)
		}
		if na := plan.Starts[0].Alloc.Nodes; len(na) != 1 || na[0].Node != "n2" || na[0].Tasks != 4 {
			t.Errorf("%s: placed %+v, want all four tasks on n2", name, na)
		}
	}
}

func TestFIFOBlocksPartitionAndSharesNodes(t *testing.T) {
	f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
	nodes := testNodes(1, 4, 8)
	a := pending(1, job.Request{NumTasks: 2, GPUsPerNode: 2})
	b := pending(2, job.Request{NumTasks: 2, GPUsPerNode: 3})
	c := pending(3, job.Request{NumTasks: 1})
	held := pending(4, job.Request{})
	held.Hold = job.HeldUser
	plan := f.Schedule(snapshot(nodes, a, b, c, held))
	var started []job.ID
	for _, s := range plan.Starts {
		started = append(started, s.JobID)
	}
	if d := cmp.Diff([]job.ID{1, 2}, started); d != "" {
		t.Errorf("started (-want +got):\n%s", d)
	}
	if got := plan.Starts[1].Alloc.Nodes[0].GPUs; !cmp.Equal(got, []int{2, 3, 4}) {
		t.Errorf("second job GPUs %v, want the next free ones", got)
	}
	want := map[job.ID]job.Reason{3: job.ReasonResources, 4: job.ReasonHeldUser}
	if d := cmp.Diff(want, plan.Reasons); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
}

func TestFIFOReasons(t *testing.T) {
	f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
	nodes := testNodes(2, 8, 0)
	future := pending(1, job.Request{BeginTime: time.Unix(5000, 0)})
	big := pending(2, job.Request{MinNodes: 2, NumTasks: 16})
	after := pending(3, job.Request{})
	down := testNodes(1, 8, 0)[0]
	down.Name, down.Drain = "n9", true
	s := snapshot(append(nodes, down), future, big, after)
	s.Partitions["gpu"].MaxTime = 30
	onDrained := pending(4, job.Request{NodeList: []string{"n9"}, TimeLimit: 10})
	s.Pending = append(s.Pending, onDrained)
	plan := f.Schedule(s)
	want := map[job.ID]job.Reason{1: job.ReasonBeginTime, 2: job.ReasonPartitionTimeLimit, 3: job.ReasonPartitionTimeLimit, 4: job.ReasonReqNodeNotAvail}
	if d := cmp.Diff(want, plan.Reasons); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
}

func TestFIFOArrayThrottle(t *testing.T) {
	f := &FIFO{Defaults: Defaults{DefMemPerCPU: 100}}
	arr := pending(1, job.Request{Array: job.ArraySpec{Tasks: []uint32{0, 1, 2, 3}, MaxRunning: 2}})
	arr.ArrayJobID = 1
	arr.PendingTasks = []uint32{0, 1, 2, 3}
	plan := f.Schedule(snapshot(testNodes(1, 8, 0), arr))
	if len(plan.Starts) != 2 || plan.Starts[0].Task != 0 || plan.Starts[1].Task != 1 {
		t.Fatalf("starts %+v", plan.Starts)
	}
	if plan.Reasons[1] != job.ReasonArrayTaskLimit {
		t.Errorf("reason %q", plan.Reasons[1])
	}
}

func TestFeasible(t *testing.T) {
	nodes := testNodes(2, 8, 4)
	p := &partition.Partition{Name: "gpu", Nodes: []string{"n1", "n2"}, MaxTime: partition.Infinite}
	tests := map[string]struct {
		req  job.Request
		code slurmerr.Code
	}{
		"fits":                {job.Request{GPUsPerNode: 4}, slurmerr.NoError},
		"too many gpus":       {job.Request{GPUsPerNode: 5}, slurmerr.RequestedNodeConfigUnavailable},
		"too many nodes":      {job.Request{MinNodes: 3}, slurmerr.RequestedNodeConfigUnavailable},
		"too many cpus":       {job.Request{NumTasks: 17}, slurmerr.RequestedNodeConfigUnavailable},
		"gpus per job spread": {job.Request{MinNodes: 2, GPUsPerJob: 8}, slurmerr.NoError},
		"wrong gpu type":      {job.Request{GPUsPerNode: 1, GPUType: "h100"}, slurmerr.RequestedNodeConfigUnavailable},
		"node not in part":    {job.Request{NodeList: []string{"n7"}}, slurmerr.RequestedNodesNotInPartition},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Feasible(&tc.req, p, nodes, Defaults{DefMemPerCPU: 100})
			if got := slurmerr.CodeOf(err); got != tc.code {
				t.Errorf("code %d (%v), want %d", got, err, tc.code)
			}
			var se *slurmerr.Error
			if err != nil && !errors.As(err, &se) {
				t.Errorf("error %v is not a slurmerr.Error", err)
			}
		})
	}
}

// hostsShare is the share test written out from placement's own
// capacity rule: a one-node job needs all of itself on the node, a job on
// several nodes at least its minimum.
func (s shape) hostsShare(n *node.Node, f free) bool {
	t, g := s.capacityFree(n, f)
	if t == 0 {
		return false
	}
	if s.nodes == 1 {
		return t >= s.tasks && uint32(bits.OnesCount64(g)) >= s.gpusPerJob
	}
	return true
}

// The compiled share test answers as placement's capacity rule does, for
// any shape, node and what is left of it.
func TestPropertyShareTestMatchesHostsShare(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	for i := 0; i < 200_000; i++ {
		n := &node.Node{Name: "n", CPUs: uint32(1 + r.IntN(64)), RealMemory: uint64(r.IntN(4) * 8000)}
		for g := range r.IntN(5) {
			typ := "a100"
			if r.IntN(3) == 0 {
				typ = "h100"
			}
			n.GPUs = append(n.GPUs, node.GPU{Index: g, Type: typ})
		}
		req := job.Request{
			MinNodes: uint32(r.IntN(3)), NumTasks: uint32(r.IntN(10)), CPUsPerTask: uint32(r.IntN(5)),
			TasksPerNode: uint32(r.IntN(4)), Exclusive: r.IntN(4) == 0, GPUsPerNode: uint32(r.IntN(3)),
			GPUsPerJob: uint32(r.IntN(4) * r.IntN(2)),
		}
		switch r.IntN(4) {
		case 0:
			req.MemPerNode = uint64(r.IntN(3) * 4000)
		case 1:
			req.MemPerCPU = uint64(r.IntN(3) * 1000)
		}
		if r.IntN(3) == 0 {
			req.GPUType = "h100"
		}
		sh := shapeOf(&req, uint64(r.IntN(2)*500), 0)
		f := free{cpus: uint32(r.IntN(70)), mem: uint64(r.IntN(40_000)), gpus: uint64(r.IntN(32)), jobs: r.IntN(3)}
		key := sh.hostKey()
		test := key.testOn(n)
		if got, want := test.hosts(f), sh.hostsShare(n, f); got != want {
			t.Fatalf("shape %+v node %+v free %+v: compiled %v, hostsShare %v", sh, n, f, got, want)
		}
	}
}

// What a job needs at the least never exceeds what a placement of it
// takes, so refusing a job that needs more than its candidates have left
// in all refuses only jobs that placement would refuse.
func TestPropertyLeastNeedIsALowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	placed := 0
	for i := 0; i < 20_000; i++ {
		nodes := testNodes(1+r.IntN(4), uint32(1+r.IntN(16)), r.IntN(5))
		var cands []*NodeState
		for _, n := range nodes {
			ns := &NodeState{Node: n, Used: node.Alloc{GPUs: make([]bool, len(n.GPUs)), CPUs: uint32(r.IntN(int(n.CPUs) + 1))}}
			for g := range ns.Used.GPUs {
				ns.Used.GPUs[g] = r.IntN(3) == 0
			}
			cands = append(cands, ns)
		}
		req := job.Request{MinNodes: uint32(r.IntN(3)), NumTasks: uint32(r.IntN(8)), CPUsPerTask: uint32(r.IntN(4)),
			TasksPerNode: uint32(r.IntN(3)), Exclusive: r.IntN(5) == 0, GPUsPerNode: uint32(r.IntN(3)), GPUsPerJob: uint32(r.IntN(5) * r.IntN(2))}
		sh := shapeOf(&req, 0, 0)
		if _, ok := sh.place(cands, nil); ok {
			placed++
			if !fitsInAll(cands, &req) {
				t.Fatalf("request %+v placed, but refused as needing more than the nodes have", req)
			}
		}
	}
	if placed == 0 {
		t.Fatal("nothing placed")
	}
}
