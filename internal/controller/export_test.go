package controller

import (
	"bytes"
	"context"
)

// Hooks for the external tests: each runs one step of a background loop
// synchronously, so that tests decide when the scheduler, the node timeout
// check, time limits and the purge happen.

// ScheduleOnce runs one scheduling cycle.
func (c *Controller) ScheduleOnce(ctx context.Context) error { return c.scheduleOnce(ctx) }

// CheckNodes runs the node timeout check.
func (c *Controller) CheckNodes(ctx context.Context) { c.checkNodes(ctx) }

// EnforceTimeLimits ends jobs past their time limit.
func (c *Controller) EnforceTimeLimits(ctx context.Context)  { c.enforceTimeLimits(ctx) }
func (c *Controller) EnforceUsageLimits(ctx context.Context) { c.enforceUsageLimits(ctx) }

// Purge forgets jobs that ended more than MinJobAge ago.
func (c *Controller) Purge(ctx context.Context) error { return c.purge(ctx, c.now()) }

// StateJSON returns the durable state as a snapshot would store it.
func (c *Controller) StateJSON() ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var buf bytes.Buffer
	if err := c.st.Snapshot(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JobOrder returns the ids in listing order, as the state keeps them.
func (c *Controller) JobOrder() []uint32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]uint32, len(c.st.JobIDs()))
	for i, id := range c.st.JobIDs() {
		out[i] = uint32(id)
	}
	return out
}

// MaintainReservations runs the reservations' housekeeping.
func (c *Controller) MaintainReservations(ctx context.Context) { c.maintainReservations(ctx) }

// UpdateUsage brings fair-share usage up to date.
func (c *Controller) UpdateUsage(ctx context.Context)  { c.updateUsage(ctx) }
func (c *Controller) SendWarnings(ctx context.Context) { c.sendWarnings(ctx) }

// CheckSubmitTally says whether the submit limits' running count of jobs
// matches a count of every job.
func (c *Controller) CheckSubmitTally() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.CheckSubmitTally(c.partQOSLocked())
}

// CheckJobStats says whether the metrics' running job counts match a
// count of every job.
func (c *Controller) CheckJobStats() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.CheckJobStats()
}

// BlobKeys lists the keys of the blobs (scripts and environments) the
// state store holds.
func (c *Controller) BlobKeys() ([]string, error) { return c.log.BlobKeys() }
