package sched

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/topology"
)

func TestReservationsKeepTheirNodes(t *testing.T) {
	nodes := testNodes(2, 8, 0)
	member := pending(1, job.Request{Reservation: "maint"})
	other := pending(2, job.Request{})
	named := pending(3, job.Request{NodeList: []string{"n1"}})
	s := snapshot(nodes, member, other, named)
	s.Reservations = []*reservation.Reservation{{Name: "maint", Start: s.Now.Add(-time.Minute), End: s.Now.Add(time.Hour), Nodes: []string{"n1"}, Users: []string{"root"}}}
	plan := (&FIFO{}).Schedule(s)
	on := map[job.ID]string{}
	for _, st := range plan.Starts {
		on[st.JobID] = st.Alloc.Nodes[0].Node
	}
	if on[1] != "n1" || on[2] != "n2" {
		t.Errorf("member on %q, other on %q; want n1 and n2", on[1], on[2])
	}
	if r := plan.Reasons[3]; r != job.ReasonReqNodeReserved {
		t.Errorf("job naming the reserved node: reason %q", r)
	}

	// Before its window the member waits (Reservation); a job whose time
	// limit would run into the window stays off the reserved node.
	s = snapshot(nodes, pending(1, job.Request{Reservation: "maint"}), pending(2, job.Request{MinNodes: 2, TimeLimit: 60}), pending(3, job.Request{MinNodes: 2, TimeLimit: 20}))
	s.Reservations = []*reservation.Reservation{{Name: "maint", Start: s.Now.Add(30 * time.Minute), End: s.Now.Add(90 * time.Minute), Nodes: []string{"n1"}}}
	plan = (&FIFO{}).Schedule(s)
	if r := plan.Reasons[1]; r != job.ReasonReservation {
		t.Errorf("member before the window: %q", r)
	}
	if r := plan.Reasons[2]; r != job.ReasonResources {
		t.Errorf("2-node job running into the window: %q", r)
	}
	s.Pending = s.Pending[2:]
	if plan := (&FIFO{}).Schedule(s); len(plan.Starts) != 1 {
		t.Errorf("2-node job ending before the window did not start: %+v", plan.Reasons)
	}

	// A deleted reservation leaves its jobs waiting.
	s = snapshot(nodes, pending(1, job.Request{Reservation: "gone"}))
	if r := (&FIFO{}).Schedule(s).Reasons[1]; r != job.ReasonReservationDeleted {
		t.Errorf("job of a deleted reservation: %q", r)
	}
}

// Backfill plans around a reservation: a job that would overlap its
// window is planned after it.
func TestBackfillPlansAroundReservations(t *testing.T) {
	nodes := testNodes(2, 8, 0)
	big := pending(1, job.Request{MinNodes: 2, TimeLimit: 90})
	s := snapshot(nodes, big)
	s.Reservations = []*reservation.Reservation{{Name: "train", Start: s.Now.Add(time.Hour), End: s.Now.Add(2 * time.Hour), Nodes: []string{"n1", "n2"}}}
	s.Backfill = true
	b := backfillSched()
	b.Params.Resolution = time.Second
	plan := b.Schedule(s)
	if len(plan.Starts) != 0 {
		t.Fatalf("job overlapping the reservation started: %+v", plan.Starts)
	}
	if got, want := plan.Planned[1].Start, s.Now.Add(2*time.Hour+time.Second); got.Sub(want).Abs() > time.Second {
		t.Errorf("planned at %v, want after the window (%v)", got.Sub(s.Now), want.Sub(s.Now))
	}
}

