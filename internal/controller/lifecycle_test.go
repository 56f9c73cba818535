package controller_test

import (
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// schedule runs one scheduling cycle.
func schedule(t *testing.T, c *ctltest.Cluster) {
	t.Helper()
	if err := c.Ctl.ScheduleOnce(ctx); err != nil {
		t.Fatalf("schedule: %v", err)
	}
}

// wholeNode asks for all 8 CPUs of one node.
func wholeNode(r *job.Request) { r.CPUsPerTask = 8 }

// array makes the request an array of the given task ids.
func array(max uint32, tasks ...uint32) func(*job.Request) {
	return func(r *job.Request) { r.Array = job.ArraySpec{Expr: "test", Tasks: tasks, MaxRunning: max} }
}

// rec is the part of a job record the array and cancel tests compare.
type rec struct {
	ID      job.ID
	Array   job.ID
	Task    uint32
	State   job.State
	Pending []uint32
}

func recs(c *ctltest.Cluster) []rec {
	var out []rec
	for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
		out = append(out, rec{ID: j.ID, Array: j.ArrayJobID, Task: j.ArrayTaskID, State: j.State, Pending: j.PendingTasks})
	}
	return out
}

func TestArraySplitting(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request(wholeNode, array(0, 0, 1, 2, 3, 4)))
	if id != 1 {
		t.Fatalf("array id %d, want 1", id)
	}
	schedule(t, c)
	// Four tasks fit (one node each); each gets the next id, in task
	// order; the fifth stays in the array's own record.
	want := []rec{
		{ID: 1, Array: 1, Task: job.NoTask, State: job.Pending, Pending: []uint32{4}},
		{ID: 2, Array: 1, Task: 0, State: job.Running},
		{ID: 3, Array: 1, Task: 1, State: job.Running},
		{ID: 4, Array: 1, Task: 2, State: job.Running},
		{ID: 5, Array: 1, Task: 3, State: job.Running},
	}
	if diff := cmp.Diff(want, recs(c)); diff != "" {
		t.Fatalf("after first cycle (-want +got):\n%s", diff)
	}
	if r := c.Job(1).Reason; r != job.ReasonResources {
		t.Errorf("meta-record reason %q, want %q", r, job.ReasonResources)
	}
	launches := c.Node.WaitLaunches(t, 4)
	var got [][2]uint32
	for _, l := range launches {
		got = append(got, [2]uint32{l.JobID, l.ArrayTaskID})
		if l.ArrayJobID != 1 || l.ArrayMin != 0 || l.ArrayMax != 4 || l.ArrayCount != 5 || l.ArrayStep != 1 {
			t.Errorf("launch %d: array %d min %d max %d count %d step %d", l.JobID, l.ArrayJobID, l.ArrayMin, l.ArrayMax, l.ArrayCount, l.ArrayStep)
		}
	}
	slices.SortFunc(got, func(a, b [2]uint32) int { return int(a[0]) - int(b[0]) })
	if diff := cmp.Diff([][2]uint32{{2, 0}, {3, 1}, {4, 2}, {5, 3}}, got); diff != "" {
		t.Errorf("launched (job, task) (-want +got):\n%s", diff)
	}

	// The last task takes over the array's own id, as slurmctld does.
	c.Finish(3, nodeproto.EndExited, 0, 0)
	schedule(t, c)
	want[0] = rec{ID: 1, Array: 1, Task: 4, State: job.Running}
	want[2].State = job.Completed
	if diff := cmp.Diff(want, recs(c)); diff != "" {
		t.Fatalf("after the last task started (-want +got):\n%s", diff)
	}
	l := c.Node.WaitLaunches(t, 5)[4]
	if l.JobID != 1 || l.ArrayJobID != 1 || l.ArrayTaskID != 4 {
		t.Errorf("last launch: job %d array %d task %d, want 1 1 4", l.JobID, l.ArrayJobID, l.ArrayTaskID)
	}
	// Ids keep increasing after the split.
	if next := c.Submit(ctltest.Alice, ctltest.Request()); next != 6 {
		t.Errorf("next id %d, want 6", next)
	}
}

