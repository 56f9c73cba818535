package controller_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	steplayout "github.com/droverhq/drover/internal/step/layout"
)

// TestRequestIDRetriesTogether: tries of one request submitted at once
// may all pass the controller's check; the state log applies one, and
// the others' scripts, stored with their commands, are deleted.
func TestRequestIDRetriesTogether(t *testing.T) {
	c := ctltest.New(t)
	rctx := controller.WithRequestID(ctx, "together")
	const tries = 8
	ids := make([]job.ID, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			res, err := c.Ctl.Submit(rctx, ctltest.Alice, controller.Submission{Req: ctltest.Request()})
			if err != nil {
				t.Errorf("try %d: %v", i, err)
			}
			ids[i] = res.JobID
		})
	}
	wg.Wait()
	for i, id := range ids {
		if id != ids[0] {
			t.Errorf("try %d got job %d, try 0 job %d", i, id, ids[0])
		}
	}
	if jobs := c.Ctl.Jobs(controller.JobFilter{}); len(jobs) != 1 {
		t.Fatalf("%d jobs made by %d tries of one request", len(jobs), tries)
	}
	keys, err := c.Ctl.BlobKeys()
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Job(ids[0]); len(keys) != 2 || keys[0] != j.ScriptKey+"/env" || keys[1] != j.ScriptKey+"/script" {
		t.Errorf("stored blobs %v, want the job's script and environment (%s)", keys, j.ScriptKey)
	}
}

// TestRequestIDRetryOverSubmitLimit: the retry of a submission that took
// the last job a submit limit allows gets its job, not the limit's
// refusal: the controller looks for the request before it checks the
// submission, as the state machine does.
func TestRequestIDRetryOverSubmitLimit(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Enforce = assoc.Enforce{Limits: true} })
	q := assoc.QOS{Name: "normal", Limits: assoc.Limits{MaxSubmitJobs: assoc.Count(1)}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
		t.Fatal(err)
	}
	sub := controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.QOS = "normal" })}
	first, err := c.Ctl.Submit(controller.WithRequestID(ctx, "one"), ctltest.Alice, sub)
	if err != nil {
		t.Fatal(err)
	}
	retry, err := c.Ctl.Submit(controller.WithRequestID(ctx, "one"), ctltest.Alice, sub)
	if err != nil || retry.JobID != first.JobID {
		t.Errorf("retry: job %d, %v; want job %d", retry.JobID, err, first.JobID)
	}
	if _, err := c.Ctl.Submit(controller.WithRequestID(ctx, "two"), ctltest.Alice, sub); codeOf(err) == slurmerr.NoError {
		t.Errorf("another request over MaxSubmitJobs=1 was taken")
	}
}

