package controller

import (
	"context"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
)

// warnDue returns when job j's --signal warning is due (zero: never):
// Seconds before its time limit, or before its reservation ends when that
// is sooner and the warning asked for it (R:).
func (c *Controller) warnDue(j *job.Job) time.Time {
	w := j.Req.Warn
	if w.Signal <= 0 || j.State != job.Running || j.Completing || j.WarnSent {
		return time.Time{}
	}
	end := time.Time{}
	if j.Req.TimeLimit != job.Infinite && j.Req.TimeLimit != 0 {
		end = j.EndTime
	}
	if w.Reservation && j.Req.Reservation != "" {
		if r := c.st.Resvs[j.Req.Reservation]; r != nil && !r.End.IsZero() && (end.IsZero() || r.End.Before(end)) {
			end = r.End
		}
	}
	if end.IsZero() {
		return time.Time{}
	}
	return end.Add(-time.Duration(w.Seconds) * time.Second)
}

// sendWarnings delivers the --signal warnings that are due, as
// slurmctld's _send_job_warning does: to every step of the job but not
// its batch script, or with B: to the batch script alone.
func (c *Controller) sendWarnings(ctx context.Context) {
	now := c.now()
	type due struct {
		id    job.ID
		start time.Time
		warn  job.Warning
	}
	var list []due
	c.mu.RLock()
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if at := c.warnDue(j); !at.IsZero() && !now.Before(at) {
			list = append(list, due{id, j.StartTime, j.Req.Warn})
		}
	}
	c.mu.RUnlock()
	for _, d := range list {
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpWarn, Warn: &ctlstate.WarnCmd{JobID: d.id, Start: d.start}}); err != nil {
			c.logger.Error("record job warning", "job", d.id, "err", err)
			continue
		}
		c.logger.Info("sending job warning signal", "job", d.id, "signal", d.warn.Signal)
		// SIGCONT first, then the signal, as send_job_warn_signal does;
		// with B: the batch script's shell alone.
		const sigCont = int32(syscall.SIGCONT)
		for _, sig := range []int32{sigCont, d.warn.Signal} {
			if err := c.signalRunning(d.id, sig, KillFlags{Batch: d.warn.BatchOnly}); err != nil {
				c.logger.Info("job warning signal", "job", d.id, "err", err)
				break
			}
		}
	}
}
