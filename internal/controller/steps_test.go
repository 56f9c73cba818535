package controller_test

import (
	"github.com/droverhq/drover/internal/clusterkey"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	steplayout "github.com/droverhq/drover/internal/step/layout"
)

// runningJob starts a job of 2 nodes × 8 CPUs for alice.
func runningJob(t *testing.T, c *ctltest.Cluster) job.ID {
	t.Helper()
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.MinNodes, r.NumTasks, r.CPUsPerTask = 2, 2, 8 }))
	schedule(t, c)
	if s := c.Job(id).State; s != job.Running {
		t.Fatalf("job %v", s)
	}
	return id
}

func stepReq(id job.ID, tasks int, edit ...func(*controller.StepRequest)) controller.StepRequest {
	r := controller.StepRequest{JobID: id, Name: "hostname", Layout: steplayout.Request{Tasks: tasks, Relative: -1}, SrunAddr: "127.0.0.1:5000", Argv: []string{"hostname"}}
	for _, e := range edit {
		e(&r)
	}
	return r
}

// A step gets ids 0, 1, ..., a layout, a credential the nodes can verify,
// and the CPUs it holds keep other steps out until it ends.
func TestCreateStep(t *testing.T) {
	c := ctltest.New(t)
	id := runningJob(t, c)
	g, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 4))
	if err != nil {
		t.Fatalf("create step: %v", err)
	}
	if g.Step.ID != 0 || len(g.Step.Nodes) != 2 || g.Layout.TasksPerNode() != "2(x2)" {
		t.Errorf("step %d on %v, tasks %s", g.Step.ID, g.Step.Nodes, g.Layout.TasksPerNode())
	}
	cred, err := stepcred.Verify(ctltest.Key, g.Cred, c.Now())
	if err != nil || cred.JobID != uint32(id) || cred.StepID != 0 || cred.UID != 1000 || len(cred.Nodes) != 2 || cred.SrunAddr != "127.0.0.1:5000" {
		t.Fatalf("credential %+v: %v", cred, err)
	}
	if len(g.NodeAddrs) != 2 || g.NodeAddrs[0] != c.Node.Addr() {
		t.Errorf("node addresses %v", g.NodeAddrs)
	}
	// A second step wants the CPUs the first holds (every CPU of the job
	// on its nodes): busy, until the first ends.
	if _, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1)); slurmCode(err) != slurmerr.NodesBusy {
		t.Fatalf("second step: %v, want busy", err)
	}
	over, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1, func(r *controller.StepRequest) { r.Overlap = true }))
	if err != nil || over.Step.ID != 1 {
		t.Fatalf("--overlap step %d: %v", over.Step.ID, err)
	}
	if steps := c.Ctl.Steps(); len(steps) != 3 || steps[0].ID != job.BatchStep || steps[1].ID != 0 || steps[2].ID != 1 {
		t.Fatalf("steps %+v", steps)
	}
	if err := c.Ctl.EndStep(ctx, ctltest.Bob, id, 0, controller.StepEnd{}); slurmCode(err) != slurmerr.AccessDenied {
		t.Errorf("bob ended alice's step: %v", err)
	}
	if err := c.Ctl.EndStep(ctx, ctltest.Alice, id, 0, controller.StepEnd{}); err != nil {
		t.Fatalf("end step: %v", err)
	}
	if err := c.Ctl.EndStep(ctx, ctltest.Alice, id, 0, controller.StepEnd{}); slurmCode(err) != slurmerr.InvalidJobID {
		t.Errorf("ending a step twice: %v", err)
	}
	next, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1))
	if err != nil || next.Step.ID != 2 {
		t.Fatalf("step after the first ended: %d %v", next.Step.ID, err)
	}
	// Steps are state: they survive a restart, and go with their job.
	c.Restart()
	c.RegisterAll()
	if steps := c.Ctl.Steps(); len(steps) != 3 {
		t.Fatalf("after a restart: %+v", steps)
	}
	c.Finish(id, nodeproto.EndExited, 0, 0)
	if steps := c.Ctl.Steps(); len(steps) != 0 {
		t.Errorf("steps of an ended job: %+v", steps)
	}
}

