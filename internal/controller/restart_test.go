package controller_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/state"
)

// busyCluster drives a controller through every kind of command: submits
// (plain, held, array), starts with an array split, ends, cancels (whole
// and task subsets), updates, a requeue, node drain and down.
func busyCluster(t *testing.T, c *ctltest.Cluster) {
	t.Helper()
	c.RegisterAll()
	step := func() { c.Clock.Advance(7 * time.Second) }
	done := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Name = "done" }))
	failed := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Name = "failed" }))
	running := c.Submit(ctltest.Bob, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30; r.GPUsPerNode = 2 }))
	arr := c.Submit(ctltest.Alice, ctltest.Request(wholeNode, array(0, 0, 1, 2, 3, 4, 5, 6)))
	step()
	if _, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(), Hold: true}); err != nil {
		t.Fatal(err)
	}
	schedule(t, c)
	step()
	c.Finish(done, nodeproto.EndExited, 0, 0)
	c.Finish(failed, nodeproto.EndExited, 2, 0)
	step()
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: arr, Tasks: []uint32{5}}}); err != nil {
		t.Fatal(err)
	}
	limit := uint32(20)
	if err := c.Ctl.Update(ctx, ctltest.Bob, controller.JobSelector{ID: running}, controller.JobUpdate{TimeLimit: &limit}); err != nil {
		t.Fatal(err)
	}
	step()
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: failed}, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n4", controller.NodeDrain, "maint"); err != nil {
		t.Fatal(err)
	}
	step()
	schedule(t, c)
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n3", controller.NodeDown, "power"); err != nil {
		t.Fatal(err)
	}
	step()
	pending := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Comment = "waits" }))
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: pending}}); err != nil {
		t.Fatal(err)
	}
}

// durable is everything a restart must keep: the state as a snapshot
// stores it, the listing order and the job records.
type durable struct {
	State map[string]any
	Order []uint32
	Jobs  []*job.Job
}

func durableOf(t *testing.T, c *ctltest.Cluster) durable {
	t.Helper()
	raw, err := c.Ctl.StateJSON()
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	jobs := c.Ctl.Jobs(controller.JobFilter{})
	// Pending reasons are recomputed by each scheduling cycle, not
	// stored; compare what is stored.
	for _, j := range jobs {
		if j.State == job.Pending && j.Hold == job.NotHeld {
			j.Reason = ""
		}
	}
	return durable{State: st, Order: c.Ctl.JobOrder(), Jobs: jobs}
}