func TestArrayThrottle(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	c.Submit(ctltest.Alice, ctltest.Request(array(2, 0, 1, 2, 3)))
	schedule(t, c)
	want := []rec{
		{ID: 1, Array: 1, Task: job.NoTask, State: job.Pending, Pending: []uint32{2, 3}},
		{ID: 2, Array: 1, Task: 0, State: job.Running},
		{ID: 3, Array: 1, Task: 1, State: job.Running},
	}
	if diff := cmp.Diff(want, recs(c)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if r := c.Job(1).Reason; r != job.ReasonArrayTaskLimit {
		t.Errorf("meta-record reason %q, want %q", r, job.ReasonArrayTaskLimit)
	}
}

func TestCancel(t *testing.T) {
	t.Run("pending", func(t *testing.T) {
		c := ctltest.New(t)
		id := c.Submit(ctltest.Alice, ctltest.Request())
		c.Clock.Advance(time.Minute)
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
			t.Fatal(err)
		}
		j := c.Job(id)
		if j.State != job.Cancelled || j.Completing || j.CancelledBy != 1000 || !j.EndTime.Equal(ctltest.Epoch.Add(time.Minute)) {
			t.Errorf("got %v completing=%v by %d end %v", j.State, j.Completing, j.CancelledBy, j.EndTime)
		}
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); codeOf(err) != slurmerr.AlreadyDone {
			t.Errorf("second cancel: %v, want code %d", err, slurmerr.AlreadyDone)
		}
		if len(c.Node.Signals()) != 0 {
			t.Errorf("pending cancel signalled a node: %v", c.Node.Signals())
		}
	})
	t.Run("running", func(t *testing.T) {
		c := ctltest.New(t)
		c.RegisterAll()
		id := c.Submit(ctltest.Alice, ctltest.Request())
		schedule(t, c)
		c.Node.WaitLaunches(t, 1)
		if err := c.Ctl.Cancel(ctx, ctltest.Root, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
			t.Fatal(err)
		}
		j := c.Job(id)
		if j.State != job.Cancelled || !j.Completing || j.CancelledBy != 0 {
			t.Errorf("after cancel: %v completing=%v by %d", j.State, j.Completing, j.CancelledBy)
		}
		sig := c.Node.WaitSignals(t, 1)[0]
		want := nodeproto.Signal{JobID: uint32(id), Signal: int32(syscall.SIGTERM), Terminate: true, Kind: nodeproto.EndCancelled, KillWait: 30 * time.Second}
		if diff := cmp.Diff(want, sig); diff != "" {
			t.Errorf("signal (-want +got):\n%s", diff)
		}
		// Its node stays allocated until the processes are gone.
		if ni, _ := c.Ctl.Node("n1"); !ni.Completing || ni.Used.Jobs != 1 {
			t.Errorf("n1 while completing: completing=%v jobs=%d", ni.Completing, ni.Used.Jobs)
		}
		c.Finish(id, nodeproto.EndCancelled, 0, 15)
		j = c.Job(id)
		if j.State != job.Cancelled || j.Completing || j.Signal != 15 {
			t.Errorf("after the node reported: %v completing=%v signal %d", j.State, j.Completing, j.Signal)
		}
		if ni, _ := c.Ctl.Node("n1"); ni.Completing || ni.Used.Jobs != 0 {
			t.Errorf("n1 after the end: completing=%v jobs=%d", ni.Completing, ni.Used.Jobs)
		}
	})
	t.Run("signal without cancel", func(t *testing.T) {
		c := ctltest.New(t)
		c.RegisterAll()
		id := c.Submit(ctltest.Alice, ctltest.Request())
		pending := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n1"}; r.CPUsPerTask = 8 }))
		schedule(t, c)
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}, Signal: int32(syscall.SIGUSR1), Flags: controller.KillFlags{Batch: true}}); err != nil {
			t.Fatal(err)
		}
		// --batch: the batch script's shell alone.
		sig := c.Node.WaitSignals(t, 1)[0]
		if diff := cmp.Diff(nodeproto.Signal{JobID: uint32(id), Signal: int32(syscall.SIGUSR1), ShellOnly: true}, sig); diff != "" {
			t.Errorf("signal (-want +got):\n%s", diff)
		}
		if st := c.Job(id).State; st != job.Running {
			t.Errorf("signalled job %v, want RUNNING", st)
		}
		// Without --batch or --full a signal reaches the job's steps
		// other than the batch one, on each of its nodes.
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}, Signal: int32(syscall.SIGUSR2)}); err != nil {
			t.Fatal(err)
		}
		if got := c.Node.WaitSignals(t, 2)[1]; got.Signal != int32(syscall.SIGUSR2) || !got.StepsOnly || got.ShellOnly {
			t.Errorf("USR2 without flags sent %+v, want it to the steps", got)
		}
		// --full: the batch script and the processes it started.
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}, Signal: int32(syscall.SIGHUP), Flags: controller.KillFlags{Full: true}}); err != nil {
			t.Fatal(err)
		}
		if got := c.Node.WaitSignals(t, 3)[2]; got.Signal != int32(syscall.SIGHUP) || got.StepsOnly || got.ShellOnly {
			t.Errorf("--full HUP sent %+v", got)
		}
		// --batch with SIGKILL kills the batch shell without cancelling.
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}, Flags: controller.KillFlags{Batch: true}}); err != nil {
			t.Fatal(err)
		}
		if got := c.Node.WaitSignals(t, 4)[3]; got.Signal != int32(syscall.SIGKILL) || got.Terminate || !got.ShellOnly {
			t.Errorf("--batch KILL sent %+v", got)
		}
		if st := c.Job(id).State; st != job.Running {
			t.Errorf("job after --batch KILL: %v, want RUNNING until its script ends", st)
		}
		// A signal other than KILL cannot reach a pending job: slurmctld's
		// ESLURM_TRANSITION_STATE_NO_UPDATE.
		err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: pending}, Signal: int32(syscall.SIGUSR1)})
		if !errors.Is(err, slurmerr.Sentinel(slurmerr.TransitionStateNoUpdate)) {
			t.Errorf("USR1 to a pending job: %v", err)
		}
		if st := c.Job(pending).State; st != job.Pending {
			t.Errorf("pending job after USR1: %v", st)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		c := ctltest.New(t)
		id := c.Submit(ctltest.Alice, ctltest.Request())
		tests := map[string]struct {
			who  controller.Identity
			sel  controller.JobSelector
			want slurmerr.Code
		}{
			"unknown job":         {who: ctltest.Alice, sel: controller.JobSelector{ID: 99}, want: slurmerr.InvalidJobID},
			"task of a non-array": {who: ctltest.Alice, sel: controller.JobSelector{ID: id, Tasks: []uint32{1}}, want: slurmerr.InvalidJobID},
			"another user's job":  {who: ctltest.Bob, sel: controller.JobSelector{ID: id}, want: slurmerr.AccessDenied},
		}
		for name, tc := range tests {
			if err := c.Ctl.Cancel(ctx, tc.who, controller.CancelRequest{Sel: tc.sel}); codeOf(err) != tc.want {
				t.Errorf("%s: %v, want code %d", name, err, tc.want)
			}
		}
		if st := c.Job(id).State; st != job.Pending {
			t.Errorf("job after refused cancels: %v", st)
		}
	})
}

