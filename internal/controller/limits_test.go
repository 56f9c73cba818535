package controller_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/slurmerr"
)

// TestUsageLimits: a QOS's GrpWall and GrpTRESMins hold jobs once the
// QOS's jobs have run that long, from the usage the controller keeps
// (decayed as fair-share usage, surviving a restart).
func TestUsageLimits(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Priority = &priority.Config{WeightFairshare: 1000, MaxAge: time.Hour, DecayHalfLife: 7 * 24 * time.Hour, CalcPeriod: 5 * time.Minute}
		cfg.Enforce = assoc.Enforce{Associations: false, Limits: true}
	})
	c.RegisterAll()
	q := assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{GrpWall: assoc.Count(90), GrpTRESMins: assoc.TRES{"cpu": 1000}}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
		t.Fatal(err)
	}
	withQOS := func(r *job.Request) { r.QOS = "normal" }
	ran := c.Submit(ctltest.Alice, ctltest.Request(withQOS))
	c.Ctl.UpdateUsage(ctx)
	schedule(t, c)
	if st := c.Job(ran).State; st != job.Running {
		t.Fatalf("first job %s", st)
	}
	c.Clock.Advance(time.Hour)
	c.Finish(ran, "exited", 0, 0)
	c.Clock.Advance(5 * time.Minute)
	c.Ctl.UpdateUsage(ctx)
	next := c.Submit(ctltest.Alice, ctltest.Request(withQOS))
	schedule(t, c)
	// 60 minutes of 90, 60 CPU-minutes of 1000: nothing holds it.
	if j := c.Job(next); j.State != job.Running {
		t.Fatalf("second job: %s %s", j.State, j.Reason)
	}
	c.Clock.Advance(40 * time.Minute)
	c.Finish(next, "exited", 0, 0)
	c.Clock.Advance(5 * time.Minute)
	c.Ctl.UpdateUsage(ctx)
	c.Restart()
	third := c.Submit(ctltest.Alice, ctltest.Request(withQOS))
	schedule(t, c)
	if j := c.Job(third); j.State != job.Pending || j.Reason != "QOSGrpWallLimit" {
		t.Errorf("after 100 minutes of the QOS's 90: %s %s", j.State, j.Reason)
	}
}

// TestQOSOverridesAssociation: a limit the job's QOS sets overrides the
// association's of the same kind (Slurm's example: QOS MaxJobs=2 over a
// user's MaxJobs=1 lets two run).
func TestQOSOverridesAssociation(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Enforce = assoc.Enforce{Limits: true} })
	c.RegisterAll()
	q := assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{MaxJobs: assoc.Count(2)}}
	ch := assoc.Change{
		{Kind: assoc.KindQOS, QOS: &q},
		{Kind: assoc.KindAccount, Account: &assoc.Account{Name: "lab"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "lab", ParentAccount: "root", Shares: 1}},
		{Kind: assoc.KindUser, User: &assoc.User{Name: "alice", DefaultAccount: "lab"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "lab", User: "alice", Shares: 1, Limits: assoc.Limits{MaxJobs: assoc.Count(1)}}},
	}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, ch); err != nil {
		t.Fatal(err)
	}
	var ids []job.ID
	for range 3 {
		ids = append(ids, c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Account, r.QOS = "lab", "normal" })))
	}
	schedule(t, c)
	if a, b, third := c.Job(ids[0]), c.Job(ids[1]), c.Job(ids[2]); a.State != job.Running || b.State != job.Running ||
		third.State != job.Pending || third.Reason != "QOSMaxJobsPerUserLimit" {
		t.Errorf("jobs: %s, %s, %s %s", a.State, b.State, third.State, third.Reason)
	}
}