func TestRestartKeepsEverything(t *testing.T) {
	tests := map[string]int{
		"replay only":             1 << 30,
		"snapshot every record":   1,
		"snapshot and log replay": 3,
		"default":                 0,
	}
	for name, every := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t, func(cfg *controller.Config) { cfg.StoreOptions = state.Options{SnapshotEvery: every} })
			busyCluster(t, c)
			before := durableOf(t, c)
			if len(before.Jobs) < 8 {
				t.Fatalf("only %d jobs", len(before.Jobs))
			}
			c.Restart()
			after := durableOf(t, c)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Fatalf("state after restart (-before +after):\n%s", diff)
			}
			if every == 1 {
				if st := c.Ctl.LogStats(); st.Snapshots == 0 && st.SnapshotIndex == 0 {
					t.Errorf("no snapshot taken: %+v", st)
				}
			}
			// Ids keep increasing after the restart.
			last := before.Jobs[len(before.Jobs)-1].ID
			if id := c.Submit(ctltest.Alice, ctltest.Request()); id != last+1 {
				t.Errorf("first id after restart %d, want %d", id, last+1)
			}
			// A second restart right after reaches the same state again.
			before = durableOf(t, c)
			c.Restart()
			if diff := cmp.Diff(before, durableOf(t, c)); diff != "" {
				t.Errorf("second restart (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRestartIDsAndFirstJobID(t *testing.T) {
	c := ctltest.New(t)
	for range 3 {
		c.Submit(ctltest.Alice, ctltest.Request())
	}
	// A larger FirstJobId in the new configuration moves ids up; a
	// smaller one never moves them back.
	c.Close()
	c.Cfg.FirstJobID = 1000
	c.Open()
	if id := c.Submit(ctltest.Alice, ctltest.Request()); id != 1000 {
		t.Errorf("after raising FirstJobId: %d, want 1000", id)
	}
	c.Close()
	c.Cfg.FirstJobID = 1
	c.Open()
	if id := c.Submit(ctltest.Alice, ctltest.Request()); id != 1001 {
		t.Errorf("after lowering FirstJobId: %d, want 1001", id)
	}
}

func TestRestartThenFinish(t *testing.T) {
	// A job that ran across a controller restart ends normally when its
	// node registers again and reports it.
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	c.Node.WaitLaunches(t, 1)
	c.Restart()
	c.Clock.Advance(time.Minute)
	c.Register("n1", nodeproto.JobStatus{JobID: uint32(id), Done: &nodeproto.JobDone{Node: "n1", JobID: uint32(id), Kind: nodeproto.EndExited, EndTime: c.Clock.Now()}})
	if j := c.Job(id); j.State != job.Completed || !j.EndTime.Equal(c.Clock.Now()) {
		t.Errorf("job %d: %v end %v", id, j.State, j.EndTime)
	}
}

func TestPurgeAfterMinJobAge(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	finished := c.Submit(ctltest.Alice, ctltest.Request())
	running := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	pending := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n1"}; r.Exclusive = true }))
	cancelled := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "debug" }))
	c.Finish(finished, nodeproto.EndExited, 0, 0)
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: cancelled}}); err != nil {
		t.Fatal(err)
	}
	ids := func() []job.ID {
		var out []job.ID
		for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
			out = append(out, j.ID)
		}
		return out
	}
	c.Clock.Advance(300*time.Second - time.Second)
	if err := c.Ctl.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]job.ID{finished, running, pending, cancelled}, ids()); diff != "" {
		t.Fatalf("before MinJobAge (-want +got):\n%s", diff)
	}
	c.Clock.Advance(2 * time.Second)
	if err := c.Ctl.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]job.ID{running, pending}, ids()); diff != "" {
		t.Fatalf("after MinJobAge (-want +got):\n%s", diff)
	}
	// The purge is durable, and purged ids are not reused.
	c.Restart()
	if diff := cmp.Diff([]job.ID{running, pending}, ids()); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	if id := c.Submit(ctltest.Alice, ctltest.Request()); id != cancelled+1 {
		t.Errorf("next id %d, want %d", id, cancelled+1)
	}
}

func TestJobsChangedSince(t *testing.T) {
	c := ctltest.New(t)
	a := c.Submit(ctltest.Alice, ctltest.Request())
	c.Clock.Advance(10 * time.Second)
	mark := c.Clock.Now()
	b := c.Submit(ctltest.Alice, ctltest.Request())
	c.Clock.Advance(10 * time.Second)
	name := "renamed"
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: a}, controller.JobUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	var got []job.ID
	for _, j := range c.Ctl.Jobs(controller.JobFilter{ChangedSince: mark}) {
		got = append(got, j.ID)
	}
	if diff := cmp.Diff([]job.ID{a, b}, got); diff != "" {
		t.Errorf("changed since the mark (-want +got):\n%s", diff)
	}
	if got := c.Ctl.Jobs(controller.JobFilter{ChangedSince: c.Clock.Now().Add(time.Second)}); len(got) != 0 {
		t.Errorf("changed since the future: %d jobs", len(got))
	}
	if !c.Ctl.LastJobUpdate().Equal(c.Clock.Now()) {
		t.Errorf("last update %v, want %v", c.Ctl.LastJobUpdate(), c.Clock.Now())
	}
}
