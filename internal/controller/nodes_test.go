package controller_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// nodeState is the part of a node the admin tests compare.
type nodeState struct {
	Flags  []string
	Reason string
	UID    uint32
}

func stateOf(t *testing.T, c *ctltest.Cluster, name string) nodeState {
	t.Helper()
	ni, err := c.Ctl.Node(name)
	if err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	return nodeState{Flags: ni.Node.StateFlags(ni.Used, ni.Completing), Reason: ni.Node.Reason, UID: ni.Node.ReasonUID}
}

func TestNodeAdmin(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	steps := []struct {
		name   string
		who    controller.Identity
		node   string
		change controller.NodeStateChange
		reason string
		err    slurmerr.Code
		want   nodeState
	}{
		{name: "drain needs a reason", who: ctltest.Root, node: "n1", change: controller.NodeDrain, err: slurmerr.InvalidNodeState, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "users may not drain", who: ctltest.Alice, node: "n1", change: controller.NodeDrain, reason: "x", err: slurmerr.AccessDenied, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "unknown node", who: ctltest.Root, node: "n9", change: controller.NodeDrain, reason: "x", err: slurmerr.InvalidNodeName, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "drain", who: ctltest.Root, node: "n1", change: controller.NodeDrain, reason: "maintenance", want: nodeState{Flags: []string{"IDLE", "DRAIN"}, Reason: "maintenance"}},
		{name: "resume", who: ctltest.Root, node: "n1", change: controller.NodeResume, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "down needs a reason", who: ctltest.Root, node: "n1", change: controller.NodeDown, err: slurmerr.InvalidNodeState, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "down", who: ctltest.Root, node: "n1", change: controller.NodeDown, reason: "bad dimm", want: nodeState{Flags: []string{"DOWN"}, Reason: "bad dimm"}},
		{name: "resume a down node", who: ctltest.Root, node: "n1", change: controller.NodeResume, want: nodeState{Flags: []string{"IDLE"}}},
		{name: "drain again", who: ctltest.Root, node: "n1", change: controller.NodeDrain, reason: "again", want: nodeState{Flags: []string{"IDLE", "DRAIN"}, Reason: "again"}},
		{name: "undrain", who: ctltest.Root, node: "n1", change: controller.NodeUndrain, want: nodeState{Flags: []string{"IDLE"}}},
	}
	for _, s := range steps {
		err := c.Ctl.UpdateNode(ctx, s.who, s.node, s.change, s.reason)
		if codeOf(err) != s.err {
			t.Fatalf("%s: %v, want code %d", s.name, err, s.err)
		}
		if diff := cmp.Diff(s.want, stateOf(t, c, "n1")); diff != "" {
			t.Fatalf("%s: n1 (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestDrainedNodeGetsNoJobs(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n1", controller.NodeDrain, "maint"); err != nil {
		t.Fatal(err)
	}
	id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "debug" }))
	schedule(t, c)
	if j := c.Job(id); j.State != job.Running || j.BatchHost != "n2" {
		t.Fatalf("job on %q (%v), want n2", j.BatchHost, j.State)
	}
	// A draining node with a job shows MIXED+DRAIN until the job ends.
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n2", controller.NodeDrain, "maint"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MIXED", "DRAIN"}, stateOf(t, c, "n2").Flags); diff != "" {
		t.Errorf("n2 (-want +got):\n%s", diff)
	}
	next := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "debug" }))
	schedule(t, c)
	if j := c.Job(next); j.State != job.Pending || j.Reason != job.ReasonResources {
		t.Errorf("job with every node drained: %v %q", j.State, j.Reason)
	}
}