// A signal to an array whose tasks partly run reaches the running ones
// with no error; only an array none of whose tasks runs refuses it.
func TestSignalArray(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request(wholeNode, func(r *job.Request) { r.Partition = "debug" }, array(0, 0, 1, 2, 3)))
	schedule(t, c)
	c.Node.WaitLaunches(t, 2)
	usr1 := controller.CancelRequest{Sel: controller.JobSelector{ID: id}, Signal: int32(syscall.SIGUSR1)}
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, usr1); err != nil {
		t.Fatalf("USR1 to an array with running tasks: %v", err)
	}
	if n := len(c.Node.WaitSignals(t, 2)); n != 2 {
		t.Errorf("%d signals, want one per running task", n)
	}
	pending := usr1
	pending.Sel.Tasks = []uint32{2, 3}
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, pending); !errors.Is(err, slurmerr.Sentinel(slurmerr.TransitionStateNoUpdate)) {
		t.Errorf("USR1 to pending tasks only: %v", err)
	}
}

func TestCancelArrayTasks(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	// Tasks 0 and 1 start (one node each on n1, n2 of debug); 2-9 pend.
	id := c.Submit(ctltest.Alice, ctltest.Request(wholeNode, func(r *job.Request) { r.Partition = "debug" }, array(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)))
	schedule(t, c)
	c.Node.WaitLaunches(t, 2)
	cancel := func(tasks ...uint32) error {
		return c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id, Tasks: tasks}})
	}
	steps := []struct {
		name  string
		tasks []uint32
		err   slurmerr.Code
		want  []rec
	}{
		{
			// Each cancelled pending task gets a CANCELLED record of its own.
			name: "pending subset", tasks: []uint32{2, 3, 4},
			want: []rec{
				{ID: 1, Array: 1, Task: job.NoTask, State: job.Pending, Pending: []uint32{5, 6, 7, 8, 9}},
				{ID: 2, Array: 1, Task: 0, State: job.Running},
				{ID: 3, Array: 1, Task: 1, State: job.Running},
				{ID: 4, Array: 1, Task: 2, State: job.Cancelled},
				{ID: 5, Array: 1, Task: 3, State: job.Cancelled},
				{ID: 6, Array: 1, Task: 4, State: job.Cancelled},
			},
		},
		{
			name: "a running task by its array id", tasks: []uint32{1},
			want: []rec{
				{ID: 1, Array: 1, Task: job.NoTask, State: job.Pending, Pending: []uint32{5, 6, 7, 8, 9}},
				{ID: 2, Array: 1, Task: 0, State: job.Running},
				{ID: 3, Array: 1, Task: 1, State: job.Cancelled},
				{ID: 4, Array: 1, Task: 2, State: job.Cancelled},
				{ID: 5, Array: 1, Task: 3, State: job.Cancelled},
				{ID: 6, Array: 1, Task: 4, State: job.Cancelled},
			},
		},
		{name: "tasks already cancelled", tasks: []uint32{1}, err: slurmerr.AlreadyDone},
		{name: "a pending task already cancelled", tasks: []uint32{3}, err: slurmerr.AlreadyDone},
		{name: "tasks that do not exist", tasks: []uint32{42}, err: slurmerr.InvalidJobID},
		{
			// The last pending task takes over the array's own record.
			name: "the rest of the pending tasks", tasks: []uint32{5, 6, 7, 8, 9, 10},
			want: []rec{
				{ID: 1, Array: 1, Task: 9, State: job.Cancelled},
				{ID: 2, Array: 1, Task: 0, State: job.Running},
				{ID: 3, Array: 1, Task: 1, State: job.Cancelled},
				{ID: 4, Array: 1, Task: 2, State: job.Cancelled},
				{ID: 5, Array: 1, Task: 3, State: job.Cancelled},
				{ID: 6, Array: 1, Task: 4, State: job.Cancelled},
				{ID: 7, Array: 1, Task: 5, State: job.Cancelled},
				{ID: 8, Array: 1, Task: 6, State: job.Cancelled},
				{ID: 9, Array: 1, Task: 7, State: job.Cancelled},
				{ID: 10, Array: 1, Task: 8, State: job.Cancelled},
			},
		},
		{
			name: "the whole array",
			want: []rec{
				{ID: 1, Array: 1, Task: 9, State: job.Cancelled},
				{ID: 2, Array: 1, Task: 0, State: job.Cancelled},
				{ID: 3, Array: 1, Task: 1, State: job.Cancelled},
				{ID: 4, Array: 1, Task: 2, State: job.Cancelled},
				{ID: 5, Array: 1, Task: 3, State: job.Cancelled},
				{ID: 6, Array: 1, Task: 4, State: job.Cancelled},
				{ID: 7, Array: 1, Task: 5, State: job.Cancelled},
				{ID: 8, Array: 1, Task: 6, State: job.Cancelled},
				{ID: 9, Array: 1, Task: 7, State: job.Cancelled},
				{ID: 10, Array: 1, Task: 8, State: job.Cancelled},
			},
		},
		{name: "the whole array again", err: slurmerr.AlreadyDone},
	}
	for _, s := range steps {
		err := cancel(s.tasks...)
		if codeOf(err) != s.err {
			t.Fatalf("%s: %v, want code %d", s.name, err, s.err)
		}
		if s.want == nil {
			continue
		}
		if diff := cmp.Diff(s.want, recs(c)); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestHoldReleasePriority(t *testing.T) {
	hold := func(b bool) controller.JobUpdate { return controller.JobUpdate{Hold: &b} }
	prio := func(p uint32) controller.JobUpdate { return controller.JobUpdate{Priority: &p} }
	type state struct {
		Hold   job.Hold
		Reason job.Reason
		Zero   bool // priority 0
	}
	steps := []struct {
		name string
		who  controller.Identity
		u    controller.JobUpdate
		err  slurmerr.Code
		want state
	}{
		{name: "user holds own job", who: ctltest.Alice, u: hold(true), want: state{job.HeldUser, job.ReasonHeldUser, true}},
		{name: "user releases own hold", who: ctltest.Alice, u: hold(false), want: state{job.NotHeld, job.ReasonNone, false}},
		{name: "another user cannot hold it", who: ctltest.Bob, u: hold(true), err: slurmerr.AccessDenied, want: state{job.NotHeld, job.ReasonNone, false}},
		{name: "root holds it: admin hold", who: ctltest.Root, u: hold(true), want: state{job.HeldAdmin, job.ReasonHeldAdmin, true}},
		{name: "user cannot release an admin hold", who: ctltest.Alice, u: hold(false), err: slurmerr.AccessDenied, want: state{job.HeldAdmin, job.ReasonHeldAdmin, true}},
		{name: "root releases", who: ctltest.Root, u: hold(false), want: state{job.NotHeld, job.ReasonNone, false}},
		{name: "user holds it again", who: ctltest.Alice, u: hold(true), want: state{job.HeldUser, job.ReasonHeldUser, true}},
		{name: "root releases a user hold", who: ctltest.Root, u: hold(false), want: state{job.NotHeld, job.ReasonNone, false}},
		{name: "user cannot set a priority", who: ctltest.Alice, u: prio(10), err: slurmerr.AccessDenied, want: state{job.NotHeld, job.ReasonNone, false}},
		{name: "root priority 0 holds", who: ctltest.Root, u: prio(0), want: state{job.HeldAdmin, job.ReasonHeldAdmin, true}},
		{name: "root priority releases", who: ctltest.Root, u: prio(500), want: state{job.NotHeld, job.ReasonNone, false}},
	}
	c := ctltest.New(t)
	id := c.Submit(ctltest.Alice, ctltest.Request())
	for _, s := range steps {
		err := c.Ctl.Update(ctx, s.who, controller.JobSelector{ID: id}, s.u)
		if codeOf(err) != s.err {
			t.Fatalf("%s: %v, want code %d", s.name, err, s.err)
		}
		j := c.Job(id)
		got := state{Hold: j.Hold, Reason: j.Reason, Zero: j.Priority == 0}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", s.name, diff)
		}
	}
	if p := c.Job(id).Priority; p != 500 {
		t.Errorf("priority %d, want 500", p)
	}
	// A held job is not scheduled; released, it runs.
	c.RegisterAll()
	tru := true
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: id}, controller.JobUpdate{Hold: &tru}); err != nil {
		t.Fatal(err)
	}
	schedule(t, c)
	if st := c.Job(id).State; st != job.Pending {
		t.Fatalf("held job %v after a cycle", st)
	}
	fal := false
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: id}, controller.JobUpdate{Hold: &fal}); err != nil {
		t.Fatal(err)
	}
	schedule(t, c)
	if st := c.Job(id).State; st != job.Running {
		t.Fatalf("released job %v after a cycle", st)
	}
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: id}, controller.JobUpdate{Hold: &tru}); codeOf(err) != slurmerr.JobNotPending {
		t.Errorf("hold a running job: %v, want code %d", err, slurmerr.JobNotPending)
	}
}

