package controller_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/topology"
)

var ctx = context.Background()

// codeOf is the Slurm error number of err (NoError for nil).
func codeOf(err error) slurmerr.Code { return slurmerr.CodeOf(err) }

func TestSubmitFillsDefaults(t *testing.T) {
	// got is what the controller stored of the request after defaults.
	type got struct {
		Partition  string
		TimeLimit  uint32
		MemPerCPU  uint64
		MemPerNode uint64
		Name       string
		UserID     uint32
		GroupID    uint32
		UserName   string
		GroupName  string
	}
	aliceGot := func(part string, limit uint32, perCPU, perNode uint64) got {
		return got{Partition: part, TimeLimit: limit, MemPerCPU: perCPU, MemPerNode: perNode, Name: "sbatch", UserID: 1000, GroupID: 1000, UserName: "alice", GroupName: "alice"}
	}
	tests := map[string]struct {
		who  controller.Identity
		sub  controller.Submission
		want got
	}{
		"default partition, no limit, cluster DefMemPerCPU": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request()},
			want: aliceGot("gpu", job.Infinite, 1000, 0),
		},
		"partition DefaultTime": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug" })},
			want: aliceGot("debug", 10, 1000, 0),
		},
		"partition MaxTime without DefaultTime, partition DefMemPerNode": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "short" })},
			want: aliceGot("short", 60, 0, 2000),
		},
		"explicit limit kept": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug"; r.TimeLimit = 5 })},
			want: aliceGot("debug", 5, 1000, 0),
		},
		"limit above MaxTime accepted (pends later)": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug"; r.TimeLimit = 120 })},
			want: aliceGot("debug", 120, 1000, 0),
		},
		"explicit --mem wins over defaults": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.MemPerNode = 500 })},
			want: aliceGot("gpu", job.Infinite, 0, 500),
		},
		"explicit --mem-per-cpu kept": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.MemPerCPU = 300 })},
			want: aliceGot("gpu", job.Infinite, 300, 0),
		},
		"exclusive gets the whole node, no default": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Exclusive = true })},
			want: aliceGot("gpu", job.Infinite, 0, 0),
		},
		"partition list: first one": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug,gpu" })},
			want: aliceGot("debug", 10, 1000, 0),
		},
		"name kept": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Name = "train" })},
			want: func() got { g := aliceGot("gpu", job.Infinite, 1000, 0); g.Name = "train"; return g }(),
		},
		"identity from the caller, not the request's names": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.UserID = 0; r.UserName = "root"; r.GroupName = "root" })},
			want: aliceGot("gpu", job.Infinite, 1000, 0),
		},
		"user names own uid: own group, not gid 0": {
			who: ctltest.Alice, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.UserID = 1000 }), UserIDSet: true},
			want: aliceGot("gpu", job.Infinite, 1000, 0),
		},
		"root submits for uid 65534 with gid 0": {
			who: ctltest.Root, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.UserID = 65534 }), UserIDSet: true, GroupIDSet: true},
			want: got{Partition: "gpu", TimeLimit: job.Infinite, MemPerCPU: 1000, Name: "sbatch", UserID: 65534, GroupID: 0, UserName: "nobody", GroupName: "root"},
		},
		"root submits for uid 65534: its name and primary group": {
			who: ctltest.Root, sub: controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.UserID = 65534 }), UserIDSet: true},
			want: got{Partition: "gpu", TimeLimit: job.Infinite, MemPerCPU: 1000, Name: "sbatch", UserID: 65534, GroupID: 65534, UserName: "nobody", GroupName: "nogroup"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t)
			res, err := c.Ctl.Submit(ctx, tc.who, tc.sub)
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			j := c.Job(res.JobID)
			r := j.Req
			g := got{Partition: r.Partition, TimeLimit: r.TimeLimit, MemPerCPU: r.MemPerCPU, MemPerNode: r.MemPerNode, Name: r.Name,
				UserID: r.UserID, GroupID: r.GroupID, UserName: r.UserName, GroupName: r.GroupName}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("stored request (-want +got):\n%s", diff)
			}
			if j.State != job.Pending || j.Hold != job.NotHeld || j.Priority == 0 || j.Reason != job.ReasonNone {
				t.Errorf("state %v hold %v priority %d reason %q, want PENDING, not held, priority > 0, None", j.State, j.Hold, j.Priority, j.Reason)
			}
			if !j.SubmitTime.Equal(ctltest.Epoch) || !j.EligibleTime.Equal(ctltest.Epoch) {
				t.Errorf("submit %v eligible %v, want %v", j.SubmitTime, j.EligibleTime, ctltest.Epoch)
			}
		})
	}
}

