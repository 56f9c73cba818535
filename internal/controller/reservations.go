package controller

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
)

// ReservationSpec is a create or update request; on update only the
// fields marked set change.
type ReservationSpec struct {
	Name string
	// Start zero means now.
	Start    time.Time
	StartSet bool
	// Duration or End bounds the window.
	Duration    time.Duration
	DurationSet bool
	End         time.Time
	EndSet      bool
	Nodes       []string
	NodesSet    bool
	// NodeCount asks for that many nodes, chosen among those free for the
	// whole window.
	NodeCount   int
	Users       []string
	UsersSet    bool
	Accounts    []string
	AccountsSet bool
	Flags       []reservation.Flag
	FlagsSet    bool
}

// purgeCompDefault is how long a PURGE_COMP reservation may sit idle.
const purgeCompDefault = 5 * time.Minute

// Reservations lists the reservations by name.
func (c *Controller) Reservations() []reservation.Reservation {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]reservation.Reservation, 0, len(c.st.Resvs))
	for _, r := range c.st.Resvs {
		out = append(out, cloneResv(r))
	}
	slices.SortFunc(out, func(a, b reservation.Reservation) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Reservation returns one reservation.
func (c *Controller) Reservation(name string) (reservation.Reservation, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r := c.st.Resvs[name]
	if r == nil {
		return reservation.Reservation{}, slurmerr.New(slurmerr.ReservationInvalid, "")
	}
	return cloneResv(r), nil
}

func cloneResv(r *reservation.Reservation) reservation.Reservation {
	out := *r
	out.Nodes = slices.Clone(r.Nodes)
	out.Users = slices.Clone(r.Users)
	out.Accounts = slices.Clone(r.Accounts)
	out.Flags = slices.Clone(r.Flags)
	return out
}

// SetReservation creates a reservation, or updates the one of the same
// name, as scontrol create|update reservation and POST /reservation do.
// It returns the reservation's name (generated when none was given).
func (c *Controller) SetReservation(ctx context.Context, who Identity, spec ReservationSpec) (string, error) {
	if !c.privileged(who) {
		return "", slurmerr.New(slurmerr.AccessDenied, "")
	}
	c.mu.RLock()
	r, err := c.buildReservationLocked(who, spec)
	c.mu.RUnlock()
	if err != nil {
		return "", err
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpResvSet, ResvSet: &ctlstate.ResvSetCmd{Resv: r}}); err != nil {
		return "", err
	}
	c.Kick()
	return r.Name, nil
}

func (c *Controller) buildReservationLocked(who Identity, spec ReservationSpec) (reservation.Reservation, error) {
	now := c.now().Truncate(time.Second)
	var r reservation.Reservation
	old := c.st.Resvs[spec.Name]
	if old != nil {
		r = cloneResv(old)
	} else {
		if !spec.DurationSet && !spec.EndSet {
			return r, slurmerr.New(slurmerr.InvalidTimeValue, "Duration or EndTime must be given")
		}
		if !spec.NodesSet && spec.NodeCount == 0 {
			return r, slurmerr.New(slurmerr.InvalidNodeName, "Nodes or NodeCnt must be given")
		}
		if !spec.UsersSet && !spec.AccountsSet {
			return r, slurmerr.New(slurmerr.ReservationInvalid, "Users or Accounts must be given")
		}
		r.Name = spec.Name
		if r.Name == "" {
			r.Name = c.newReservationName(who.User)
		}
		r.Start = now
	}
	// Moving the start of a reservation keeps its length unless the
	// update gives a new end or duration.
	length := r.Duration()
	if spec.StartSet && !spec.Start.IsZero() {
		r.Start = spec.Start.Truncate(time.Second)
	}
	switch {
	case spec.EndSet:
		r.End = spec.End.Truncate(time.Second)
	case spec.DurationSet:
		r.End = r.Start.Add(spec.Duration)
	default:
		r.End = r.Start.Add(length)
	}
	if !r.End.After(r.Start) {
		return r, slurmerr.New(slurmerr.InvalidTimeValue, "")
	}
	if spec.UsersSet {
		r.Users = spec.Users
	}
	if spec.AccountsSet {
		r.Accounts = spec.Accounts
	}
	if spec.FlagsSet {
		r.Flags = spec.Flags
	}
	if r.Has(reservation.PurgeComp) && r.PurgeAfter == 0 {
		r.PurgeAfter = purgeCompDefault
	}
	switch {
	case spec.NodesSet:
		for _, n := range spec.Nodes {
			if c.nodes[n] == nil {
				return r, slurmerr.New(slurmerr.InvalidNodeName, "")
			}
		}
		r.Nodes = slices.Clone(spec.Nodes)
		if !r.Has(reservation.SpecNodes) {
			r.Flags = append(r.Flags, reservation.SpecNodes)
		}
	case spec.NodeCount > 0:
		picked, err := c.pickNodesLocked(&r, spec.NodeCount)
		if err != nil {
			return r, err
		}
		r.Nodes = picked
		r.Flags = slices.DeleteFunc(r.Flags, func(f reservation.Flag) bool { return f == reservation.SpecNodes })
	}
	if err := c.checkNodesFreeLocked(&r); err != nil {
		return r, err
	}
	r.CoreCount = 0
	for _, n := range r.Nodes {
		r.CoreCount += c.nodes[n].CPUs
	}
	return r, nil
}

