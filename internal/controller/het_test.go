package controller_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// submitHet submits a two-component heterogeneous job: one task on one
// node, then two whole nodes.
func submitHet(t *testing.T, c *ctltest.Cluster, mods ...func(*job.Request)) job.ID {
	t.Helper()
	first := ctltest.Request(func(r *job.Request) { r.Name = "lead"; r.NumTasks = 1 })
	second := ctltest.Request(func(r *job.Request) { r.Name = "other"; r.MinNodes = 2; r.Exclusive = true; r.Script = "" })
	for _, m := range mods {
		m(&first)
		m(&second)
	}
	res, err := c.Ctl.SubmitHet(context.Background(), ctltest.Alice, []controller.Submission{{Req: first}, {Req: second}})
	if err != nil {
		t.Fatalf("submit het job: %v", err)
	}
	return res.JobID
}

func TestHetJobLifecycle(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := submitHet(t, c)
	lead, other := c.Job(id), c.Job(id+1)
	if lead.HetJobID != id || lead.HetJobOffset != 0 || other.HetJobID != id || other.HetJobOffset != 1 || other.HetSize != 2 {
		t.Fatalf("components: %d+%d, %d+%d size %d", lead.HetJobID, lead.HetJobOffset, other.HetJobID, other.HetJobOffset, other.HetSize)
	}
	if got := lead.HetJobIDSet(); got != "1-2" {
		t.Errorf("HetJobIdSet %q", got)
	}
	// Pending components are cancelled whole or not at all.
	for _, sel := range []controller.JobSelector{{ID: id + 1}, {ID: id, Het: true, HetOffset: 1}} {
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: sel}); !errors.Is(err, slurmerr.Sentinel(slurmerr.NotWholeHetJob)) {
			t.Errorf("cancel %+v of a pending component: %v", sel, err)
		}
	}
	if recs, err := c.Ctl.Job(controller.JobSelector{ID: id}); err != nil || len(recs) != 2 {
		t.Errorf("the leader's id names %d records (%v), want both components", len(recs), err)
	}

	schedule(t, c)
	lead, other = c.Job(id), c.Job(id+1)
	if lead.State != job.Running || other.State != job.Running {
		t.Fatalf("after a pass: %v and %v, want both running", lead.State, other.State)
	}
	// Only the leader runs a script, and it learns of every component.
	l := c.Node.WaitLaunches(t, 1)[0]
	if l.JobID != uint32(id) {
		t.Fatalf("launch of job %d, want the leader %d", l.JobID, id)
	}
	env := strings.Join(l.HetEnv, "\n")
	for _, want := range []string{"SLURM_JOB_ID_HET_GROUP_1=2", "SLURM_JOB_NAME_HET_GROUP_0=lead", "SLURM_JOB_NUM_NODES_HET_GROUP_1=2",
		"SLURM_JOB_NODELIST_PACK_GROUP_1=", "SLURM_HET_SIZE=2", "SLURM_PACK_SIZE=2", "SLURM_TASKS_PER_NODE_HET_GROUP_0=1"} {
		if !strings.Contains(env, want) {
			t.Errorf("launch environment lacks %s:\n%s", want, env)
		}
	}
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: id + 1}, false); !errors.Is(err, slurmerr.Sentinel(slurmerr.NotHetJobLeader)) {
		t.Errorf("requeue of a component: %v", err)
	}

	// The script's end is every component's.
	c.Finish(id, nodeproto.EndExited, 3, 0)
	lead, other = c.Job(id), c.Job(id+1)
	if lead.State != job.Failed || other.State != job.Failed || other.ExitCode != 3 {
		t.Errorf("after the script: %v, %v exit %d", lead.State, other.State, other.ExitCode)
	}
	// The other component's nodes end its steps.
	ctltest.Eventually(t, func() bool {
		n := 0
		for _, s := range c.Node.Signals() {
			if s.JobID == uint32(id+1) && s.Terminate && s.StepsOnly {
				n++
			}
		}
		return n == 2
	}, "steps of component %d not ended on its two nodes: %+v", id+1, c.Node.Signals())
}

func TestHetJobCancelAndRequeue(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := submitHet(t, c, func(r *job.Request) { r.Requeue = true })
	schedule(t, c)
	// A running component may be cancelled on its own.
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id, Het: true, HetOffset: 1}}); err != nil {
		t.Fatalf("cancel %d+1: %v", id, err)
	}
	if lead, other := c.Job(id), c.Job(id+1); lead.State != job.Running || other.State != job.Cancelled {
		t.Errorf("after scancel %d+1: %v, %v", id, lead.State, other.State)
	}

	// A requeue of the leader takes every component back to the queue.
	id = submitHet(t, c)
	schedule(t, c)
	if err := c.Ctl.Requeue(ctx, ctltest.Root, controller.JobSelector{ID: id}, false); err != nil {
		t.Fatalf("requeue: %v", err)
	}
	c.Finish(id, nodeproto.EndCancelled, 0, 15)
	for _, cid := range []job.ID{id, id + 1} {
		if j := c.Job(cid); j.State != job.Pending || j.RestartCount != 1 || j.Alloc != nil {
			t.Errorf("component %d after requeue: %v restarts %d", cid, j.State, j.RestartCount)
		}
	}

	// Cancelling the leader ends all.
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
		t.Fatalf("cancel leader: %v", err)
	}
	for _, cid := range []job.ID{id, id + 1} {
		if j := c.Job(cid); j.State != job.Cancelled {
			t.Errorf("component %d after scancel of the leader: %v", cid, j.State)
		}
	}
}

// A node of any component that fails requeues the whole job.
func TestHetJobNodeFailure(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := submitHet(t, c, func(r *job.Request) { r.Requeue = true })
	schedule(t, c)
	other := c.Job(id + 1)
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, other.Alloc.Nodes[0].Node, controller.NodeDown, "test"); err != nil {
		t.Fatalf("fail node: %v", err)
	}
	if lead := c.Job(id); !lead.RequeueOnEnd {
		t.Fatalf("leader not marked for requeue after its sibling's node failed")
	}
	c.Finish(id, nodeproto.EndCancelled, 0, 9)
	var states []string
	for _, cid := range []job.ID{id, id + 1} {
		states = append(states, c.Job(cid).State.String())
	}
	if !slices.Equal(states, []string{"PENDING", "PENDING"}) {
		t.Errorf("after the leader's script ended: %v", states)
	}
}
