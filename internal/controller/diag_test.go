package controller_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/slurmerr"
)

// TestSchedulerStatsSince: the counters less the baseline's, Start the
// baseline's time, what is not a counter left as it is, and a counter
// below its baseline read as zero rather than wrapped.
func TestSchedulerStatsSince(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	base := controller.SchedulerStats{
		Time: t0, Start: t0.Add(-time.Hour), Cycles: 10, TotalCycleMicros: 1000, MaxCycleMicros: 300, LastCycleMicros: 50,
		BackfillCycles: 4, BackfillTotalMicros: 400, BackfillLastMicros: 90, LastBackfill: t0.Add(-time.Minute), Backfilled: 2,
		Submitted: 7, Started: 6, Completed: 5, Cancelled: 1, Failed: 1, CycleDepth: 30, ScheduleExits: [6]uint64{10},
		Pending: 3, Running: 1,
	}
	tests := map[string]struct {
		now, want controller.SchedulerStats
	}{
		"nothing since": {
			now: func() controller.SchedulerStats { s := base; s.Time = t0.Add(time.Second); return s }(),
			want: controller.SchedulerStats{Time: t0.Add(time.Second), Start: t0, MaxCycleMicros: 300, LastCycleMicros: 50,
				Pending: 3, Running: 1},
		},
		"some since": {
			now: controller.SchedulerStats{
				Time: t0.Add(time.Minute), Start: t0.Add(-time.Hour), Cycles: 13, TotalCycleMicros: 1300, MaxCycleMicros: 20, LastCycleMicros: 40,
				BackfillCycles: 5, BackfillTotalMicros: 480, BackfillLastMicros: 80, LastBackfill: t0.Add(time.Second), Backfilled: 3,
				Submitted: 9, Started: 8, Completed: 5, Cancelled: 2, Failed: 1, CycleDepth: 36, ScheduleExits: [6]uint64{13},
				Pending: 1, Running: 2, AcctQueued: 4, Serving: 2,
			},
			want: controller.SchedulerStats{
				Time: t0.Add(time.Minute), Start: t0, Cycles: 3, TotalCycleMicros: 300, MaxCycleMicros: 20, LastCycleMicros: 40,
				BackfillCycles: 1, BackfillTotalMicros: 80, BackfillLastMicros: 80, LastBackfill: t0.Add(time.Second), Backfilled: 1,
				Submitted: 2, Started: 2, Cancelled: 1, CycleDepth: 6, ScheduleExits: [6]uint64{3},
				Pending: 1, Running: 2, AcctQueued: 4, Serving: 2,
			},
		},
		"below the baseline": {
			now:  controller.SchedulerStats{Time: t0, Cycles: 2, Submitted: 1},
			want: controller.SchedulerStats{Time: t0, Start: t0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.now.Since(base)); diff != "" {
				t.Errorf("Since (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResetStats: sdiag -r is refused to an ordinary user with
// ESLURM_ACCESS_DENIED and leaves the counters alone; root, SlurmUser,
// operators and administrators may reset, after which /diag's counters
// and RPC table count from the reset, its start is the reset's time, and
// the raw counters (/metrics/scheduler's) are unchanged.
func TestResetStats(t *testing.T) {
	slurmUser := controller.Identity{UID: 450, GID: 450, User: "slurm", Group: "slurm"}
	tests := map[string]struct {
		who     controller.Identity
		refused bool
	}{
		"ordinary user": {who: ctltest.Alice, refused: true},
		"root":          {who: ctltest.Root},
		"SlurmUser":     {who: slurmUser},
		"operator":      {who: ctltest.Bob},
		"administrator": {who: ctltest.Carol},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t, func(cfg *controller.Config) {
				cfg.SlurmUserID = slurmUser.UID
				cfg.Operators = []string{"bob"}
				cfg.Administrators = []string{"carol"}
			})
			c.Submit(ctltest.Alice, ctltest.Request())
			c.Submit(ctltest.Alice, ctltest.Request())
			c.Ctl.CountRPC(ctx, "REQUEST_SUBMIT_BATCH_JOB")
			start := c.Ctl.StartTime()
			c.Clock.Advance(time.Minute)
			before := c.Ctl.SchedulerStats()

			err := c.Ctl.ResetStats(tc.who)
			if tc.refused {
				if code := slurmerr.CodeOf(err); code != slurmerr.AccessDenied {
					t.Fatalf("ResetStats as %s: %v (code %d), want ESLURM_ACCESS_DENIED", tc.who.User, err, code)
				}
				if d := c.Ctl.DiagStats(); d.Submitted != 2 || !d.Start.Equal(start) || len(c.Ctl.DiagRPCs()) != 1 {
					t.Errorf("after a refused reset: submitted %d since %v, RPCs %v; want 2 since %v, 1 kind", d.Submitted, d.Start, c.Ctl.DiagRPCs(), start)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResetStats as %s: %v", tc.who.User, err)
			}
			d := c.Ctl.DiagStats()
			if d.Submitted != 0 || !d.Start.Equal(before.Time) || len(c.Ctl.DiagRPCs()) != 0 {
				t.Errorf("after the reset: submitted %d since %v, RPCs %v; want 0 since %v, none", d.Submitted, d.Start, c.Ctl.DiagRPCs(), before.Time)
			}
			after := c.Ctl.SchedulerStats()
			if after.Submitted != before.Submitted || !after.Start.Equal(start) {
				t.Errorf("raw counters after the reset: submitted %d since %v, want %d since %v", after.Submitted, after.Start, before.Submitted, start)
			}

			c.Submit(ctltest.Alice, ctltest.Request())
			c.Ctl.CountRPC(ctx, "REQUEST_SUBMIT_BATCH_JOB")
			want := []controller.RPCCount{{Kind: "REQUEST_SUBMIT_BATCH_JOB", Count: 1}}
			if d := c.Ctl.DiagStats(); d.Submitted != 1 {
				t.Errorf("one job after the reset: /diag counts %d", d.Submitted)
			}
			if diff := cmp.Diff(want, c.Ctl.DiagRPCs()); diff != "" {
				t.Errorf("RPCs since the reset (-want +got):\n%s", diff)
			}
			if got := c.Ctl.SchedulerStats().Submitted; got != 3 {
				t.Errorf("raw submitted %d, want 3", got)
			}
		})
	}
}

// TestDiagScheduleDepth: each main cycle that looked at pending jobs
// adds them to the depth and ends at the end of the job queue; a reset
// restarts the maxima /diag reports but not the raw ones.
func TestDiagScheduleDepth(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	c.Submit(ctltest.Alice, ctltest.Request())
	c.Submit(ctltest.Alice, ctltest.Request())
	if err := c.Ctl.ScheduleOnce(ctx); err != nil {
		t.Fatal(err)
	}
	d := c.Ctl.DiagStats()
	if d.Cycles != 1 || d.CycleDepth != 2 || d.ScheduleExits != [6]uint64{1} {
		t.Errorf("after one cycle over two jobs: cycles %d, depth %d, exits %v", d.Cycles, d.CycleDepth, d.ScheduleExits)
	}
	if d.MaxCycleMicros != c.Ctl.SchedulerStats().MaxCycleMicros {
		t.Errorf("max cycle before any reset: /diag %d, raw %d", d.MaxCycleMicros, c.Ctl.SchedulerStats().MaxCycleMicros)
	}
	if err := c.Ctl.ResetStats(ctltest.Root); err != nil {
		t.Fatal(err)
	}
	if d := c.Ctl.DiagStats(); d.MaxCycleMicros != 0 || d.CycleDepth != 0 || d.ScheduleExits != [6]uint64{} {
		t.Errorf("after the reset: max %d, depth %d, exits %v; want zeros", d.MaxCycleMicros, d.CycleDepth, d.ScheduleExits)
	}
}

// TestServedRPCs: a request followed by a note is counted once answered,
// with its time, under its kind and its sender; one without a note is
// counted at once, with no time and no sender; a reset clears both
// tables.
func TestServedRPCs(t *testing.T) {
	c := ctltest.New(t)
	st := c.Ctl.StatsRef()
	noted, note := controller.WithRPCNote(ctx)
	st.CountRPCCtx(noted, "REQUEST_JOB_INFO")
	if got := c.Ctl.DiagRPCs(); len(got) != 0 {
		t.Errorf("before the request is answered: %v", got)
	}
	st.Served(note, ctltest.Alice, true, 1500*time.Microsecond)
	noted, note = controller.WithRPCNote(ctx)
	st.CountRPCCtx(noted, "REQUEST_JOB_INFO")
	st.Served(note, ctltest.Alice, true, 500*time.Microsecond)
	_, note = controller.WithRPCNote(ctx)
	st.Served(note, ctltest.Bob, true, time.Second) // a request no handler named: not counted
	st.CountRPCCtx(ctx, "REQUEST_PING")
	want := []controller.RPCCount{{Kind: "REQUEST_JOB_INFO", Count: 2, TotalMicros: 2000}, {Kind: "REQUEST_PING", Count: 1}}
	if diff := cmp.Diff(want, c.Ctl.DiagRPCs()); diff != "" {
		t.Errorf("RPCs by type (-want +got):\n%s", diff)
	}
	wantUsers := []controller.RPCCount{{Kind: "alice", UID: 1000, Count: 2, TotalMicros: 2000}}
	if diff := cmp.Diff(wantUsers, c.Ctl.DiagUsers()); diff != "" {
		t.Errorf("RPCs by user (-want +got):\n%s", diff)
	}
	if err := c.Ctl.ResetStats(ctltest.Root); err != nil {
		t.Fatal(err)
	}
	noted, note = controller.WithRPCNote(ctx)
	st.CountRPCCtx(noted, "REQUEST_JOB_INFO")
	st.Served(note, ctltest.Alice, true, 100*time.Microsecond)
	want = []controller.RPCCount{{Kind: "REQUEST_JOB_INFO", Count: 1, TotalMicros: 100}}
	wantUsers = []controller.RPCCount{{Kind: "alice", UID: 1000, Count: 1, TotalMicros: 100}}
	if diff := cmp.Diff(want, c.Ctl.DiagRPCs()); diff != "" {
		t.Errorf("RPCs by type after the reset (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantUsers, c.Ctl.DiagUsers()); diff != "" {
		t.Errorf("RPCs by user after the reset (-want +got):\n%s", diff)
	}
}