// --exact steps hold only what their tasks need, so two fit side by side.
func TestExactSteps(t *testing.T) {
	c := ctltest.New(t)
	id := runningJob(t, c)
	exact := func(r *controller.StepRequest) { r.Exact = true; r.Layout.CPUsPerTask = 4; r.Layout.MinNodes = 1 }
	a, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, exact))
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	b, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, exact))
	if err != nil {
		t.Fatalf("second: %v", err)
	}
	if _, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1, exact)); slurmCode(err) != slurmerr.NodesBusy {
		t.Fatalf("third: %v, want busy", err)
	}
	if a.Step.CPUs[0] != 8 || b.Step.CPUs[0] != 8 || a.Step.Nodes[0] == b.Step.Nodes[0] {
		t.Errorf("steps on %v %v holding %v %v", a.Step.Nodes, b.Step.Nodes, a.Step.CPUs, b.Step.CPUs)
	}
}

// Steps exist only in running jobs, for their owner, with a key.
func TestStepRefusals(t *testing.T) {
	c := ctltest.New(t)
	id := runningJob(t, c)
	pending := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.MinNodes = 4; r.CPUsPerTask = 8 }))
	for name, tc := range map[string]struct {
		who  controller.Identity
		req  controller.StepRequest
		want slurmerr.Code
	}{
		"unknown job":      {ctltest.Alice, stepReq(999, 1), slurmerr.InvalidJobID},
		"pending job":      {ctltest.Alice, stepReq(pending, 1), slurmerr.JobPending},
		"another's job":    {ctltest.Bob, stepReq(id, 1), slurmerr.AccessDenied},
		"more tasks":       {ctltest.Alice, stepReq(id, 17), slurmerr.TooManyRequestedCPUs},
		"a node elsewhere": {ctltest.Alice, stepReq(id, 1, func(r *controller.StepRequest) { r.Layout.NodeList = []string{"n4"} }), slurmerr.RequestedNodeConfigUnavailable},
	} {
		if _, err := c.Ctl.CreateStep(ctx, tc.who, tc.req); slurmCode(err) != tc.want {
			t.Errorf("%s: %v, want %d", name, err, tc.want)
		}
	}
	if _, err := c.Ctl.CreateStep(ctx, ctltest.Root, stepReq(id, 1)); err != nil {
		t.Errorf("root in alice's job: %v", err)
	}
	nokey := ctltest.New(t, func(cfg *controller.Config) { cfg.Keys = clusterkey.NewHolder(nil) })
	id = runningJob(t, nokey)
	if _, err := nokey.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1)); slurmCode(err) != slurmerr.Disabled {
		t.Errorf("without a key: %v", err)
	}
}

