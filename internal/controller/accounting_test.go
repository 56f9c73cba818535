package controller_test

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/slurmerr"
)

// physicsDept is a small accounting tree: QOS high (priority 100) and low
// (10) beside normal; account physics under root, which may use normal
// and high, its default normal; alice in physics (association priority
// 10), bob in chem (priority 5), which uses the default QOS list.
func physicsDept() assoc.Change {
	return assoc.Change{
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "high", Priority: 100, Preempt: []string{"low"}, UsageFactor: 1}},
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "low", Priority: 10, UsageFactor: 0.5}},
		{Kind: assoc.KindAccount, Account: &assoc.Account{Name: "physics"}},
		{Kind: assoc.KindAccount, Account: &assoc.Account{Name: "chem"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "physics", ParentAccount: "root", Shares: 3, QOS: []string{"high", "normal"}, DefaultQOS: "normal"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "chem", ParentAccount: "root", Shares: 1}},
		{Kind: assoc.KindUser, User: &assoc.User{Name: "alice", DefaultAccount: "physics"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "physics", User: "alice", Shares: 1, Priority: 10, PrioritySet: true}},
		{Kind: assoc.KindUser, User: &assoc.User{Name: "bob", DefaultAccount: "chem"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "chem", User: "bob", Shares: 1, Priority: 5, PrioritySet: true}},
	}
}

func change(t *testing.T, c *ctltest.Cluster, ch assoc.Change) {
	t.Helper()
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, ch); err != nil {
		t.Fatalf("change accounting: %v", err)
	}
}

func slurmCode(err error) slurmerr.Code {
	var se *slurmerr.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return -1
}

// A job gets the account and QOS its association gives, and what
// AccountingStorageEnforce enforces is refused with Slurm's errors.
func TestAccountResolution(t *testing.T) {
	enforced := assoc.Enforce{Associations: true, QOS: true}
	tests := []struct {
		name        string
		enforce     assoc.Enforce
		who         controller.Identity
		account     string
		qos         string
		wantAccount string
		wantQOS     string
		wantErr     slurmerr.Code
	}{
		{"the default account and its default QOS", enforced, ctltest.Alice, "", "", "physics", "normal", 0},
		{"an allowed QOS", enforced, ctltest.Alice, "", "high", "physics", "high", 0},
		{"names are not case sensitive", enforced, ctltest.Alice, "Physics", "HIGH", "physics", "high", 0},
		{"the inherited QOS list", enforced, ctltest.Bob, "", "", "chem", "normal", 0},
		{"a QOS outside the list", enforced, ctltest.Alice, "", "low", "", "", slurmerr.InvalidQOS},
		{"an unknown QOS", enforced, ctltest.Alice, "", "nope", "", "", slurmerr.InvalidQOS},
		{"an account without the user", enforced, ctltest.Alice, "chem", "", "", "", slurmerr.InvalidAccount},
		{"an unknown account", enforced, ctltest.Alice, "biology", "", "", "", slurmerr.InvalidAccount},
		{"a user without associations", enforced, ctltest.Carol, "", "", "", "", slurmerr.InvalidAccount},
		{"not enforced: a user without associations", assoc.Enforce{}, ctltest.Carol, "", "", "", "", 0},
		{"not enforced: a QOS outside the list", assoc.Enforce{}, ctltest.Alice, "", "low", "physics", "low", 0},
		{"associations alone: an unknown QOS", assoc.Enforce{Associations: true}, ctltest.Alice, "", "nope", "", "", slurmerr.InvalidQOS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ctltest.New(t, func(cfg *controller.Config) { cfg.Enforce = tc.enforce })
			change(t, c, physicsDept())
			res, err := c.Ctl.Submit(ctx, tc.who, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Account, r.QOS = tc.account, tc.qos })})
			if tc.wantErr != 0 {
				if slurmCode(err) != tc.wantErr {
					t.Fatalf("submit: %v, want error %d", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			j := c.Job(res.JobID)
			if j.Req.Account != tc.wantAccount || j.Req.QOS != tc.wantQOS {
				t.Errorf("account %q QOS %q, want %q %q", j.Req.Account, j.Req.QOS, tc.wantAccount, tc.wantQOS)
			}
		})
	}
}