// newReservationName is slurmctld's "<user>_<n>".
func (c *Controller) newReservationName(user string) string {
	for i := 1; ; i++ {
		name := user + "_" + strconv.Itoa(i)
		if c.st.Resvs[name] == nil {
			return name
		}
	}
}

// conflictLocked reports whether a node is held over r's window by another
// reservation or (unless r ignores jobs) by a running job.
func (c *Controller) conflictLocked(r *reservation.Reservation, node string) bool {
	for _, o := range c.st.Resvs {
		if o.Name != r.Name && o.HasNode(node) && o.Overlaps(r.Start, r.End) {
			return true
		}
	}
	if r.Has(reservation.IgnoreJobs) {
		return false
	}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.State != job.Running || j.Alloc == nil || j.Req.Reservation == r.Name {
			continue
		}
		if slices.Contains(j.Alloc.NodeNames(), node) && r.Overlaps(j.StartTime, j.EndTime) {
			return true
		}
	}
	return false
}

// checkNodesFreeLocked refuses a window some node of which is held.
func (c *Controller) checkNodesFreeLocked(r *reservation.Reservation) error {
	for _, n := range r.Nodes {
		if c.conflictLocked(r, n) {
			return slurmerr.New(slurmerr.NodesBusy, "")
		}
	}
	return nil
}

// pickNodesLocked chooses count nodes free over r's window, in
// configuration order.
func (c *Controller) pickNodesLocked(r *reservation.Reservation, count int) ([]string, error) {
	var out []string
	for _, name := range c.nodeOrder {
		if len(out) == count {
			break
		}
		if n := c.nodeViewLocked(name); n.Future || n.Down || n.Drain {
			continue
		}
		if !c.conflictLocked(r, name) {
			out = append(out, name)
		}
	}
	if len(out) < count {
		return nil, slurmerr.New(slurmerr.NodesBusy, "")
	}
	return out, nil
}

// DeleteReservation removes a reservation. As in slurmctld, jobs running
// in it carry on.
func (c *Controller) DeleteReservation(ctx context.Context, who Identity, name string) error {
	if !c.privileged(who) {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	c.mu.RLock()
	_, ok := c.st.Resvs[name]
	c.mu.RUnlock()
	if !ok {
		return slurmerr.New(slurmerr.ReservationInvalid, "")
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpResvDel, ResvDel: &ctlstate.ResvDelCmd{Name: name}}); err != nil {
		return err
	}
	c.Kick()
	return nil
}

func (c *Controller) reservationInUseLocked(name string) bool {
	for _, id := range c.st.JobIDs() {
		if j := c.st.Jobs[id]; j.Req.Reservation == name && (j.State == job.Running || j.Completing) {
			return true
		}
	}
	return false
}

// checkReservationLocked checks a submission's --reservation.
func (c *Controller) checkReservationLocked(who Identity, r *job.Request) error {
	if r.Reservation == "" {
		return nil
	}
	resv := c.st.Resvs[r.Reservation]
	if resv == nil {
		return slurmerr.New(slurmerr.ReservationInvalid, "")
	}
	if !c.privileged(who) && !resv.Admits(r.UserName, r.Account) {
		return slurmerr.New(slurmerr.ReservationAccess, "")
	}
	return nil
}

// maintainReservations moves repeating reservations on to their next
// window, removes those whose window is over, and removes PURGE_COMP ones
// idle for their purge time after a job used them.
func (c *Controller) maintainReservations(ctx context.Context) {
	now := c.now()
	var set []reservation.Reservation
	var del []string
	c.mu.RLock()
	none := len(c.st.Resvs) == 0
	c.mu.RUnlock()
	if none {
		return
	}
	c.mu.Lock()
	for name, r := range c.st.Resvs {
		inUse := c.reservationInUseLocked(name)
		if inUse {
			c.resvUsed[name] = now
		}
		switch {
		case inUse:
		case r.Has(reservation.Daily) || r.Has(reservation.Weekly):
			next := cloneResv(r)
			if next.Roll(now) {
				set = append(set, next)
			}
		case !now.Before(r.End):
			del = append(del, name)
		case r.Has(reservation.PurgeComp) && !c.resvUsed[name].IsZero() && now.Sub(c.resvUsed[name]) >= r.PurgeAfter:
			del = append(del, name)
		}
	}
	c.mu.Unlock()
	for i := range set {
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpResvSet, ResvSet: &ctlstate.ResvSetCmd{Resv: set[i]}}); err != nil {
			c.logger.Error("move reservation on", "reservation", set[i].Name, "err", err)
		}
	}
	for _, name := range del {
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpResvDel, ResvDel: &ctlstate.ResvDelCmd{Name: name}}); err != nil {
			c.logger.Error("remove reservation", "reservation", name, "err", err)
		}
		c.mu.Lock()
		delete(c.resvUsed, name)
		c.mu.Unlock()
	}
}
