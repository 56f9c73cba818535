package controller_test

import (
	"sync"
	"testing"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
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