// A small GPU job goes to the busiest node it fits on, so that whole GPU
// nodes stay free for jobs that need all their GPUs.
func TestGPUPacking(t *testing.T) {
	nodes := testNodes(3, 64, 8)
	small := pending(1, job.Request{GPUsPerNode: 2})
	whole := pending(2, job.Request{GPUsPerNode: 8})
	s := snapshot(nodes, small, whole)
	busy := func(i int, gpus int) {
		s.Nodes[i].Used = node.Alloc{CPUs: uint32(gpus), Jobs: 1, GPUs: make([]bool, 8)}
		for g := range gpus {
			s.Nodes[i].Used.GPUs[g] = true
		}
	}
	busy(0, 8)
	busy(2, 6)
	plan := (&FIFO{}).Schedule(s)
	on := map[job.ID]string{}
	for _, st := range plan.Starts {
		on[st.JobID] = st.Alloc.Nodes[0].Node
	}
	if on[1] != "n3" || on[2] != "n2" {
		t.Errorf("2-GPU job on %q, 8-GPU job on %q; want n3 (the busiest that fits) and n2", on[1], on[2])
	}
}

// With a tree topology a multi-node job lands on one leaf switch when one
// can hold it (the fullest such), otherwise on as few as the smallest
// subtree allows; --switches makes it wait for fewer.
func TestTopologyPlacement(t *testing.T) {
	top, err := topology.Parse(strings.NewReader("SwitchName=s0 Nodes=n[1-4]\nSwitchName=s1 Nodes=n[5-8]\nSwitchName=spine Switches=s[0-1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := testNodes(8, 8, 0)
	for i, n := range nodes {
		n.Name = "n" + strconv.Itoa(i+1)
	}
	place := func(busy []string, j *job.Job) (*Plan, *Snapshot) {
		s := snapshot(nodes, j)
		s.Topology = top
		for i := range s.Nodes {
			if slices.Contains(busy, s.Nodes[i].Node.Name) {
				s.Nodes[i].Used = node.Alloc{CPUs: 8, Jobs: 1}
			}
		}
		return (&FIFO{}).Schedule(s), s
	}
	nodesOf := func(p *Plan) string {
		if len(p.Starts) == 0 {
			return "(none)"
		}
		return hostlist.Compress(p.Starts[0].Alloc.NodeNames())
	}
	// n1, n2 busy: s0 has 2 free, s1 4 free; a 2-node job goes to s0
	// (the fullest leaf that holds it), keeping s1 whole.
	if p, _ := place([]string{"n1", "n2"}, pending(1, job.Request{MinNodes: 2})); nodesOf(p) != "n[3-4]" {
		t.Errorf("2 nodes: %s, want n[3-4]", nodesOf(p))
	}
	// A 3-node job does not fit s0: all on s1, not n3,n4 + one of s1.
	if p, _ := place([]string{"n1", "n2"}, pending(1, job.Request{MinNodes: 3})); nodesOf(p) != "n[5-7]" {
		t.Errorf("3 nodes: %s, want n[5-7]", nodesOf(p))
	}
	// 5 nodes need both leaves: s1's four and one of s0.
	if p, _ := place([]string{"n1", "n2"}, pending(1, job.Request{MinNodes: 5})); nodesOf(p) != "n[3,5-8]" {
		t.Errorf("5 nodes: %s, want n[3,5-8]", nodesOf(p))
	}
	// --switches=1@1h: two leaves would be needed, so it waits...
	j := pending(1, job.Request{MinNodes: 3, MaxSwitches: 1, SwitchWait: time.Hour})
	p, s := place([]string{"n1", "n2", "n5", "n6"}, j)
	if len(p.Starts) != 0 || p.Reasons[1] != job.ReasonResources {
		t.Errorf("--switches=1: started on %s", nodesOf(p))
	}
	// ... until its wait is over.
	j.EligibleTime = s.Now.Add(-2 * time.Hour)
	if p, _ := place([]string{"n1", "n2", "n5", "n6"}, j); len(p.Starts) != 1 {
		t.Errorf("--switches=1 after the wait: %v", p.Reasons)
	}
}

// Two separate trees: a job larger than what either has free waits
// rather than span both fabrics.
func TestTopologyOneFabric(t *testing.T) {
	top, err := topology.Parse(strings.NewReader("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-4]\n"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := testNodes(4, 8, 0)
	s := snapshot(nodes, pending(1, job.Request{MinNodes: 3}))
	s.Topology = top
	if plan := (&FIFO{}).Schedule(s); len(plan.Starts) != 0 || plan.Reasons[1] != job.ReasonResources {
		t.Errorf("3-node job across two fabrics: %+v %v", plan.Starts, plan.Reasons)
	}
	s = snapshot(nodes, pending(1, job.Request{MinNodes: 2}))
	s.Topology = top
	if plan := (&FIFO{}).Schedule(s); len(plan.Starts) != 1 {
		t.Errorf("2-node job did not start: %v", plan.Reasons)
	}
}

// With topology/block a job stays within one aggregate of the smallest
// block level that holds it: the fullest such, blocks with the most room
// first; when none has room it waits, however many nodes are free
// elsewhere. A job larger than every level spans aggregates of the
// largest.
func TestBlockPlacement(t *testing.T) {
	nodes := testNodes(16, 8, 0)
	for i, n := range nodes {
		n.Name = "n" + strconv.Itoa(i+1)
	}
	const blocks = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockName=b3 Nodes=n[9-12]\nBlockName=b4 Nodes=n[13-16]\n"
	place := func(sizes string, busy []string, j *job.Job, bf bool) *Plan {
		top, err := topology.Parse(strings.NewReader(blocks + sizes))
		if err != nil {
			t.Fatal(err)
		}
		s := snapshot(nodes, j)
		s.Topology = top
		for i := range s.Nodes {
			if slices.Contains(busy, s.Nodes[i].Node.Name) {
				running(s, job.ID(900+i), 60, job.Allocation{Nodes: []job.NodeAlloc{{Node: s.Nodes[i].Node.Name, CPUs: 8, Tasks: 1}}})
			}
		}
		if bf {
			s.Backfill = true
			return backfillSched().Schedule(s)
		}
		return (&FIFO{}).Schedule(s)
	}
	nodesOf := func(p *Plan) string {
		if len(p.Starts) == 0 {
			return "(none)"
		}
		return hostlist.Compress(p.Starts[0].Alloc.NodeNames())
	}
	busy := []string{"n1", "n2", "n5"} // b1: 2 free, b2: 3 free, b3 and b4 whole
	for _, c := range []struct {
		sizes string
		busy  []string
		nodes uint32
		want  string
	}{
		{"BlockSizes=4,16\n", busy, 3, "n[6-8]"},                     // the fullest block that holds 3
		{"BlockSizes=4,16\n", busy, 5, "n[9-13]"},                    // one aggregate of 4 blocks, roomiest blocks first
		{"BlockSizes=4,8\n", busy, 5, "n[3-4,6-8]"},                  // aggregate b1+b2 (5 free) rather than b3+b4
		{"BlockSizes=4,8\n", busy, 6, "n[9-14]"},                     // b1+b2 too small: b3+b4
		{"BlockSizes=4,8\n", nil, 12, "n[1-12]"},                     // larger than every level
		{"", busy, 5, "n[3-4,6-8]"},                                  // default levels: every power of two
		{"BlockSizes=4,8\n", append(busy, "n9", "n13"), 4, "(none)"}, // no block has 4 free
	} {
		j := pending(1, job.Request{MinNodes: c.nodes})
		if got := nodesOf(place(c.sizes, c.busy, j, false)); got != c.want {
			t.Errorf("%q, %d nodes, busy %v: %s, want %s", c.sizes, c.nodes, c.busy, got, c.want)
		}
	}
	// The backfill pass plans within blocks too: with b3 and b4 partly
	// busy for an hour, a 4-node job is planned on a whole block once
	// its nodes come back, not on the nodes free now.
	p := place("BlockSizes=4,8\n", []string{"n1", "n2", "n5", "n9", "n13", "n14", "n15", "n16"}, pending(1, job.Request{MinNodes: 4, TimeLimit: 30}), true)
	if pl, ok := p.Planned[1]; len(p.Starts) != 0 || !ok || hostlist.Compress(pl.Nodes) != "n[1-4]" {
		t.Errorf("backfill: starts %v planned %+v", p.Starts, p.Planned)
	}
}