func TestUpdateRules(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	str := func(v string) *string { return &v }
	tests := map[string]struct {
		who     controller.Identity
		running bool
		u       controller.JobUpdate
		want    slurmerr.Code
		check   func(t *testing.T, j *job.Job)
	}{
		"user lowers own limit": {who: ctltest.Alice, u: controller.JobUpdate{TimeLimit: u32(5)},
			check: func(t *testing.T, j *job.Job) {
				if j.Req.TimeLimit != 5 {
					t.Errorf("limit %d", j.Req.TimeLimit)
				}
			}},
		"user raises own limit":       {who: ctltest.Alice, u: controller.JobUpdate{TimeLimit: u32(11)}, want: slurmerr.AccessDenied},
		"user asks for unlimited":     {who: ctltest.Alice, u: controller.JobUpdate{TimeLimit: u32(job.Infinite)}, want: slurmerr.AccessDenied},
		"another user lowers it":      {who: ctltest.Bob, u: controller.JobUpdate{TimeLimit: u32(5)}, want: slurmerr.AccessDenied},
		"root raises it":              {who: ctltest.Root, u: controller.JobUpdate{TimeLimit: u32(600)}},
		"user renames, comments":      {who: ctltest.Alice, u: controller.JobUpdate{Name: str("renamed"), Comment: str("c")}},
		"user moves to a partition":   {who: ctltest.Alice, u: controller.JobUpdate{Partition: str("gpu")}},
		"unknown partition":           {who: ctltest.Alice, u: controller.JobUpdate{Partition: str("nosuch")}, want: slurmerr.InvalidPartitionName},
		"running: rename is fine":     {who: ctltest.Alice, running: true, u: controller.JobUpdate{Name: str("renamed")}},
		"running: partition refused":  {who: ctltest.Alice, running: true, u: controller.JobUpdate{Partition: str("gpu")}, want: slurmerr.JobNotPending},
		"running: node count refused": {who: ctltest.Root, running: true, u: controller.JobUpdate{MinNodes: u32(2)}, want: slurmerr.JobNotPending},
		"running: root extends the end": {who: ctltest.Root, running: true, u: controller.JobUpdate{TimeLimit: u32(20)},
			check: func(t *testing.T, j *job.Job) {
				if want := j.StartTime.Add(20 * time.Minute); !j.EndTime.Equal(want) {
					t.Errorf("end %v, want %v", j.EndTime, want)
				}
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t)
			id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "debug" }))
			if tc.running {
				c.RegisterAll()
				schedule(t, c)
			}
			before := c.Job(id)
			err := c.Ctl.Update(ctx, tc.who, controller.JobSelector{ID: id}, tc.u)
			if codeOf(err) != tc.want {
				t.Fatalf("update: %v, want code %d", err, tc.want)
			}
			after := c.Job(id)
			if tc.want != slurmerr.NoError {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("refused update changed the job (-before +after):\n%s", diff)
				}
				return
			}
			if tc.check != nil {
				tc.check(t, after)
			}
		})
	}
	t.Run("finished and unknown jobs", func(t *testing.T) {
		c := ctltest.New(t)
		id := c.Submit(ctltest.Alice, ctltest.Request())
		if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: id}}); err != nil {
			t.Fatal(err)
		}
		name := "x"
		if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: id}, controller.JobUpdate{Name: &name}); codeOf(err) != slurmerr.AlreadyDone {
			t.Errorf("finished: %v", err)
		}
		if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: 99}, controller.JobUpdate{Name: &name}); codeOf(err) != slurmerr.InvalidJobID {
			t.Errorf("unknown: %v", err)
		}
	})
}