// Only operators change accounting; AdminLevel makes a user one, for
// every privileged request, and the model survives a restart.
func TestAccountingAdmins(t *testing.T) {
	c := ctltest.New(t)
	ch := assoc.Change{{Kind: assoc.KindAccount, Account: &assoc.Account{Name: "physics"}}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Alice, ch); slurmCode(err) != slurmerr.AccessDenied {
		t.Fatalf("alice changed accounting: %v", err)
	}
	if err := c.Ctl.UpdateNode(ctx, ctltest.Alice, "n1", controller.NodeDrain, "x"); err == nil {
		t.Fatalf("alice drained a node before she was an operator")
	}
	change(t, c, append(physicsDept(), assoc.Item{Kind: assoc.KindUser, User: &assoc.User{Name: "alice", DefaultAccount: "physics", AdminLevel: assoc.AdminOperator}}))
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Alice, ch[:0]); err != nil {
		t.Fatalf("operator alice, empty change: %v", err)
	}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Alice, assoc.Change{{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "gold", Priority: 5}}}); err != nil {
		t.Fatalf("operator alice: %v", err)
	}
	c.Restart()
	if _, ok := c.Ctl.Accounting().QOS("gold"); !ok {
		t.Fatalf("QOS gold lost in a restart")
	}
	if !c.Ctl.Privileged(ctltest.Alice) || c.Ctl.Privileged(ctltest.Bob) {
		t.Errorf("after a restart: alice privileged %v, bob %v", c.Ctl.Privileged(ctltest.Alice), c.Ctl.Privileged(ctltest.Bob))
	}
	// A refused change leaves everything as it was.
	bad := assoc.Change{{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "silver"}}, {Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "x", Preempt: []string{"missing"}}}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, bad); err == nil {
		t.Fatalf("a change naming an unknown QOS was applied")
	}
	if _, ok := c.Ctl.Accounting().QOS("silver"); ok {
		t.Errorf("half of a refused change was applied")
	}
}

// Records that active jobs run under cannot be deleted.
func TestAccountingDeleteBusy(t *testing.T) {
	c := ctltest.New(t)
	change(t, c, physicsDept())
	id := c.Submit(ctltest.Alice, ctltest.Request())
	del := assoc.Change{{Kind: assoc.KindUser, Delete: true, User: &assoc.User{Name: "alice"}}}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, del); slurmCode(err) != slurmerr.JobsRunningOnAssoc {
		t.Fatalf("deleted alice under a pending job: %v", err)
	}
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := c.Ctl.ChangeAccounting(ctx, ctltest.Root, del); err != nil {
		t.Fatalf("delete alice once her job ended: %v", err)
	}
	if _, ok := c.Ctl.Accounting().User("alice"); ok {
		t.Errorf("alice still there")
	}
}

// The QOS and association factors are each over the largest of their
// kind; usage counts against the job's association, times its QOS's
// UsageFactor.
func TestQOSAndAssocFactors(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Priority = &priority.Config{WeightQOS: 1000, WeightAssoc: 100, WeightFairshare: 0, MaxAge: time.Hour, CalcPeriod: time.Minute, FairTree: true}
	})
	c.RegisterAll()
	change(t, c, physicsDept())
	high := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.QOS = "high" }))
	normal := c.Submit(ctltest.Alice, ctltest.Request())
	bob := c.Submit(ctltest.Bob, ctltest.Request(func(r *job.Request) { r.QOS = "low" }))
	// high: 1000×100/100 + 100×10/10; normal: 0 + 100; bob: 1000×10/100 + 100×5/10.
	for id, want := range map[job.ID]uint32{high: 1100, normal: 100, bob: 150} {
		if got := c.Job(id).Priority; got != want {
			t.Errorf("job %d priority %d, want %d", id, got, want)
		}
	}
}

