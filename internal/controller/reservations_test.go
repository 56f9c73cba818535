package controller_test

import (
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
)

func TestReservationLifecycle(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	spec := controller.ReservationSpec{Name: "daily", Duration: time.Hour, DurationSet: true, Nodes: []string{"n1"}, NodesSet: true,
		Users: []string{"alice"}, UsersSet: true, Flags: []reservation.Flag{reservation.Daily}, FlagsSet: true}
	if _, err := c.Ctl.SetReservation(ctx, ctltest.Alice, spec); slurmerr.CodeOf(err) != slurmerr.AccessDenied {
		t.Errorf("a user created a reservation: %v", err)
	}
	if _, err := c.Ctl.SetReservation(ctx, ctltest.Root, spec); err != nil {
		t.Fatal(err)
	}
	once := controller.ReservationSpec{Duration: 10 * time.Minute, DurationSet: true, NodeCount: 1, Users: []string{"root"}, UsersSet: true}
	name, err := c.Ctl.SetReservation(ctx, ctltest.Root, once)
	if err != nil || name != "root_1" {
		t.Fatalf("generated name %q, %v", name, err)
	}
	if r, _ := c.Ctl.Reservation(name); len(r.Nodes) != 1 || r.Nodes[0] != "n2" {
		t.Errorf("node-count reservation took %v, want n2 (n1 is held)", r.Nodes)
	}
	// Moving its start keeps its length.
	later := c.Now().Add(2 * time.Hour)
	if _, err := c.Ctl.SetReservation(ctx, ctltest.Root, controller.ReservationSpec{Name: name, Start: later, StartSet: true}); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.Ctl.Reservation(name); !r.Start.Equal(later.Truncate(time.Second)) || r.Duration() != 10*time.Minute {
		t.Errorf("moved reservation: %v for %v", r.Start, r.Duration())
	}
	// Only its users may submit into it.
	if _, err := c.Ctl.Submit(ctx, ctltest.Bob, controller.Submission{Req: ctltest.Request(func(r *job.Request) { r.Reservation = "daily" })}); slurmerr.CodeOf(err) != slurmerr.ReservationAccess {
		t.Errorf("bob into alice's reservation: %v", err)
	}
	// Both survive a restart; 25 hours on, the daily one's window of today
	// has just closed too, so it is the day after's, and the one-off one
	// is gone.
	start, _ := c.Ctl.Reservation("daily")
	c.Restart()
	c.Clock.Advance(25 * time.Hour)
	c.Ctl.MaintainReservations(ctx)
	r, err := c.Ctl.Reservation("daily")
	if err != nil || !r.Start.Equal(start.Start.Add(48*time.Hour)) {
		t.Errorf("daily reservation after a day: %v (%v)", r.Start.Sub(start.Start), err)
	}
	if !r.End.After(c.Now()) {
		t.Errorf("daily reservation's window %v..%v is behind now", r.Start, r.End)
	}
	if _, err := c.Ctl.Reservation(name); slurmerr.CodeOf(err) != slurmerr.ReservationInvalid {
		t.Errorf("expired reservation still there: %v", err)
	}
	if err := c.Ctl.DeleteReservation(ctx, ctltest.Root, "daily"); err != nil {
		t.Fatal(err)
	}
	if err := c.Ctl.DeleteReservation(ctx, ctltest.Root, "daily"); slurmerr.CodeOf(err) != slurmerr.ReservationInvalid {
		t.Errorf("second delete: %v", err)
	}
}