func TestRequeue(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	done := c.Submit(ctltest.Alice, ctltest.Request())
	running := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	c.Node.WaitLaunches(t, 2)
	c.Clock.Advance(time.Minute)
	c.Finish(done, nodeproto.EndExited, 3, 0)
	if j := c.Job(done); j.State != job.Failed || j.Reason != job.ReasonNonZeroExitCode || j.ExitCode != 3 {
		t.Fatalf("exit 3: %v %q %d", j.State, j.Reason, j.ExitCode)
	}

	// A finished job goes back to the queue at once, held if asked.
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: done}, true); err != nil {
		t.Fatal(err)
	}
	j := c.Job(done)
	if j.State != job.Pending || j.Alloc != nil || j.RestartCount != 1 || j.Hold != job.HeldAdmin || j.ExitCode != 0 || !j.SubmitTime.Equal(c.Clock.Now()) {
		t.Errorf("requeued finished job: %+v", j)
	}
	// A running job is requeued once its processes are gone.
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: running}, false); err != nil {
		t.Fatal(err)
	}
	sig := c.Node.WaitSignals(t, 1)[0]
	if sig.JobID != uint32(running) || !sig.Terminate {
		t.Errorf("signal %+v", sig)
	}
	c.Finish(running, nodeproto.EndCancelled, 0, 15)
	j = c.Job(running)
	if j.State != job.Pending || j.RestartCount != 1 || j.Hold != job.NotHeld || j.BatchHost != "" {
		t.Errorf("requeued running job: %+v", j)
	}
	schedule(t, c)
	if l := c.Node.WaitLaunches(t, 3)[2]; l.JobID != uint32(running) || l.RestartCount != 1 {
		t.Errorf("relaunch %d restart count %d", l.JobID, l.RestartCount)
	}

	tests := map[string]struct {
		who  controller.Identity
		id   job.ID
		want slurmerr.Code
	}{
		"pending job":        {who: ctltest.Alice, id: done, want: slurmerr.JobPending},
		"unknown job":        {who: ctltest.Alice, id: 99, want: slurmerr.InvalidJobID},
		"another user's job": {who: ctltest.Bob, id: running, want: slurmerr.AccessDenied},
	}
	for name, tc := range tests {
		if err := c.Ctl.Requeue(ctx, tc.who, controller.JobSelector{ID: tc.id}, false); codeOf(err) != tc.want {
			t.Errorf("%s: %v, want code %d", name, err, tc.want)
		}
	}
}

