package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestReservations drives scontrol create/show/update/delete reservation
// and jobs in and around one: a reserved node is kept for the
// reservation's jobs; a job naming it waits with Slurm's reason; other
// jobs use the other node.
func TestReservations(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "SchedulerParameters=bf_interval=1\n"})
	mustOut := func(want string, args ...string) {
		t.Helper()
		if got := c.MustRun("", "scontrol", args...); got != want {
			t.Errorf("scontrol %v: %q, want %q", args, got, want)
		}
	}
	fails := func(wantErr string, args ...string) {
		t.Helper()
		r := c.Run("", "scontrol", args...)
		if r.Code != 1 || r.Stderr != wantErr {
			t.Errorf("scontrol %v: exit %d stderr %q, want 1 %q", args, r.Code, r.Stderr, wantErr)
		}
	}
	mustOut("Reservation created: train\n", "create", "reservation", "ReservationName=train", "StartTime=now", "Duration=60", "Nodes=n1", "Users=root")
	fails("Error creating the reservation: Duplicate reservation name\n", "create", "reservation", "ReservationName=train", "StartTime=now", "Duration=60", "Nodes=n2", "Users=root")
	fails("scontrol: error: An end time or duration must be given.  No reservation created.\n", "create", "reservation", "StartTime=now", "Nodes=n2", "Users=root")
	fails("scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created.\n", "create", "reservation", "StartTime=now", "Duration=10", "Nodes=n2")
	fails("Error creating the reservation: Requested nodes are busy\n", "create", "reservation", "ReservationName=other", "StartTime=now", "Duration=10", "Nodes=n1", "Users=root")
	fails("Error creating the reservation: Invalid node name specified\n", "create", "reservation", "StartTime=now", "Duration=10", "Nodes=n9", "Users=root")

	show := c.MustRun("", "scontrol", "show", "reservation", "train")
	lines := strings.Split(show, "\n")
	if !strings.HasPrefix(lines[0], "ReservationName=train StartTime=") || !strings.HasSuffix(lines[0], " Duration=01:00:00") ||
		lines[1] != "   Nodes=n1 NodeCnt=1 CoreCnt=8 Features=(null) PartitionName=(null) Flags=SPEC_NODES" ||
		!strings.Contains(show, "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE") {
		t.Errorf("scontrol show reservation:\n%s", show)
	}

	if r := c.Run("", "sbatch", "--reservation=nosuch", "--wrap", "true"); r.Code != 1 || r.Stderr != "sbatch: error: Batch job submission failed: Requested reservation is invalid\n" {
		t.Errorf("sbatch into an unknown reservation: %+v", r)
	}
	named := c.Submit("", "-w", "n1", "--wrap", "true")
	member := c.Submit("", "--reservation=train", "--wrap", "sleep 1")
	other := c.Submit("", "--wrap", "true")
	if j := c.WaitState(member, "COMPLETED", 20*time.Second); j.Nodes.Or("") != "n1" {
		t.Errorf("job in the reservation ran on %q", j.Nodes.Or(""))
	}
	if j := c.WaitState(other, "COMPLETED", 20*time.Second); j.Nodes.Or("") != "n2" {
		t.Errorf("job outside the reservation ran on %q", j.Nodes.Or(""))
	}
	if got := c.MustRun("", "squeue", "-h", "-j", named, "-o", "%T|%r"); got != "PENDING|ReqNodeNotAvail, May be reserved for other job\n" {
		t.Errorf("job naming the reserved node: %q", got)
	}
	if got := c.MustRun("", "squeue", "-h", "-t", "all", "-j", member, "-o", "%v"); got != "train\n" {
		t.Errorf("squeue %%v: %q", got)
	}

	mustOut("Reservation updated.\n", "update", "ReservationName=train", "Duration=30")
	if show := c.MustRun("", "scontrol", "show", "res", "train"); !strings.Contains(show, " Duration=00:30:00\n") {
		t.Errorf("after the update:\n%s", show)
	}
	fails("Error updating the reservation: Requested reservation is invalid\nslurm_update error: Requested reservation is invalid\n", "update", "ReservationName=nosuch", "Duration=30")
	mustOut("", "delete", "ReservationName=train")
	fails("delete_reservation reservation: Requested reservation is invalid\n", "delete", "reservation", "train")
	c.WaitState(named, "COMPLETED", 20*time.Second)

	// A reservation by node count, in an hour: named after its creator.
	mustOut("Reservation created: root_1\n", "create", "reservation", "StartTime=now+1hour", "Duration=60", "NodeCnt=2", "Users=root")
	if show := c.MustRun("", "scontrol", "show", "reservation"); !strings.Contains(show, "Nodes=n[1-2] NodeCnt=2 CoreCnt=16") || !strings.Contains(show, "State=INACTIVE") {
		t.Errorf("node-count reservation:\n%s", show)
	}
	// A job that would run into it waits; a short one runs beside it
	// (backfill plans around the reservation).
	long := c.Submit("", "-t", "120", "--wrap", "true")
	short := c.Submit("", "-t", "30", "--wrap", "true")
	c.WaitState(short, "COMPLETED", 20*time.Second)
	if st := c.State(long); st != "PENDING" {
		t.Errorf("job overlapping the reservation: %s", st)
	}
}