// With JobRequeue=0 the jobs of a node set DOWN end NODE_FAIL.
func TestNodeDownFailsItsJobs(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.NoJobRequeue = true })
	c.RegisterAll()
	onN1 := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n1"} }))
	spanning := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n2", "n1"}; r.MinNodes = 2 }))
	elsewhere := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n3"} }))
	schedule(t, c)
	c.Node.WaitLaunches(t, 3)
	c.Clock.Advance(time.Minute)
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n1", controller.NodeDown, "power"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []job.ID{onN1, spanning} {
		j := c.Job(id)
		if j.State != job.NodeFail || j.Reason != job.ReasonNodeDown || !j.EndTime.Equal(c.Clock.Now()) || j.Completing {
			t.Errorf("job %d on the down node: %v %q end %v completing=%v", id, j.State, j.Reason, j.EndTime, j.Completing)
		}
	}
	if st := c.Job(elsewhere).State; st != job.Running {
		t.Errorf("job on n3: %v", st)
	}
	var killed []uint32
	for _, s := range c.Node.WaitSignals(t, 2) {
		if s.Terminate {
			killed = append(killed, s.JobID)
		}
	}
	slices.Sort(killed)
	if diff := cmp.Diff([]uint32{uint32(onN1), uint32(spanning)}, killed); diff != "" {
		t.Errorf("terminated (-want +got):\n%s", diff)
	}
	_, _, _, _, failed := c.Ctl.JobCounters()
	if failed != 2 {
		t.Errorf("failed counter %d, want 2", failed)
	}
}

// heartbeat posts a heartbeat through the node protocol's handler
// (nodeapi) and returns the HTTP status.
func heartbeat(t *testing.T, c *ctltest.Cluster, name string) int {
	t.Helper()
	body, _ := json.Marshal(nodeproto.Heartbeat{Name: name, FreeMemMB: 100, Load: 0.5})
	req := httptest.NewRequest(http.MethodPost, nodeproto.PathHeartbeat, bytes.NewReader(body))
	ctltest.SignNode(req, name)
	rec := httptest.NewRecorder()
	nodeapi.Handler(c.Ctl).ServeHTTP(rec, req)
	return rec.Code
}

