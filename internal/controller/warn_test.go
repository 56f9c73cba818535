package controller_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// --signal: the warning reaches the job's steps Seconds before its time
// limit, once per run, even across a restart; B: sends it to the batch
// script alone; a job without a time limit is never warned.
func TestWarningSignal(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	steps := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) {
		r.MinNodes, r.TimeLimit = 2, 5
		r.Warn = job.Warning{Signal: 10, Seconds: 120}
	}))
	batch := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) {
		r.TimeLimit = 5
		r.Warn = job.Warning{Signal: 12, Seconds: 60, BatchOnly: true}
	}))
	forever := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) {
		r.TimeLimit = job.Infinite
		r.Warn = job.Warning{Signal: 10, Seconds: 60}
	}))
	schedule(t, c)
	for _, id := range []job.ID{steps, batch, forever} {
		if s := c.Job(id).State; s != job.Running {
			t.Fatalf("job %d %v", id, s)
		}
	}
	warnings := func() []nodeproto.Signal {
		var out []nodeproto.Signal
		// Each warning comes after a SIGCONT to the same processes.
		for _, s := range c.Node.Signals() {
			if !s.Terminate && s.Signal != int32(syscall.SIGCONT) {
				out = append(out, s)
			}
		}
		return out
	}
	c.Clock.Advance(3*time.Minute - time.Second)
	c.Ctl.SendWarnings(ctx)
	time.Sleep(50 * time.Millisecond)
	if w := warnings(); len(w) != 0 {
		t.Fatalf("warnings before they are due: %+v", w)
	}
	c.Clock.Advance(time.Second)
	c.Ctl.SendWarnings(ctx)
	ctltest.Eventually(t, func() bool { return len(warnings()) == 2 }, "a warning to each node of job %d", steps)
	for _, w := range warnings() {
		if w.JobID != uint32(steps) || w.Signal != 10 || !w.StepsOnly {
			t.Errorf("warning %+v, want SIGUSR1 to the steps of job %d", w, steps)
		}
	}
	if !c.Job(steps).WarnSent {
		t.Errorf("job %d not marked warned", steps)
	}
	c.Ctl.SendWarnings(ctx)
	c.Clock.Advance(time.Minute)
	c.Ctl.SendWarnings(ctx)
	ctltest.Eventually(t, func() bool { return len(warnings()) == 3 }, "the batch warning of job %d", batch)
	time.Sleep(50 * time.Millisecond)
	w := warnings()
	if len(w) != 3 {
		t.Fatalf("warnings %+v, want 3", w)
	}
	if last := w[2]; last.JobID != uint32(batch) || last.Signal != 12 || last.StepsOnly || !last.ShellOnly {
		t.Errorf("batch warning %+v, want SIGUSR2 to job %d's script only", last, batch)
	}
	// That a run was warned is part of the state.
	c.Restart()
	for _, id := range []job.ID{steps, batch} {
		if !c.Job(id).WarnSent {
			t.Errorf("job %d lost its warning mark in a restart", id)
		}
	}
	if c.Job(forever).WarnSent {
		t.Errorf("job %d without a time limit was warned", forever)
	}
}