// An allocation (salloc, srun outside a job) runs no script and ends when
// its owner releases it.
func TestAllocation(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	res, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: job.Request{Interactive: true, WorkDir: "/home/alice", MinNodes: 2, TimeLimit: 10}})
	if err != nil {
		t.Fatalf("allocate: %v", err)
	}
	schedule(t, c)
	j := c.Job(res.JobID)
	if j.State != job.Running || j.Req.Requeue {
		t.Fatalf("allocation %v requeue %v", j.State, j.Req.Requeue)
	}
	time.Sleep(20 * time.Millisecond)
	if n := len(c.Node.Launches()); n != 0 {
		t.Fatalf("%d batch launches for an allocation", n)
	}
	if err := c.Ctl.CompleteAllocation(ctx, ctltest.Bob, res.JobID, 0); slurmCode(err) != slurmerr.AccessDenied {
		t.Errorf("bob released alice's allocation: %v", err)
	}
	if err := c.Ctl.CompleteAllocation(ctx, ctltest.Alice, res.JobID, 3); err != nil {
		t.Fatalf("release: %v", err)
	}
	if j := c.Job(res.JobID); j.State != job.Failed || j.ExitCode != 3 || j.Completing {
		t.Errorf("released allocation %v exit %d completing %v", j.State, j.ExitCode, j.Completing)
	}
	// Its nodes got the order to end its steps.
	c.Node.WaitSignals(t, 2)
	for _, s := range c.Node.Signals() {
		if !s.StepsOnly || !s.Terminate {
			t.Errorf("signal %+v", s)
		}
	}
	// A cancelled allocation ends at once: nothing to wait for.
	res2, _ := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: job.Request{Interactive: true, WorkDir: "/home/alice", TimeLimit: 10}})
	schedule(t, c)
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: res2.JobID}}); err != nil {
		t.Fatal(err)
	}
	if j := c.Job(res2.JobID); j.State != job.Cancelled || j.Completing {
		t.Errorf("cancelled allocation %v completing %v", j.State, j.Completing)
	}
	batch := c.Submit(ctltest.Alice, ctltest.Request())
	if err := c.Ctl.CompleteAllocation(ctx, ctltest.Alice, batch, 0); slurmCode(err) != slurmerr.BatchOnly {
		t.Errorf("releasing a batch job: %v", err)
	}
}

// An allocation request waits for the scheduling cycle that can start it,
// as slurmctld tries at once: with free nodes the answer comes back with
// the job running, without a poll. A batch submission does not wait.
func TestAllocationStartsInTheRequest(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.SchedInterval = time.Hour })
	c.RegisterAll()
	c.Ctl.Start()
	for range 3 {
		res, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: job.Request{Interactive: true, WorkDir: "/home/alice", TimeLimit: 10}})
		if err != nil {
			t.Fatalf("allocate: %v", err)
		}
		if j := c.Job(res.JobID); j.State != job.Running {
			t.Fatalf("allocation %d is %v when its request returns, want running", res.JobID, j.State)
		}
		if err := c.Ctl.CompleteAllocation(ctx, ctltest.Alice, res.JobID, 0); err != nil {
			t.Fatal(err)
		}
	}
	// No room: the request still returns, the job pending.
	big, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: job.Request{Interactive: true, WorkDir: "/home/alice", TimeLimit: 10, MinNodes: 99}})
	if err == nil {
		if j := c.Job(big.JobID); j.State != job.Pending {
			t.Errorf("allocation of 99 nodes is %v, want pending", j.State)
		}
	}
}

// A step's memory: --mem or --mem-per-cpu times its CPUs on each node,
// within what the job holds there, else the job's.
func TestStepMemory(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.MinNodes, r.NumTasks, r.CPUsPerTask, r.MemPerNode = 2, 2, 8, 4000 }))
	schedule(t, c)
	g, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, func(r *controller.StepRequest) { r.Overlap = true }))
	if err != nil || len(g.Step.MemMB) != 2 || g.Step.MemMB[0] != 4000 || g.Step.MemMB[1] != 4000 {
		t.Fatalf("default step memory %v, %v; want the job's 4000 on each node", g.Step.MemMB, err)
	}
	g, err = c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, func(r *controller.StepRequest) { r.Overlap, r.MemPerNode = true, 1500 }))
	if err != nil || g.Step.MemMB[0] != 1500 {
		t.Fatalf("--mem=1500: %v, %v", g.Step.MemMB, err)
	}
	g, err = c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, func(r *controller.StepRequest) {
		r.Overlap, r.MemPerCPU, r.Layout.CPUsPerTask = true, 100, 3
	}))
	if err != nil || g.Step.MemMB[0] != 300 {
		t.Fatalf("--mem-per-cpu=100 -c3: %v, %v; want 300", g.Step.MemMB, err)
	}
	_, err = c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 2, func(r *controller.StepRequest) { r.Overlap, r.MemPerNode = true, 4001 }))
	if slurmCode(err) != slurmerr.InvalidTaskMemory || err.Error() != "Memory required by task is not available" {
		t.Fatalf("--mem over the job's: %v", err)
	}
}