func TestSubmitRefusals(t *testing.T) {
	req := ctltest.Request
	tests := map[string]struct {
		who  controller.Identity
		sub  controller.Submission
		want slurmerr.Code
	}{
		"unknown partition":       {sub: controller.Submission{Req: req(func(r *job.Request) { r.Partition = "nosuch" })}, want: slurmerr.InvalidPartitionName},
		"inactive partition":      {sub: controller.Submission{Req: req(func(r *job.Request) { r.Partition = "closed" })}, want: slurmerr.RequestedPartConfigUnavailable},
		"too many GPUs per node":  {sub: controller.Submission{Req: req(func(r *job.Request) { r.GPUsPerNode = 5 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too many GPUs per job":   {sub: controller.Submission{Req: req(func(r *job.Request) { r.GPUsPerJob = 17 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"unknown GPU type":        {sub: controller.Submission{Req: req(func(r *job.Request) { r.GPUsPerNode = 1; r.GPUType = "h100" })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too many CPUs per task":  {sub: controller.Submission{Req: req(func(r *job.Request) { r.CPUsPerTask = 9 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too many tasks":          {sub: controller.Submission{Req: req(func(r *job.Request) { r.NumTasks = 33 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too many nodes":          {sub: controller.Submission{Req: req(func(r *job.Request) { r.MinNodes = 5 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too many nodes in part":  {sub: controller.Submission{Req: req(func(r *job.Request) { r.MinNodes = 3; r.Partition = "debug" })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"too much memory":         {sub: controller.Submission{Req: req(func(r *job.Request) { r.MemPerNode = 16001 })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"min nodes above max":     {sub: controller.Submission{Req: req(func(r *job.Request) { r.MinNodes = 3; r.MaxNodes = 2 })}, want: slurmerr.InvalidNodeCount},
		"fewer tasks than nodes":  {sub: controller.Submission{Req: req(func(r *job.Request) { r.MinNodes = 4; r.NumTasks = 2 })}, want: slurmerr.InvalidNodeCount},
		"environment missing":     {sub: controller.Submission{Req: req(func(r *job.Request) { r.Environment = nil })}, want: slurmerr.EnvironmentMissing},
		"script missing":          {sub: controller.Submission{Req: req(func(r *job.Request) { r.Script = "" })}, want: slurmerr.JobScriptMissing},
		"script blank":            {sub: controller.Submission{Req: req(func(r *job.Request) { r.Script = " \n\t" })}, want: slurmerr.JobScriptMissing},
		"no working directory":    {sub: controller.Submission{Req: req(func(r *job.Request) { r.WorkDir = "" })}, want: slurmerr.Unspecified},
		"--mem and --mem-per-cpu": {sub: controller.Submission{Req: req(func(r *job.Request) { r.MemPerNode = 10; r.MemPerCPU = 10 })}, want: slurmerr.InvalidTaskMemory},
		"array above MaxArraySize": {
			sub: controller.Submission{Req: req(func(r *job.Request) { r.Array = job.ArraySpec{Expr: "1000-1001", Tasks: []uint32{1000, 1001}} })}, want: slurmerr.InvalidArray,
		},
		"unknown required node":      {sub: controller.Submission{Req: req(func(r *job.Request) { r.NodeList = []string{"n9"} })}, want: slurmerr.InvalidNodeName},
		"unknown excluded node":      {sub: controller.Submission{Req: req(func(r *job.Request) { r.Exclude = []string{"n9"} })}, want: slurmerr.InvalidNodeName},
		"required node not in part":  {sub: controller.Submission{Req: req(func(r *job.Request) { r.NodeList = []string{"n3"}; r.Partition = "debug" })}, want: slurmerr.RequestedNodesNotInPartition},
		"all nodes excluded":         {sub: controller.Submission{Req: req(func(r *job.Request) { r.Exclude = []string{"n1", "n2"}; r.Partition = "debug" })}, want: slurmerr.RequestedNodeConfigUnavailable},
		"user submits for another":   {who: ctltest.Alice, sub: controller.Submission{Req: req(func(r *job.Request) { r.UserID = 1001 }), UserIDSet: true}, want: slurmerr.AccessDenied},
		"user submits as group 0":    {who: ctltest.Alice, sub: controller.Submission{Req: req(func(r *job.Request) { r.GroupID = 0 }), GroupIDSet: true}, want: slurmerr.AccessDenied},
		"root submits for no one":    {who: ctltest.Root, sub: controller.Submission{Req: req(func(r *job.Request) { r.UserID = 4000000000 }), UserIDSet: true}, want: slurmerr.AccessDenied},
		"user names own uid is fine": {who: ctltest.Alice, sub: controller.Submission{Req: req(func(r *job.Request) { r.UserID = 1000 }), UserIDSet: true}, want: slurmerr.NoError},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t)
			who := tc.who
			if who.User == "" {
				who = ctltest.Alice
			}
			_, err := c.Ctl.Submit(ctx, who, tc.sub)
			if got := codeOf(err); got != tc.want {
				t.Fatalf("submit: error %v (code %d), want code %d", err, got, tc.want)
			}
			if tc.want == slurmerr.NoError {
				return
			}
			if jobs := c.Ctl.Jobs(controller.JobFilter{}); len(jobs) != 0 {
				t.Errorf("refused submission left %d jobs", len(jobs))
			}
			// A refusal does not use up a job id.
			if id := c.Submit(ctltest.Alice, ctltest.Request()); id != 1 {
				t.Errorf("next job id %d, want 1", id)
			}
		})
	}
}

func TestSubmitNoDefaultPartition(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		for i := range cfg.Partitions {
			cfg.Partitions[i].Default = false
		}
	})
	_, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request()})
	if codeOf(err) != slurmerr.DefaultPartitionNotSet {
		t.Fatalf("submit without partition: %v, want code %d", err, slurmerr.DefaultPartitionNotSet)
	}
	if _, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Partition = "debug" })}); err != nil {
		t.Fatalf("submit with partition: %v", err)
	}
}

func TestSubmitHeld(t *testing.T) {
	c := ctltest.New(t)
	res, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(), Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.RC != slurmerr.JobHeld || len(res.Warnings) != 0 {
		t.Errorf("rc %d warnings %q, want %d and none", res.RC, res.Warnings, slurmerr.JobHeld)
	}
	j := c.Job(res.JobID)
	if j.Hold != job.HeldUser || j.Priority != 0 || j.Reason != job.ReasonHeldUser {
		t.Errorf("hold %v priority %d reason %q, want user hold, 0, JobHeldUser", j.Hold, j.Priority, j.Reason)
	}
	c.RegisterAll()
	if err := c.Ctl.ScheduleOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if j := c.Job(res.JobID); j.State != job.Pending || j.Reason != job.ReasonHeldUser {
		t.Errorf("held job after a cycle: %v %q", j.State, j.Reason)
	}
}

func TestJobIDsIncrease(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.FirstJobID = 100 })
	var ids []job.ID
	for range 5 {
		ids = append(ids, c.Submit(ctltest.Alice, ctltest.Request()))
	}
	if diff := cmp.Diff([]job.ID{100, 101, 102, 103, 104}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if !slices.IsSorted(c.Ctl.JobOrder()) {
		t.Errorf("listing order %v not sorted", c.Ctl.JobOrder())
	}
}

// With two separate switch trees of two nodes, a 3-node job can never run:
// refused at submission, as slurmctld refuses it.
func TestSubmitBeyondOneTree(t *testing.T) {
	top, err := topology.Parse(strings.NewReader("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-4]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Topology = top })
	c.RegisterAll()
	_, err = c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.MinNodes = 3 })})
	if slurmerr.CodeOf(err) != slurmerr.RequestedNodeConfigUnavailable {
		t.Errorf("3 nodes over two 2-node trees: %v", err)
	}
	if _, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.MinNodes = 2 })}); err != nil {
		t.Errorf("2 nodes: %v", err)
	}
}
