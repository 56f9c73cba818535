package sched

import (
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// hetJob makes the pending components of a heterogeneous job with
// consecutive ids from leader.
func hetJob(leader job.ID, reqs ...job.Request) []*job.Job {
	var out []*job.Job
	for i, r := range reqs {
		j := pending(leader+job.ID(i), r)
		j.HetJobID, j.HetJobOffset, j.HetSize = leader, uint32(i), uint32(len(reqs))
		j.Priority = 1000
		out = append(out, j)
	}
	return out
}

func startedIDs(p *Plan) []job.ID {
	var ids []job.ID
	for _, st := range p.Starts {
		ids = append(ids, st.JobID)
	}
	slices.Sort(ids)
	return ids
}

// The components of a heterogeneous job start together, each on nodes of
// its own shape, or none starts.
func TestHetStartsWholeOrNot(t *testing.T) {
	twoNodes := job.Request{MinNodes: 2, Exclusive: true}
	t.Run("all fit", func(t *testing.T) {
		comps := hetJob(10, job.Request{NumTasks: 2}, twoNodes)
		s := snapshot(testNodes(4, 8, 0), comps...)
		plan := (&FIFO{}).Schedule(s)
		if got := startedIDs(plan); !slices.Equal(got, []job.ID{10, 11}) {
			t.Fatalf("starts %v, want both components", got)
		}
		seen := map[string]bool{}
		for _, n := range plan.Starts[1].Alloc.NodeNames() {
			seen[n] = true
		}
		if len(plan.Starts[0].Alloc.Nodes) != 1 || len(seen) != 2 || seen[plan.Starts[0].Alloc.Nodes[0].Node] {
			t.Errorf("component 1 on %v shares an exclusive node with component 0 on %v", plan.Starts[1].Alloc.NodeNames(), plan.Starts[0].Alloc.NodeNames())
		}
	})
	t.Run("one does not fit", func(t *testing.T) {
		comps := hetJob(10, job.Request{NumTasks: 2}, twoNodes)
		small := pending(20, job.Request{NumTasks: 8})
		s := snapshot(testNodes(4, 8, 0), append(comps, small)...)
		running(s, 1, 60, wholeNodes("n1", "n2"))
		plan := (&FIFO{}).Schedule(s)
		if len(plan.Starts) != 0 {
			t.Fatalf("starts %+v, want none: component 11 cannot have two whole nodes", plan.Starts)
		}
		for _, id := range []job.ID{10, 11} {
			if plan.Reasons[id] != job.ReasonResources {
				t.Errorf("component %d reason %q, want Resources", id, plan.Reasons[id])
			}
		}
		// The job waits at the head of its partition, as any job does.
		if plan.Reasons[20] != job.ReasonPriority {
			t.Errorf("job behind it: %q, want Priority", plan.Reasons[20])
		}
	})
	t.Run("held component holds all", func(t *testing.T) {
		comps := hetJob(10, job.Request{NumTasks: 2}, job.Request{NumTasks: 1})
		comps[1].Hold = job.HeldUser
		plan := (&FIFO{}).Schedule(snapshot(testNodes(2, 8, 0), comps...))
		if len(plan.Starts) != 0 || plan.Reasons[10] != job.ReasonHeldUser {
			t.Errorf("starts %+v reason %q", plan.Starts, plan.Reasons[10])
		}
	})
}

// Backfill plans a heterogeneous job whole: its components are planned
// for when all can start; a short job runs in the gap, a long one, which
// would delay it, does not.
func TestBackfillHetJob(t *testing.T) {
	comps := hetJob(10, job.Request{MinNodes: 1, Exclusive: true, TimeLimit: 600}, job.Request{MinNodes: 2, Exclusive: true, TimeLimit: 600})
	short := pending(20, job.Request{NumTasks: 1, TimeLimit: 30})
	long := pending(21, job.Request{NumTasks: 1, TimeLimit: 120})
	s := snapshot(testNodes(4, 8, 0), append(comps, short, long)...)
	running(s, 1, 60, wholeNodes("n1", "n2"))
	s.Backfill = true
	plan := backfillSched().Schedule(s)
	if got := startedIDs(plan); !slices.Equal(got, []job.ID{20}) {
		t.Fatalf("starts %v, want the short job only", got)
	}
	var nodes []string
	for _, id := range []job.ID{10, 11} {
		pl, ok := plan.Planned[id]
		if !ok || !pl.Start.Equal(s.Now.Add(time.Hour)) {
			t.Errorf("component %d planned %+v, want +1h", id, pl)
		}
		nodes = append(nodes, pl.Nodes...)
	}
	slices.Sort(nodes)
	if len(slices.Compact(nodes)) != 3 {
		t.Errorf("components planned on %v, want three distinct nodes", nodes)
	}
	if pl, ok := plan.Planned[21]; ok && pl.Start.Before(s.Now.Add(time.Hour+600*time.Minute)) {
		for _, n := range pl.Nodes {
			if slices.Contains(nodes, n) {
				t.Errorf("long job planned at %v on %s, inside the het job's window there", pl.Start, n)
			}
		}
	}

	// Once the nodes are free, backfill starts both at once.
	s = snapshot(testNodes(4, 8, 0), hetJob(10, job.Request{MinNodes: 1, Exclusive: true}, job.Request{MinNodes: 3, Exclusive: true})...)
	s.Backfill = true
	if got := startedIDs(backfillSched().Schedule(s)); !slices.Equal(got, []job.ID{10, 11}) {
		t.Errorf("starts %v on free nodes, want both components", got)
	}
}
