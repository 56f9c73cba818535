package controller_test

import (
	"context"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

// TestReconfigureIsForSuperUsers: root, SlurmUser and administrators (from
// the settings or the accounting) may reconfigure; an operator may not,
// as validate_super_user has it.
func TestReconfigureIsForSuperUsers(t *testing.T) {
	reloads := 0
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Administrators = []string{"alice"}
		cfg.Operators = []string{"bob"}
		cfg.SlurmUserID = 1002
		cfg.Reload = func(context.Context) error { reloads++; return nil }
	})
	for who, allowed := range map[string]bool{"root": true, "alice": true, "carol": true, "bob": false} {
		id := map[string]controller.Identity{"root": ctltest.Root, "alice": ctltest.Alice, "bob": ctltest.Bob, "carol": ctltest.Carol}[who]
		before := reloads
		err := c.Ctl.Reconfigure(ctx, id)
		switch {
		case allowed && (err != nil || reloads != before+1):
			t.Errorf("%s: %v, %d reloads", who, err, reloads-before)
		case !allowed && (slurmerr.CodeOf(err) != slurmerr.UserIDMissing || reloads != before):
			t.Errorf("%s: %v (want %d), %d reloads", who, err, slurmerr.UserIDMissing, reloads-before)
		}
	}
	// An operator from the settings may act on others' jobs.
	id := c.Submit(ctltest.Alice, ctltest.Request())
	if err := c.Ctl.Cancel(ctx, ctltest.Bob, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
		t.Errorf("operator bob cancels alice's job: %v", err)
	}
}

// TestCheckSuccessor: a configuration that would take away a partition
// with waiting jobs, or a node running one, is refused with what it
// would lose; one that keeps them is accepted.
func TestCheckSuccessor(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	res, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug" }), Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	pending := res.JobID
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "gpu" }))
	schedule(t, c)
	if st := c.Job(running).State; st != job.Running {
		t.Fatalf("job %d: %s", running, st)
	}
	host := c.Job(running).BatchHost
	next := c.Cfg
	if err := c.Ctl.CheckSuccessor(&next); err != nil {
		t.Errorf("the same configuration: %v", err)
	}
	next.Partitions = nil
	next.Nodes = nil
	for _, p := range c.Cfg.Partitions {
		if p.Name != "debug" {
			next.Partitions = append(next.Partitions, p)
		}
	}
	for _, n := range c.Cfg.Nodes {
		if n.Name != host {
			next.Nodes = append(next.Nodes, n)
		}
	}
	err = c.Ctl.CheckSuccessor(&next)
	for _, want := range []string{"partition debug is gone but jobs " + itoa(pending), "node " + host + " is gone but jobs " + itoa(running) + " run on it"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSuccessor: %v, want %q", err, want)
		}
	}
	next = c.Cfg
	next.ClusterName = "other"
	if err := c.Ctl.CheckSuccessor(&next); err == nil {
		t.Errorf("a new ClusterName was accepted")
	}
}
