package controller

import (
	"context"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// warnCmd records that a run got its --signal warning, so that it is sent
// once per run, even across a controller restart.
type warnCmd struct {
	JobID job.ID `json:"job_id"`
	// Start is the run's start time: a requeued job's next run is
	// warned again.
	Start time.Time `json:"start"`
}

func (s *fsm) applyWarn(c *command) applyResult {
	j := s.Jobs[c.Warn.JobID]
	if j == nil || j.State != job.Running || !j.StartTime.Equal(c.Warn.Start) {
		return applyResult{}
	}
	j.WarnSent = true
	s.touch(j, c.Time)
	return applyResult{JobID: j.ID}
}

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
	for _, id := range c.st.order {
		j := c.st.Jobs[id]
		if at := c.warnDue(j); !at.IsZero() && !now.Before(at) {
			list = append(list, due{id, j.StartTime, j.Req.Warn})
		}
	}
	c.mu.RUnlock()
	for _, d := range list {
		if _, err := c.propose(ctx, &command{Op: opWarn, Warn: &warnCmd{JobID: d.id, Start: d.start}}); err != nil {
			c.logger.Error("record job warning", "job", d.id, "err", err)
			continue
		}
		c.logger.Info("sending job warning signal", "job", d.id, "signal", d.warn.Signal)
		msg := nodeproto.Signal{JobID: uint32(d.id), Signal: d.warn.Signal}
		if d.warn.BatchOnly {
			c.mu.RLock()
			host := ""
			if j := c.st.Jobs[d.id]; j != nil && !j.Req.Interactive {
				host = j.BatchHost
			}
			c.mu.RUnlock()
			if host != "" {
				c.sendSignalOn(d.id, host, msg)
			}
			continue
		}
		msg.StepsOnly = true
		for _, n := range c.jobNodes(d.id) {
			c.sendSignalOn(d.id, n, msg)
		}
	}
}

// jobNodes lists the nodes a job holds.
func (c *Controller) jobNodes(id job.ID) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if j := c.st.Jobs[id]; j != nil && j.Alloc != nil {
		return j.Alloc.NodeNames()
	}
	return nil
}
