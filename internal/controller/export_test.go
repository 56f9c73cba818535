package controller

import (
	"bytes"
	"context"
	"fmt"
	"maps"
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
	if err := c.st.snapshot(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JobOrder returns the ids in listing order, as the state keeps them.
func (c *Controller) JobOrder() []uint32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]uint32, len(c.st.order))
	for i, id := range c.st.order {
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
	kept := c.st.tally
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if !kept.built {
		return fmt.Errorf("no tally kept")
	}
	var fresh submitTally
	fresh.build(c.st)
	if !maps.Equal(fresh.byGroup, kept.byGroup) {
		return fmt.Errorf("tally %v, counted %v", kept.byGroup, fresh.byGroup)
	}
	partQOS := c.partQOSLocked()
	kept.count(c.st.Acct, partQOS, map[string]uint32{})
	fresh.count(c.st.Acct, partQOS, map[string]uint32{})
	if !maps.Equal(fresh.byKey, kept.byKey) {
		return fmt.Errorf("limit groups %v, counted %v", kept.byKey, fresh.byKey)
	}
	return nil
}
