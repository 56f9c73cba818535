package controller

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// AcctStore is where the accounting agent writes (acctdb.Store).
type AcctStore interface {
	Put(ctx context.Context, b acctdb.Batch) error
}

// Accounting agent pacing: how often the outbox is written, how many
// records at most in one transaction, and the longest wait between tries
// while the store fails.
const (
	acctFlushEvery = 500 * time.Millisecond
	acctBatch      = 5000
	acctMaxBackoff = 30 * time.Second
)

// acctLoop copies the outbox into the store until the controller stops.
func (c *Controller) acctLoop(stop <-chan struct{}) {
	defer c.wg.Done()
	wait := acctFlushEvery
	failing := false
	for {
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		err := c.recordClusterSize(context.Background())
		n := 0
		if err == nil {
			n, err = c.flushAcct(context.Background())
		}
		switch {
		case err != nil:
			if !failing {
				c.logger.Error("accounting store: records kept until it answers", "err", err, "waiting", c.AcctQueued())
			}
			failing = true
			wait = min(wait*2, acctMaxBackoff)
		default:
			if failing {
				c.logger.Info("accounting store answers again", "written", n)
			}
			failing = false
			wait = acctFlushEvery
			if n == acctBatch {
				// More waits: go on at once.
				wait = 0
			}
		}
	}
}

// flushAcct writes up to acctBatch of the oldest outbox records and then
// commits their acknowledgement; it returns how many it wrote.
func (c *Controller) flushAcct(ctx context.Context) (int, error) {
	type entry struct {
		seq  uint64
		job  *acctdb.Job
		step *acctdb.Step
		use  *acctdb.NodeUsage
		ev   *acctdb.Event
	}
	c.mu.RLock()
	o := &c.st.Outbox
	entries := make([]entry, 0, o.Len())
	for _, e := range o.Jobs {
		r := e.Rec
		entries = append(entries, entry{seq: e.Seq, job: &r})
	}
	for _, e := range o.Steps {
		r := e.Rec
		entries = append(entries, entry{seq: e.Seq, step: &r})
	}
	for _, e := range o.Usage {
		r := e.Rec
		entries = append(entries, entry{seq: e.Seq, use: &r})
	}
	for _, e := range o.Events {
		r := e.Rec
		if n := c.nodes[r.Node]; n != nil {
			r.CPUs = n.CPUs
		}
		entries = append(entries, entry{seq: e.Seq, ev: &r})
	}
	c.mu.RUnlock()
	if len(entries) == 0 {
		return 0, nil
	}
	// The oldest first, so that acknowledging up to the newest written
	// covers every entry written and none that was not.
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	if len(entries) > acctBatch {
		entries = entries[:acctBatch]
	}
	var b acctdb.Batch
	for _, e := range entries {
		switch {
		case e.job != nil:
			e.job.Cluster = c.cfg.ClusterName
			b.Jobs = append(b.Jobs, *e.job)
		case e.step != nil:
			e.step.Cluster = c.cfg.ClusterName
			b.Steps = append(b.Steps, *e.step)
		case e.ev != nil:
			e.ev.Cluster = c.cfg.ClusterName
			b.Events = append(b.Events, *e.ev)
		default:
			e.use.Cluster = c.cfg.ClusterName
			b.Usage = append(b.Usage, *e.use)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.cfg.Accounting.Put(wctx, b); err != nil {
		return 0, err
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpAcctAck, AcctAck: &ctlstate.AcctAckCmd{UpTo: entries[len(entries)-1].seq}}); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// AcctQueued is the number of accounting records not yet in the store
// (sdiag's DBD Agent queue size).
func (c *Controller) AcctQueued() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.Outbox.Len()
}

// FlushAccounting writes the whole outbox to the store now, as the
// agent would over its next passes (for tests and for a controller that
// stops).
func (c *Controller) FlushAccounting(ctx context.Context) error {
	if c.cfg.Accounting == nil {
		return nil
	}
	for {
		n, err := c.flushAcct(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// Snapshot writes a snapshot of the state now and truncates the log
// behind it, as the state log does every SnapshotEvery records.
func (c *Controller) Snapshot() error { return c.log.Snapshot() }

// StepUsage records what a node's tasks of a step used. The node must be
// one of the job's: a node reports on its own tasks only.
func (c *Controller) StepUsage(ctx context.Context, d nodeproto.StepDone) error {
	c.mu.RLock()
	j := c.st.Jobs[job.ID(d.JobID)]
	var run uint32
	ok := j != nil && j.Alloc != nil && slices.Contains(j.Alloc.NodeNames(), d.Node)
	if ok {
		run = j.RestartCount
	}
	c.mu.RUnlock()
	if !ok {
		return slurmerr.New(slurmerr.InvalidJobID, "job %d has no tasks on node %s", d.JobID, d.Node)
	}
	if c.cfg.Accounting == nil {
		return nil
	}
	_, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpStepUse, StepUse: &ctlstate.StepUseCmd{Report: ctlstate.NodeStepUsage(d), Run: run}})
	return err
}