// TestUsageLimitsEndRunningJobs: a running job whose QOS reaches its
// GrpTRESMins ends as timed out (slurmctld's acct_policy_job_time_out);
// under AccountingStorageEnforce=safe a job starts only if it can run to
// its time limit within what is left.
func TestUsageLimitsEndRunningJobs(t *testing.T) {
	for _, safe := range []bool{false, true} {
		c := ctltest.New(t, func(cfg *controller.Config) {
			cfg.Priority = &priority.Config{WeightFairshare: 1000, MaxAge: time.Hour, DecayHalfLife: 7 * 24 * time.Hour, CalcPeriod: 5 * time.Minute}
			cfg.Enforce = assoc.Enforce{Limits: true, Safe: safe}
		})
		c.RegisterAll()
		q := assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{GrpTRESMins: assoc.TRES{"cpu": 30}}}
		if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
			t.Fatal(err)
		}
		limit := func(mins uint32) func(*job.Request) {
			return func(r *job.Request) { r.QOS, r.TimeLimit = "normal", mins }
		}
		long := c.Submit(ctltest.Alice, ctltest.Request(limit(120)))
		c.Ctl.UpdateUsage(ctx)
		schedule(t, c)
		if safe {
			// 120 CPU-minutes could not fit in 30: it waits, and a job
			// that fits runs.
			if j := c.Job(long); j.State != job.Pending || j.Reason != "QOSGrpCPUMinutesLimit" {
				t.Fatalf("safe, job over the limit: %s %s", j.State, j.Reason)
			}
			short := c.Submit(ctltest.Alice, ctltest.Request(limit(20)))
			schedule(t, c)
			if j := c.Job(short); j.State != job.Running {
				t.Fatalf("safe, job within the limit: %s %s", j.State, j.Reason)
			}
			continue
		}
		if j := c.Job(long); j.State != job.Running {
			t.Fatalf("job: %s %s", j.State, j.Reason)
		}
		c.Clock.Advance(20 * time.Minute)
		c.Ctl.UpdateUsage(ctx)
		c.Ctl.EnforceUsageLimits(ctx)
		if j := c.Job(long); j.State != job.Running {
			t.Fatalf("after 20 CPU-minutes of 30: %s", j.State)
		}
		c.Clock.Advance(11 * time.Minute)
		c.Ctl.UpdateUsage(ctx)
		c.Ctl.EnforceUsageLimits(ctx)
		if j := c.Job(long); j.State != job.Timeout || j.Reason != job.ReasonTimeLimit {
			t.Errorf("after 31 CPU-minutes of 30: %s %s", j.State, j.Reason)
		}
	}
}

// TestSubmitTally: the count the submit limits read stays the count of
// every job not ended through submissions, arrays, starts, ends,
// cancels, requeues, moves, accounting changes, purges and a restart,
// and refuses the submission one over the limit.
func TestSubmitTally(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Enforce = assoc.Enforce{Limits: true} })
	c.RegisterAll()
	q := assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{GrpSubmitJobs: assoc.Count(1000)}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		if err := c.Ctl.CheckSubmitTally(); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
	}
	withQOS := func(r *job.Request) { r.QOS = "normal" }
	var plain []job.ID
	for range 6 {
		plain = append(plain, c.Submit(ctltest.Alice, ctltest.Request(withQOS, wholeNode)))
	}
	arr := c.Submit(ctltest.Alice, ctltest.Request(withQOS, array(2, 1, 2, 3, 4, 5)))
	check("submissions")
	schedule(t, c)
	check("starts")
	c.Finish(plain[0], "exited", 0, 0)
	check("an end")
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: arr, Tasks: []uint32{5}}}); err != nil {
		t.Fatal(err)
	}
	check("an array task cancelled")
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: plain[5]}}); err != nil {
		t.Fatal(err)
	}
	check("a cancel")
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: plain[1]}, false); err != nil {
		t.Fatal(err)
	}
	check("a requeue")
	short := "short"
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: plain[4]}, controller.JobUpdate{Partition: &short}); err != nil {
		t.Fatal(err)
	}
	check("a move")
	q.Limits.MaxSubmitJobs = assoc.Count(1000)
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
		t.Fatal(err)
	}
	check("an accounting change")
	c.Clock.Advance(time.Hour)
	if err := c.Ctl.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	check("a purge")
	c.Restart()
	c.Submit(ctltest.Alice, ctltest.Request(withQOS))
	check("a restart")

	// The count is exact: the limit takes one more job, and refuses the
	// next.
	var live uint32
	for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
		switch {
		case j.State.Terminal():
		case j.IsArrayMeta():
			live += uint32(len(j.PendingTasks))
		default:
			live++
		}
	}
	q.Limits.MaxSubmitJobs = assoc.Count(live + 1)
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
		t.Fatal(err)
	}
	c.Submit(ctltest.Alice, ctltest.Request(withQOS))
	if _, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(withQOS)}); err == nil {
		t.Errorf("a submission over MaxSubmitJobs=%d was taken", live+1)
	}
	check("the last submissions")
}

// TestNoDecay: a QOS with NoDecay keeps the usage its GrpWall reads
// through the half-life; without the flag the usage decays and the
// next job runs.
func TestNoDecay(t *testing.T) {
	for _, noDecay := range []bool{false, true} {
		c := ctltest.New(t, func(cfg *controller.Config) {
			cfg.Priority = &priority.Config{WeightFairshare: 1000, MaxAge: time.Hour, DecayHalfLife: time.Hour, CalcPeriod: 5 * time.Minute}
			cfg.Enforce = assoc.Enforce{Limits: true}
		})
		c.RegisterAll()
		q := assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{GrpWall: assoc.Count(50)}}
		if noDecay {
			q.Flags = []string{assoc.FlagNoDecay}
		}
		if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &q}}); err != nil {
			t.Fatal(err)
		}
		withQOS := func(r *job.Request) { r.QOS = "normal" }
		ran := c.Submit(ctltest.Alice, ctltest.Request(withQOS))
		c.Ctl.UpdateUsage(ctx)
		schedule(t, c)
		c.Clock.Advance(time.Hour)
		c.Finish(ran, "exited", 0, 0)
		for range 12 { // ten hours: ten half-lives
			c.Clock.Advance(50 * time.Minute)
			c.Ctl.UpdateUsage(ctx)
		}
		next := c.Submit(ctltest.Alice, ctltest.Request(withQOS))
		schedule(t, c)
		j := c.Job(next)
		if noDecay && (j.State != job.Pending || j.Reason != "QOSGrpWallLimit") {
			t.Errorf("NoDecay, 60 minutes of 50 ten half-lives ago: %s %s", j.State, j.Reason)
		}
		if !noDecay && j.State != job.Running {
			t.Errorf("decayed usage: %s %s", j.State, j.Reason)
		}
	}
}

