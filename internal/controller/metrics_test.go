package controller_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// TestJobStatsMatchRecount: after every step of random sequences of
// submissions (arrays and holds among them), scheduling, ends, cancels,
// requeues, releases, node drains, downs and resumes, node timeouts,
// time limits, purges and restarts, the metrics' running job counts equal a count of
// every job, so they cannot drift from the state.
func TestJobStatsMatchRecount(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("", func(t *testing.T) {
			c := ctltest.New(t)
			c.RegisterAll()
			rng := rand.New(rand.NewPCG(seed, 20))
			users := []controller.Identity{ctltest.Alice, ctltest.Bob, ctltest.Carol}
			parts := []string{"gpu", "debug", "short"}
			var ids []job.ID
			pick := func() job.ID { return ids[rng.IntN(len(ids))] }
			for step := range 120 {
				var what string
				switch op := rng.IntN(12); {
				case op < 3 || len(ids) == 0:
					what = "submit"
					r := ctltest.Request(func(r *job.Request) {
						r.Partition = parts[rng.IntN(len(parts))]
						r.CPUsPerTask = uint32(1 + rng.IntN(8))
						r.TimeLimit = uint32(1 + rng.IntN(20))
						r.MinNodes = uint32(1 + rng.IntN(2))
						if rng.IntN(4) == 0 {
							r.Array = job.ArraySpec{Expr: "0-3", Tasks: []uint32{0, 1, 2, 3}}
						}
					})
					res, err := c.Ctl.Submit(ctx, users[rng.IntN(len(users))], controller.Submission{Req: r, Hold: rng.IntN(5) == 0})
					if err == nil {
						ids = append(ids, res.JobID)
					}
				case op < 5:
					what = "schedule"
					// Heartbeats keep the nodes up between timeouts.
					for _, n := range ctltest.NodeNames {
						c.Ctl.Heartbeat(nodeproto.Heartbeat{Name: n})
					}
					if err := c.Ctl.ScheduleOnce(ctx); err != nil {
						t.Fatal(err)
					}
				case op == 5:
					what = "finish"
					for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
						if j.State == job.Running && rng.IntN(2) == 0 {
							c.Ctl.JobDone(ctx, nodeproto.JobDone{Node: j.BatchHost, JobID: uint32(j.ID), Run: j.RestartCount,
								Kind: nodeproto.EndExited, ExitCode: int32(rng.IntN(2)), EndTime: c.Now()})
						}
					}
				case op == 6:
					what = "cancel"
					c.Ctl.Cancel(ctx, ctltest.Root, controller.CancelRequest{Sel: controller.JobSelector{ID: pick()}})
				case op == 7:
					what = "requeue"
					c.Ctl.Requeue(ctx, ctltest.Root, controller.JobSelector{ID: pick()}, rng.IntN(2) == 0)
				case op == 8:
					what = "release"
					f := false
					c.Ctl.Update(ctx, ctltest.Root, controller.JobSelector{ID: pick()}, controller.JobUpdate{Hold: &f})
				case op == 9:
					what = "node"
					n := ctltest.NodeNames[rng.IntN(len(ctltest.NodeNames))]
					change := []controller.NodeStateChange{controller.NodeDrain, controller.NodeDown, controller.NodeResume}[rng.IntN(3)]
					c.Ctl.UpdateNode(ctx, ctltest.Root, n, change, "test")
				case op == 10:
					what = "time"
					c.Clock.Advance(time.Duration(rng.IntN(15)) * time.Minute)
					c.Ctl.EnforceTimeLimits(ctx)
					// Past SlurmdTimeout the nodes fail with their jobs;
					// they come back on their next registration.
					c.Ctl.CheckNodes(ctx)
					if err := c.Ctl.Purge(ctx); err != nil {
						t.Fatal(err)
					}
				default:
					what = "restart"
					if rng.IntN(4) == 0 {
						c.Restart()
					}
					c.RegisterAll()
				}
				// The first read builds the counts; each later one
				// must find them equal to a recount.
				_ = c.Ctl.Metrics()
				if err := c.Ctl.CheckJobStats(); err != nil {
					t.Fatalf("step %d (%s): %v", step, what, err)
				}
			}
			v := c.Ctl.Metrics()
			var live uint64
			for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
				if !j.State.Terminal() || j.Completing {
					live++
				}
			}
			if got := v.Jobs.Total[ctlstate.CountLive]; got != live {
				t.Errorf("live jobs %d, listed %d", got, live)
			}
		})
	}
}