// Fair-share follows the account tree: usage under chem (one share of
// four) weighs more than the same usage under physics (three), and the
// low QOS halves what its jobs count.
func TestFairShareOverAccounts(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Priority = &priority.Config{WeightFairshare: 1000, MaxAge: time.Hour, CalcPeriod: time.Minute, FairTree: true}
	})
	c.RegisterAll()
	change(t, c, physicsDept())
	a := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NumTasks = 4 }))
	b := c.Submit(ctltest.Bob, ctltest.Request(func(r *job.Request) { r.NumTasks = 4; r.QOS = "low" }))
	c.Ctl.UpdateUsage(ctx)
	schedule(t, c)
	c.Clock.Advance(time.Hour)
	c.Finish(a, nodeproto.EndExited, 0, 0)
	c.Finish(b, nodeproto.EndExited, 0, 0)
	c.Clock.Advance(time.Minute)
	c.Ctl.UpdateUsage(ctx)
	rows, usage := c.Ctl.ShareRows()
	if got := usage[priority.AssocKey("physics", "alice")]; got != 4*3600 {
		t.Errorf("alice's usage %v, want %v", got, 4*3600)
	}
	if got := usage[priority.AssocKey("chem", "bob")]; got != 2*3600 {
		t.Errorf("bob's usage at UsageFactor 0.5: %v, want %v", got, 2*3600)
	}
	byName := map[string]priority.ShareRow{}
	for _, r := range rows {
		byName[r.Account+"/"+r.User] = r
	}
	// Levels under root: physics S/U = 0.75/(4/6), chem 0.25/(2/6), root's
	// own user unused: root first, then physics, then chem.
	if byName["physics/"].LevelFS <= byName["chem/"].LevelFS {
		t.Errorf("physics LevelFS %v not above chem's %v", byName["physics/"].LevelFS, byName["chem/"].LevelFS)
	}
	f := userFactors(c.Ctl)
	if !(f["root"] > f["alice"] && f["alice"] > f["bob"]) {
		t.Errorf("factors %v, want root > alice > bob", f)
	}
}

// Under preempt/qos a job of QOS high takes the node of a running job of
// QOS low, whatever their partitions, in the low QOS's PreemptMode.
func TestPreemptByQOS(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.PreemptByQOS = true
		// QOS priority orders the queue, as sites using preempt/qos set it.
		cfg.Priority = &priority.Config{WeightQOS: 1000, MaxAge: time.Hour, CalcPeriod: time.Minute}
		cfg.Nodes = cfg.Nodes[:1]
		cfg.Partitions = cfg.Partitions[:1]
		cfg.Partitions[0].Nodes = []string{"n1"}
	})
	c.Register("n1")
	ch := physicsDept()
	ch[1].QOS.PreemptMode = "CANCEL"
	change(t, c, ch)
	low := c.Submit(ctltest.Bob, ctltest.Request(wholeNode, func(r *job.Request) { r.QOS = "low" }))
	schedule(t, c)
	if s := c.Job(low).State; s != job.Running {
		t.Fatalf("low job %v", s)
	}
	normal := c.Submit(ctltest.Alice, ctltest.Request(wholeNode))
	schedule(t, c)
	if s := c.Job(low).State; s != job.Running || c.Job(low).Completing {
		t.Fatalf("a normal job preempted the low one: %v", s)
	}
	high := c.Submit(ctltest.Alice, ctltest.Request(wholeNode, func(r *job.Request) { r.QOS = "high" }))
	schedule(t, c)
	if j := c.Job(low); j.State != job.Preempted {
		t.Fatalf("low job %v after a high one came, want PREEMPTED", j.State)
	}
	c.Node.WaitSignals(t, 1)
	c.Finish(low, nodeproto.EndCancelled, 0, 15)
	schedule(t, c)
	if s := c.Job(high).State; s != job.Running {
		t.Errorf("high job %v once the node was free", s)
	}
	if s := c.Job(normal).State; s != job.Pending {
		t.Errorf("normal job %v", s)
	}
}