func TestTimeLimit(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 5 }))
	schedule(t, c)
	c.Node.WaitLaunches(t, 1)
	if j := c.Job(id); !j.EndTime.Equal(ctltest.Epoch.Add(5 * time.Minute)) {
		t.Fatalf("expected end %v", j.EndTime)
	}
	c.Clock.Advance(5*time.Minute - time.Second)
	c.Ctl.EnforceTimeLimits(ctx)
	if st := c.Job(id).State; st != job.Running {
		t.Fatalf("before the limit: %v", st)
	}
	c.Clock.Advance(time.Second)
	c.Ctl.EnforceTimeLimits(ctx)
	j := c.Job(id)
	if j.State != job.Timeout || !j.Completing || j.Reason != job.ReasonTimeLimit {
		t.Fatalf("at the limit: %v completing=%v %q", j.State, j.Completing, j.Reason)
	}
	if sig := c.Node.WaitSignals(t, 1)[0]; !sig.Terminate || sig.Kind != nodeproto.EndTimeout {
		t.Errorf("signal %+v", sig)
	}
	c.Finish(id, nodeproto.EndTimeout, 0, 15)
	if j := c.Job(id); j.State != job.Timeout || j.Completing || j.Reason != job.ReasonTimeLimit {
		t.Errorf("after the end: %v completing=%v %q", j.State, j.Completing, j.Reason)
	}
}

