package controller_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// flaky is a store that can be made to fail, as a database that is down.
type flaky struct {
	acctdb.Lazy
	down atomic.Bool
}

func (f *flaky) Put(ctx context.Context, b acctdb.Batch) error {
	if f.down.Load() {
		return errors.New("connection refused")
	}
	return f.Lazy.Put(ctx, b)
}

func runs(t *testing.T, s *acctdb.Lazy, id job.ID) []string {
	t.Helper()
	js, err := s.Jobs(ctx, acctdb.Filter{JobIDs: []uint32{uint32(id)}, Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range js {
		out = append(out, fmt.Sprintf("%d.%d %s %d:%d", j.JobID, j.Run, j.State, j.ExitCode, j.Signal))
	}
	return out
}

// TestAccountingRecordsEveryRun: every run of a job reaches the store,
// a requeued job's lost run included, with its batch step; what the
// store could not take waits in the state, through a controller
// restart, and arrives once the store answers.
func TestAccountingRecordsEveryRun(t *testing.T) {
	store := &flaky{Lazy: *acctdb.NewLazy(acctdb.Config{Kind: acctdb.SQLite, Path: filepath.Join(t.TempDir(), "acct.sqlite")})}
	t.Cleanup(func() { store.Close() })
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Accounting = store })
	c.RegisterAll()
	ok := c.Submit(ctltest.Alice, ctltest.Request())
	failed := c.Submit(ctltest.Alice, ctltest.Request())
	requeued := c.Submit(ctltest.Alice, ctltest.Request())
	pending := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.BeginTime = ctltest.Epoch.Add(24 * time.Hour) }))
	schedule(t, c)
	c.Node.WaitLaunches(t, 3)
	c.Clock.Advance(time.Minute)
	c.Finish(ok, nodeproto.EndExited, 0, 0)
	c.Finish(failed, nodeproto.EndExited, 3, 0)
	if err := c.Ctl.FlushAccounting(ctx); err != nil {
		t.Fatal(err)
	}
	if got := runs(t, &store.Lazy, ok); !slices.Equal(got, []string{"1.0 COMPLETED 0:0"}) {
		t.Errorf("completed job: %v", got)
	}
	if got := runs(t, &store.Lazy, pending); !slices.Equal(got, []string{"4.0 PENDING 0:0"}) {
		t.Errorf("pending job: %v", got)
	}
	if q := c.Ctl.AcctQueued(); q != 0 {
		t.Errorf("%d records left after a flush", q)
	}

	// The store goes down; a run is requeued and a job cancelled
	// meanwhile, and the controller restarts.
	store.down.Store(true)
	if err := c.Ctl.Requeue(ctx, ctltest.Alice, controller.JobSelector{ID: requeued}, false); err != nil {
		t.Fatal(err)
	}
	c.Finish(requeued, nodeproto.EndCancelled, 0, 15)
	if err := c.Ctl.Cancel(ctx, ctltest.Alice, controller.CancelRequest{Sel: controller.JobSelector{ID: pending}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Ctl.FlushAccounting(ctx); err == nil {
		t.Fatal("a flush to a store that is down succeeded")
	}
	waiting := c.Ctl.AcctQueued()
	if waiting == 0 {
		t.Fatal("nothing waits for the store")
	}
	// The records wait in a snapshot, not in the log.
	if err := c.Ctl.Snapshot(); err != nil {
		t.Fatal(err)
	}
	c.Restart()
	if q := c.Ctl.AcctQueued(); q != waiting {
		t.Errorf("%d records wait after the restart, %d before", q, waiting)
	}
	store.down.Store(false)
	if err := c.Ctl.FlushAccounting(ctx); err != nil {
		t.Fatal(err)
	}
	if got := runs(t, &store.Lazy, requeued); !slices.Equal(got, []string{"3.0 REQUEUED 0:0", "3.1 PENDING 0:0"}) {
		t.Errorf("requeued job: %v", got)
	}
	if got := runs(t, &store.Lazy, pending); !slices.Equal(got, []string{"4.0 CANCELLED 0:0"}) {
		t.Errorf("cancelled job: %v", got)
	}
	js, _ := store.Jobs(ctx, acctdb.Filter{JobIDs: []uint32{uint32(failed)}})
	steps, err := store.Steps(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].StepID != acctdb.StepBatch || steps[0].State != "FAILED" || steps[0].ExitCode != 3 {
		t.Errorf("failed job's steps: %+v", steps)
	}
	if js[0].Cluster != c.Cfg.ClusterName || js[0].User != "alice" || js[0].Nodes == "" || js[0].AllocCPUs == 0 || js[0].End.IsZero() {
		t.Errorf("failed job's record: %+v", js[0])
	}
}