func TestNodeTimeout(t *testing.T) {
	tests := map[string]struct {
		returnToService int
		want            nodeState // n4 after it registers again
	}{
		"ReturnToService=0 keeps it down": {returnToService: 0, want: nodeState{Flags: []string{"DOWN"}, Reason: "Not responding"}},
		"ReturnToService=1 returns it":    {returnToService: 1, want: nodeState{Flags: []string{"IDLE"}}},
		"ReturnToService=2 returns it":    {returnToService: 2, want: nodeState{Flags: []string{"IDLE"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t, func(cfg *controller.Config) {
				cfg.ReturnToService = tc.returnToService
				cfg.SlurmdTimeout = 10 * time.Second
				cfg.NoJobRequeue = true
			})
			c.RegisterAll()
			id := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n4"} }))
			schedule(t, c)
			c.Node.WaitLaunches(t, 1)
			// n1-n3 keep beating; n4 falls silent.
			for range 3 {
				c.Clock.Advance(5 * time.Second)
				for _, n := range []string{"n1", "n2", "n3"} {
					if code := heartbeat(t, c, n); code != http.StatusOK {
						t.Fatalf("heartbeat %s: HTTP %d", n, code)
					}
				}
				c.Ctl.CheckNodes(ctx)
			}
			for _, n := range []string{"n1", "n2", "n3"} {
				if got := stateOf(t, c, n).Flags; !slices.Equal(got, []string{"IDLE"}) {
					t.Errorf("%s: %v", n, got)
				}
			}
			want := nodeState{Flags: []string{"DOWN", "NOT_RESPONDING"}, Reason: "Not responding"}
			if diff := cmp.Diff(want, stateOf(t, c, "n4")); diff != "" {
				t.Fatalf("n4 (-want +got):\n%s", diff)
			}
			if j := c.Job(id); j.State != job.NodeFail {
				t.Errorf("job on n4: %v", j.State)
			}
			// An unregistered node's heartbeats are refused: it must
			// register again.
			if code := heartbeat(t, c, "n4"); code != http.StatusConflict {
				t.Errorf("heartbeat of the silent node: HTTP %d, want 409", code)
			}
			c.Register("n4")
			if diff := cmp.Diff(tc.want, stateOf(t, c, "n4")); diff != "" {
				t.Errorf("n4 after registering (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("an admin down is not undone by registering", func(t *testing.T) {
		c := ctltest.New(t, func(cfg *controller.Config) { cfg.ReturnToService = 2 })
		c.RegisterAll()
		if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n1", controller.NodeDown, "bad dimm"); err != nil {
			t.Fatal(err)
		}
		c.Register("n1")
		if diff := cmp.Diff(nodeState{Flags: []string{"DOWN"}, Reason: "bad dimm"}, stateOf(t, c, "n1")); diff != "" {
			t.Errorf("n1 (-want +got):\n%s", diff)
		}
	})
}

func TestRegistrationReconciles(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	onN1 := func(r *job.Request) { r.NodeList = []string{"n1"}; r.CPUsPerTask = 2 }
	neverArrived := c.Submit(ctltest.Alice, ctltest.Request(onN1))
	lost := c.Submit(ctltest.Alice, ctltest.Request(onN1))
	finished := c.Submit(ctltest.Alice, ctltest.Request(onN1))
	stillRunning := c.Submit(ctltest.Alice, ctltest.Request(onN1))
	schedule(t, c)
	c.Node.WaitLaunches(t, 4)
	cancelled := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n2"} }))
	schedule(t, c)
	c.Node.WaitLaunches(t, 5)
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: cancelled}}); err != nil {
		t.Fatal(err)
	}
	c.Clock.Advance(time.Minute)

	// n1's daemon restarted: it knows one running job, one it lost, one
	// that finished while the controller was away, and a stranger.
	reply := c.Register("n1",
		nodeproto.JobStatus{JobID: uint32(stillRunning), Running: true},
		nodeproto.JobStatus{JobID: uint32(lost), Lost: true},
		nodeproto.JobStatus{JobID: uint32(finished), Done: &nodeproto.JobDone{Node: "n1", JobID: uint32(finished), Kind: nodeproto.EndExited, ExitCode: 0, EndTime: c.Clock.Now()}},
		nodeproto.JobStatus{JobID: 777, Running: true},
	)
	if diff := cmp.Diff([]uint32{777}, reply.Kill); diff != "" {
		t.Errorf("kill list (-want +got):\n%s", diff)
	}
	if reply.HeartbeatEvery <= 0 {
		t.Errorf("heartbeat interval %v", reply.HeartbeatEvery)
	}
	// n2 forgot the cancelled job it was killing: the kill is over.
	if reply := c.Register("n2"); len(reply.Kill) != 0 {
		t.Errorf("n2 kill list %v", reply.Kill)
	}
	want := map[job.ID]job.State{neverArrived: job.Running, lost: job.NodeFail, finished: job.Completed, stillRunning: job.Running, cancelled: job.Cancelled}
	for id, st := range want {
		j := c.Job(id)
		if j.State != st || j.Completing {
			t.Errorf("job %d: %v completing=%v, want %v", id, j.State, j.Completing, st)
		}
	}
	// The job whose launch never arrived is launched again.
	relaunch := c.Node.WaitLaunches(t, 6)[5]
	if relaunch.JobID != uint32(neverArrived) {
		t.Errorf("relaunched job %d, want %d", relaunch.JobID, neverArrived)
	}
	if _, err := c.Ctl.Register(ctx, nodeproto.Register{Name: "n9"}); codeOf(err) != slurmerr.InvalidNodeName {
		t.Errorf("unknown node registers: %v", err)
	}
}

func TestRegistrationReportsGPUs(t *testing.T) {
	c := ctltest.New(t)
	gpus := []nodeproto.GPU{{Index: 0, Type: "h100", Minor: 0, UUID: "GPU-0"}, {Index: 1, Type: "h100", Minor: 1, UUID: "GPU-1"}}
	if _, err := c.Ctl.Register(ctx, nodeproto.Register{Name: "n1", Addr: c.Node.Addr(), GPUs: gpus}); err != nil {
		t.Fatal(err)
	}
	ni, _ := c.Ctl.Node("n1")
	want := []node.GPU{{Index: 0, Type: "h100", Minor: 0, UUID: "GPU-0"}, {Index: 1, Type: "h100", Minor: 1, UUID: "GPU-1"}}
	if diff := cmp.Diff(want, ni.Node.GPUs); diff != "" {
		t.Errorf("GPUs (-want +got):\n%s", diff)
	}
	// Registering without GPUs keeps what is known.
	c.Register("n1")
	if ni, _ := c.Ctl.Node("n1"); len(ni.Node.GPUs) != 2 {
		t.Errorf("GPUs after a registration without any: %v", ni.Node.GPUs)
	}
}