func TestJobDoneIsIdempotent(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	c.Clock.Advance(time.Minute)
	c.Finish(id, nodeproto.EndExited, 0, 0)
	first := c.Job(id)
	c.Clock.Advance(time.Minute)
	c.Finish(id, nodeproto.EndExited, 1, 0)
	if diff := cmp.Diff(first, c.Job(id)); diff != "" {
		t.Errorf("repeated report changed the job (-first +now):\n%s", diff)
	}
	if err := c.Ctl.JobDone(ctx, nodeproto.JobDone{JobID: 99, Kind: nodeproto.EndExited}); err != nil {
		t.Errorf("report of an unknown job: %v", err)
	}
	sub, started, completed, cancelled, failed := c.Ctl.JobCounters()
	if diff := cmp.Diff([5]uint64{1, 1, 1, 0, 0}, [5]uint64{sub, started, completed, cancelled, failed}); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
}

func TestLaunchFailureRequeues(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	c.Node.FailLaunches(true)
	id := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	ctltest.Eventually(t, func() bool { return c.Job(id).State == job.Pending }, "requeue after the failed launch")
	j := c.Job(id)
	if j.Reason != job.ReasonJobLaunchFailure || j.RestartCount != 1 || j.Alloc != nil {
		t.Errorf("after a failed launch: %q restarts %d alloc %v", j.Reason, j.RestartCount, j.Alloc)
	}
	if ni, _ := c.Ctl.Node("n1"); ni.Node.Responding {
		t.Errorf("n1 still responding after a failed launch")
	}
}

