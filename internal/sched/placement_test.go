package sched

import (
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/reservation"
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
