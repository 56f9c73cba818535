package controller_test

import (
	"strconv"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

func TestDependencies(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	dep := func(spec string) func(*job.Request) { return func(r *job.Request) { r.Dependency = spec } }
	first := c.Submit(ctltest.Alice, ctltest.Request())
	ok := c.Submit(ctltest.Alice, ctltest.Request(dep("afterok:"+itoa(first))))
	notok := c.Submit(ctltest.Alice, ctltest.Request(dep("afternotok:"+itoa(first))))
	any := c.Submit(ctltest.Alice, ctltest.Request(dep("afterany:"+itoa(first)+"?afterok:"+itoa(first))))
	schedule(t, c)
	c.Node.WaitLaunches(t, 1)
	for _, id := range []job.ID{ok, notok, any} {
		if j := c.Job(id); j.State != job.Pending || j.Reason != job.ReasonDependency {
			t.Errorf("job %d while %d runs: %v %q", id, first, j.State, j.Reason)
		}
	}
	c.Finish(first, nodeproto.EndExited, 0, 0)
	schedule(t, c)
	for _, id := range []job.ID{ok, any} {
		if j := c.Job(id); j.State != job.Running {
			t.Errorf("job %d after %d completed: %v %q", id, first, j.State, j.Reason)
		}
	}
	if j := c.Job(notok); j.State != job.Pending || j.Reason != job.ReasonDependencyNever {
		t.Errorf("afternotok of a completed job: %v %q", j.State, j.Reason)
	}

	// Submission refuses what slurmctld refuses; a job it does not know
	// satisfies the condition.
	unknown := c.Submit(ctltest.Alice, ctltest.Request(dep("afterok:999")))
	schedule(t, c)
	if j := c.Job(unknown); j.State != job.Running {
		t.Errorf("afterok of an unknown job: %v %q", j.State, j.Reason)
	}
	for _, spec := range []string{"afterok", "before:" + itoa(first), "afterok:1,afterok:2?afterok:3"} {
		_, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(dep(spec))})
		if codeOf(err) != slurmerr.InvalidDependency {
			t.Errorf("dependency %q: %v, want Job dependency problem", spec, err)
		}
	}
}

func TestSingleton(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	named := func(r *job.Request) { r.Name = "train"; r.Dependency = "singleton" }
	a := c.Submit(ctltest.Alice, ctltest.Request(named))
	b := c.Submit(ctltest.Alice, ctltest.Request(named))
	other := c.Submit(ctltest.Bob, ctltest.Request(named))
	schedule(t, c)
	if j := c.Job(a); j.State != job.Running {
		t.Fatalf("first singleton: %v %q", j.State, j.Reason)
	}
	if j := c.Job(b); j.State != job.Pending || j.Reason != job.ReasonDependency {
		t.Errorf("second singleton of the same user and name: %v %q", j.State, j.Reason)
	}
	if j := c.Job(other); j.State != job.Running {
		t.Errorf("another user's job of the same name: %v %q", j.State, j.Reason)
	}
	c.Finish(a, nodeproto.EndExited, 0, 0)
	schedule(t, c)
	if j := c.Job(b); j.State != job.Running {
		t.Errorf("second singleton after the first ended: %v %q", j.State, j.Reason)
	}
}

func itoa(id job.ID) string { return strconv.FormatUint(uint64(id), 10) }

func TestKillInvalidDepend(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.KillInvalidDepend = true })
	c.RegisterAll()
	first := c.Submit(ctltest.Alice, ctltest.Request())
	waiting := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Dependency = "afterok:" + itoa(first) }))
	schedule(t, c)
	c.Finish(first, nodeproto.EndExited, 1, 0)
	schedule(t, c)
	if j := c.Job(waiting); j.State != job.Cancelled || j.Reason != job.ReasonDependencyNever {
		t.Errorf("afterok of a failed job with kill_invalid_depend: %v %q", j.State, j.Reason)
	}
}

func TestUpdateDependency(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	first := c.Submit(ctltest.Alice, ctltest.Request())
	waiting := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Dependency = "afterok:" + itoa(first) }))
	schedule(t, c)
	set := func(spec string) error {
		return c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: waiting}, controller.JobUpdate{Dependency: &spec})
	}
	if err := set("afterok:"); codeOf(err) != slurmerr.InvalidDependency {
		t.Errorf("malformed dependency: %v", err)
	}
	if j := c.Job(waiting); j.State != job.Pending || j.Reason != job.ReasonDependency {
		t.Fatalf("before the update: %v %q", j.State, j.Reason)
	}
	// scontrol update JobId=.. Dependency= removes it.
	if err := set(""); err != nil {
		t.Fatal(err)
	}
	schedule(t, c)
	if j := c.Job(waiting); j.State != job.Running {
		t.Errorf("after removing the dependency: %v %q", j.State, j.Reason)
	}
	if err := set("afterany:" + itoa(first)); codeOf(err) != slurmerr.JobNotPending {
		t.Errorf("dependency of a running job: %v", err)
	}
}