// TestPartitionQOS: a partition's QOS holds the partition's jobs over
// the jobs' own QOS (unless theirs has OverPartQOS), counts them whatever
// their QOS, and refuses submissions over its submit limits.
func TestPartitionQOS(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Enforce = assoc.Enforce{Limits: true}
		for i := range cfg.Partitions {
			if cfg.Partitions[i].Name == "short" {
				cfg.Partitions[i].QOS = "pq"
			}
		}
	})
	c.RegisterAll()
	ch := assoc.Change{
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "pq", UsageFactor: 1, Limits: assoc.Limits{MaxTRESPerUser: assoc.TRES{"cpu": 2}, GrpJobs: assoc.Count(2)}}},
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "normal", UsageFactor: 1, Limits: assoc.Limits{MaxTRESPerUser: assoc.TRES{"cpu": 8}}}},
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "over", UsageFactor: 1, Flags: []string{assoc.FlagOverPartQOS},
			Limits: assoc.Limits{MaxTRESPerUser: assoc.TRES{"cpu": 8}}}},
	}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, ch); err != nil {
		t.Fatal(err)
	}
	job4 := func(qos string) func(*job.Request) {
		return func(r *job.Request) { r.Partition, r.QOS, r.CPUsPerTask, r.TimeLimit = "short", qos, 4, 10 }
	}
	held := c.Submit(ctltest.Alice, ctltest.Request(job4("normal")))
	over := c.Submit(ctltest.Alice, ctltest.Request(job4("over")))
	schedule(t, c)
	if j := c.Job(held); j.State != job.Pending || j.Reason != "QOSMaxCpuPerUserLimit" {
		t.Errorf("4 CPUs under the partition QOS's 2 a user: %s %s", j.State, j.Reason)
	}
	if j := c.Job(over); j.State != job.Running {
		t.Errorf("OverPartQOS job: %s %s", j.State, j.Reason)
	}
	// The partition QOS counts the OverPartQOS job too: GrpJobs=2 takes
	// one more, of any QOS.
	small := func(r *job.Request) { r.Partition, r.QOS, r.CPUsPerTask, r.TimeLimit = "short", "normal", 1, 10 }
	one, two := c.Submit(ctltest.Bob, ctltest.Request(small)), c.Submit(ctltest.Bob, ctltest.Request(small))
	schedule(t, c)
	if j := c.Job(one); j.State != job.Running {
		t.Errorf("second job of the partition: %s %s", j.State, j.Reason)
	}
	if j := c.Job(two); j.State != job.Pending || j.Reason != "QOSGrpJobsLimit" {
		t.Errorf("third job of the partition: %s %s", j.State, j.Reason)
	}

	// Submit limits of the partition QOS, with their reason.
	pq := assoc.QOS{Name: "pq", UsageFactor: 1, Limits: assoc.Limits{GrpSubmitJobs: assoc.Count(4)}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, assoc.Change{{Kind: assoc.KindQOS, QOS: &pq}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Ctl.Submit(ctx, ctltest.Bob, controller.Submission{Req: ctltest.Request(small)})
	if !errors.Is(err, slurmerr.Sentinel(slurmerr.AccountingPolicy)) || !strings.HasPrefix(err.Error(), "QOSGrpSubmitJobsLimit") {
		t.Errorf("a fifth job in the partition: %v", err)
	}
	if _, err := c.Ctl.Submit(ctx, ctltest.Bob, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.QOS = "normal" })}); err != nil {
		t.Errorf("a job in another partition: %v", err)
	}
	if err := c.Ctl.CheckSubmitTally(); err != nil {
		t.Error(err)
	}

	// scontrol update PartitionName=short QOS=nosuch is refused.
	bad := "nosuch"
	if err := c.Ctl.SetPartition(ctx, ctltest.Root, controller.PartitionChange{Name: "short", QOS: &bad}, false); !errors.Is(err, slurmerr.Sentinel(slurmerr.InvalidQOS)) {
		t.Errorf("an unknown partition QOS: %v", err)
	}
}