// TestStepRequestRetried: srun's step request retried after its answer
// was lost gets the step the first try made, with the same layout and a
// valid credential, and holds no more CPUs; another user's request of
// the same id, or another id, is a request of its own; once the step
// ended, the id makes a new step.
func TestStepRequestRetried(t *testing.T) {
	c := ctltest.New(t)
	id := runningJob(t, c)
	req := stepReq(id, 3, func(r *controller.StepRequest) { r.Layout.Dist, _ = steplayout.ParseDistribution("plane=2") })
	rctx := controller.WithRequestID(ctx, "step-1")
	first, err := c.Ctl.CreateStep(rctx, ctltest.Alice, req)
	if err != nil {
		t.Fatalf("create step: %v", err)
	}
	retry, err := c.Ctl.CreateStep(rctx, ctltest.Alice, req)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if retry.Step.ID != first.Step.ID {
		t.Fatalf("retry made step %d, want the first's %d", retry.Step.ID, first.Step.ID)
	}
	// What the answer carries: the nodes, each one's task ids, the
	// warnings and the distribution's spelling.
	if diff := cmp.Diff([]any{first.Layout.Nodes, first.Layout.Tasks, first.Layout.Warnings, first.Step.Distribution},
		[]any{retry.Layout.Nodes, retry.Layout.Tasks, retry.Layout.Warnings, retry.Step.Distribution}); diff != "" {
		t.Errorf("layout of the retry (-first +retry):\n%s", diff)
	}
	if diff := cmp.Diff(first.NodeAddrs, retry.NodeAddrs); diff != "" {
		t.Errorf("node addresses of the retry (-first +retry):\n%s", diff)
	}
	if cred, err := stepcred.Verify(ctltest.Key, retry.Cred, c.Now()); err != nil || cred.StepID != first.Step.ID || cred.JobID != uint32(id) {
		t.Errorf("retry's credential %+v: %v", cred, err)
	}
	if steps := c.Ctl.Steps(); len(steps) != 2 {
		t.Fatalf("steps %+v, want the batch step and one", steps)
	}
	// The step holds the job's CPUs: another id is another step, busy.
	if _, err := c.Ctl.CreateStep(controller.WithRequestID(ctx, "step-2"), ctltest.Alice, stepReq(id, 1)); slurmCode(err) != slurmerr.NodesBusy {
		t.Errorf("another request: %v, want busy", err)
	}
	// Root naming the same id is not alice's retry.
	if _, err := c.Ctl.CreateStep(rctx, ctltest.Root, stepReq(id, 1)); slurmCode(err) != slurmerr.NodesBusy {
		t.Errorf("root's request of alice's id: %v, want busy", err)
	}
	if err := c.Ctl.EndStep(ctx, ctltest.Alice, id, first.Step.ID, controller.StepEnd{}); err != nil {
		t.Fatal(err)
	}
	again, err := c.Ctl.CreateStep(rctx, ctltest.Alice, req)
	if err != nil || again.Step.ID == first.Step.ID {
		t.Fatalf("the id after its step ended: step %d, %v; want a new step", again.Step.ID, err)
	}
}

// TestStepWaitsForNodesToRegister: a controller that just took over (a
// restart here, a new leader in a replicated cluster) knows a running
// job's nodes only once their daemons register again: a step there is
// busy until then, not granted without the addresses srun launches on,
// and a retry of a step request whose answer was lost is busy too.
func TestStepWaitsForNodesToRegister(t *testing.T) {
	c := ctltest.New(t)
	id := runningJob(t, c)
	rctx := controller.WithRequestID(ctx, "made-before")
	first, err := c.Ctl.CreateStep(rctx, ctltest.Alice, stepReq(id, 2))
	if err != nil {
		t.Fatal(err)
	}
	c.Restart()
	if _, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1, func(r *controller.StepRequest) { r.Overlap = true })); slurmCode(err) != slurmerr.NodesBusy {
		t.Fatalf("a step before the nodes registered: %v, want busy", err)
	}
	if _, err := c.Ctl.CreateStep(rctx, ctltest.Alice, stepReq(id, 2)); slurmCode(err) != slurmerr.NodesBusy {
		t.Fatalf("the retry before the nodes registered: %v, want busy", err)
	}
	for _, n := range c.Job(id).Alloc.NodeNames() {
		c.Register(n, nodeproto.JobStatus{JobID: uint32(id), Running: true})
	}
	retry, err := c.Ctl.CreateStep(rctx, ctltest.Alice, stepReq(id, 2))
	if err != nil || retry.Step.ID != first.Step.ID || len(retry.NodeAddrs) != len(first.NodeAddrs) || retry.NodeAddrs[0] == "" {
		t.Fatalf("the retry once the nodes registered: step %d on %v, %v; want step %d", retry.Step.ID, retry.NodeAddrs, err, first.Step.ID)
	}
	if _, err := c.Ctl.CreateStep(ctx, ctltest.Alice, stepReq(id, 1, func(r *controller.StepRequest) { r.Overlap = true })); err != nil {
		t.Fatalf("a step once the nodes registered: %v", err)
	}
}