// A requeueable job on a node that stops answering goes back to the queue
// under its id as its next run: at once when the node ran its batch
// script, once the batch host ended the script otherwise. A late report of
// the earlier run does not end the next one.
func TestNodeFailureRequeuesJobs(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.SlurmdTimeout = 10 * time.Second })
	c.RegisterAll()
	// The first job lands on n4 because the others are drained, and may
	// run anywhere once requeued.
	for _, n := range []string{"n1", "n2", "n3"} {
		if err := c.Ctl.UpdateNode(ctx, ctltest.Root, n, controller.NodeDrain, "test"); err != nil {
			t.Fatal(err)
		}
	}
	onN4 := c.Submit(ctltest.Alice, ctltest.Request())
	schedule(t, c)
	for _, n := range []string{"n1", "n2", "n3"} {
		if err := c.Ctl.UpdateNode(ctx, ctltest.Root, n, controller.NodeUndrain, ""); err != nil {
			t.Fatal(err)
		}
	}
	spanning := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n3", "n4"}; r.MinNodes = 2 }))
	schedule(t, c)
	c.Node.WaitLaunches(t, 2)
	if h := c.Job(onN4).BatchHost; h != "n4" {
		t.Fatalf("first job on %s, want n4", h)
	}
	if h := c.Job(spanning).BatchHost; h != "n3" {
		t.Fatalf("spanning job's batch host %s, want n3", h)
	}
	for range 3 {
		c.Clock.Advance(5 * time.Second)
		for _, n := range []string{"n1", "n2", "n3"} {
			heartbeat(t, c, n)
		}
		c.Ctl.CheckNodes(ctx)
	}
	if j := c.Job(onN4); j.State != job.Pending || j.RestartCount != 1 || j.Alloc != nil {
		t.Errorf("job whose batch host failed: %v restarts %d alloc %v", j.State, j.RestartCount, j.Alloc)
	}
	// The spanning job's script still runs on n3: it is ended there and
	// requeued when n3 reports it gone.
	j := c.Job(spanning)
	if j.State != job.Running || !j.RequeueOnEnd {
		t.Fatalf("spanning job: %v requeue-on-end %v", j.State, j.RequeueOnEnd)
	}
	sig := c.Node.WaitSignals(t, 1)
	if sig[0].JobID != uint32(spanning) || !sig[0].Terminate {
		t.Errorf("signal %+v, want the spanning job ended", sig[0])
	}
	c.Finish(spanning, nodeproto.EndCancelled, 0, 15)
	if j := c.Job(spanning); j.State != job.Pending || j.RestartCount != 1 {
		t.Errorf("spanning job after its script ended: %v restarts %d", j.State, j.RestartCount)
	}

	// The first job runs again elsewhere; the old run's end, reported
	// late, leaves the new run alone.
	schedule(t, c)
	if j := c.Job(onN4); j.State != job.Running || j.BatchHost == "n4" {
		t.Fatalf("requeued job: %v on %s", j.State, j.BatchHost)
	}
	if l := c.Node.WaitLaunches(t, 3); l[2].JobID != uint32(onN4) || l[2].RestartCount != 1 {
		t.Errorf("relaunch %+v, want job %d with restart count 1", l[2], onN4)
	}
	if err := c.Ctl.JobDone(ctx, nodeproto.JobDone{Node: "n4", JobID: uint32(onN4), Run: 0, Kind: nodeproto.EndExited, EndTime: c.Now()}); err != nil {
		t.Fatal(err)
	}
	if st := c.Job(onN4).State; st != job.Running {
		t.Errorf("a late end of the earlier run moved the job to %v", st)
	}
}