// TestUpdateArrayTask releases one task of a held array: the task gets a
// record of its own and only it is released, as scontrol release 1_2 does.
func TestUpdateArrayTask(t *testing.T) {
	c := ctltest.New(t)
	res, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(array(0, 0, 1, 2, 3)), Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	release := false
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: res.JobID, Tasks: []uint32{2}}, controller.JobUpdate{Hold: &release}); err != nil {
		t.Fatal(err)
	}
	type held struct {
		Rec  rec
		Hold job.Hold
	}
	var got []held
	for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
		got = append(got, held{rec{ID: j.ID, Array: j.ArrayJobID, Task: j.ArrayTaskID, State: j.State, Pending: j.PendingTasks}, j.Hold})
	}
	want := []held{
		{rec{ID: 1, Array: 1, Task: job.NoTask, State: job.Pending, Pending: []uint32{0, 1, 3}}, job.HeldUser},
		{rec{ID: 2, Array: 1, Task: 2, State: job.Pending}, job.NotHeld},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
}

// TestRequeueSurvivesRestart checks that scontrol requeue of a running job
// is part of the state: a controller restarted before the job's processes
// are gone still requeues it, whether the node then reports the job's end
// or no longer knows the job.
func TestRequeueSurvivesRestart(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	reported := c.Submit(ctltest.Alice, ctltest.Request())
	vanished := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	c.Node.WaitLaunches(t, 2)
	for _, id := range []job.ID{reported, vanished} {
		if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: id}, true); err != nil {
			t.Fatal(err)
		}
	}
	if j := c.Job(reported); j.State != job.Running || !j.RequeueOnEnd || !j.RequeueHold {
		t.Fatalf("marked job: %v requeue=%v hold=%v", j.State, j.RequeueOnEnd, j.RequeueHold)
	}
	c.Restart()
	// The node still has the first job's end to report, and has
	// forgotten the second (its daemon restarted too).
	hosts := map[job.ID]string{reported: c.Job(reported).BatchHost, vanished: c.Job(vanished).BatchHost}
	for _, name := range ctltest.NodeNames {
		var jobs []nodeproto.JobStatus
		if hosts[reported] == name {
			jobs = append(jobs, nodeproto.JobStatus{JobID: uint32(reported), Done: &nodeproto.JobDone{
				Node: name, JobID: uint32(reported), Kind: nodeproto.EndCancelled, Signal: 15, EndTime: c.Now()}})
		}
		c.Register(name, jobs...)
	}
	for _, id := range []job.ID{reported, vanished} {
		j := c.Job(id)
		if j.State != job.Pending || j.Hold != job.HeldAdmin || j.RestartCount != 1 || j.RequeueOnEnd || j.Alloc != nil {
			t.Errorf("job %d after the restart: %v hold=%v restarts=%d requeue=%v", id, j.State, j.Hold, j.RestartCount, j.RequeueOnEnd)
		}
	}
	if n := len(c.Node.Launches()); n != 2 {
		t.Errorf("%d launches, want the first 2 only (a job to requeue is not relaunched)", n)
	}
}

// A requeued job waits for the credentials of the run it cut short to
// expire (AuthInfo cred_expire, and a second) before it may start again,
// pending for BeginTime, as slurmctld has it wait.
func TestRequeueWaitsForCredentials(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.RequeueDelay = 121 * time.Second })
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	c.Node.WaitLaunches(t, 1)
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: id}, false); err != nil {
		t.Fatal(err)
	}
	c.Node.WaitSignals(t, 1)
	c.Finish(id, nodeproto.EndCancelled, 0, 15)
	requeued := c.Now()
	j := c.Job(id)
	if j.State != job.Pending || !j.Req.BeginTime.Equal(requeued.Add(121*time.Second)) || !j.EligibleTime.Equal(j.Req.BeginTime) {
		t.Fatalf("requeued job: %v begin %v eligible %v (requeued at %v)", j.State, j.Req.BeginTime, j.EligibleTime, requeued)
	}
	c.Clock.Advance(2 * time.Minute)
	schedule(t, c)
	if n := len(c.Node.Launches()); n != 1 {
		t.Fatalf("relaunched %d times before its begin time", n-1)
	}
	if r := c.Job(id).Reason; r != job.ReasonBeginTime {
		t.Errorf("reason %q, want BeginTime", r)
	}
	c.Clock.Advance(2 * time.Second)
	schedule(t, c)
	if l := c.Node.WaitLaunches(t, 2)[1]; l.JobID != uint32(id) || l.RestartCount != 1 {
		t.Errorf("relaunch %+v", l)
	}
}
