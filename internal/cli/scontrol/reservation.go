package scontrol

import (
	"context"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// showReservations is scontrol_print_res.
func (c *cmd) showReservations(ctx context.Context, val *string) {
	ans, err := readmodel.GetReservations(ctx, c.env.Client)
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		re = fromAnswer(ans.Errors, ans.Status)
	}
	if re != nil {
		c.perror("slurm_load_reservations error", re)
		return
	}
	resvs := ans.Records
	now := c.now().Unix()
	c.printNamed(len(resvs), val, "Reservation", "reservations",
		func(i int) string { return resvs[i].Name },
		func(i int) string { return formatReservation(&resvs[i], c.oneLiner, now, c.timeStr) })
}

// formatReservation prints one reservation as
// slurm_sprint_reservation_info does.
func formatReservation(r *readmodel.Reservation, oneLiner bool, now int64, timeStr func(int64) string) string {
	w := newLineWriter(oneLiner)
	start, end := r.StartTime, r.EndTime
	duration := "N/A"
	if end >= start {
		duration = secs2time(end - start)
	}
	w.printf("ReservationName=%s StartTime=%s EndTime=%s Duration=%s", r.Name, timeStr(start), timeStr(end), duration)
	w.end()
	w.printf("Nodes=%s NodeCnt=%d CoreCnt=%d Features=%s PartitionName=%s Flags=%s",
		orNull(r.NodeList), r.NodeCount, r.CoreCount, orNull(r.Features),
		orNull(r.Partition), strings.Join(r.Flags, ","))
	w.end()
	for _, cs := range r.CoreSpecs {
		w.printf("  NodeName=%s CoreIDs=%s", cs.Node, cs.Cores)
		w.end()
	}
	w.printf("TRES=%s", orNull(r.TRES))
	w.end()
	w.printf("AllowedPartitions=(null) QOS=(null)")
	w.end()
	state := "INACTIVE"
	if start <= now && end >= now {
		state = "ACTIVE"
	}
	w.printf("Users=%s Groups=%s Accounts=%s Licenses=%s State=%s BurstBuffer=%s",
		orNull(r.Users), orNull(r.Groups), orNull(r.Accounts),
		orNull(r.Licenses), state, orNull(r.BurstBuffer))
	w.end()
	if d := r.MaxStartDelay; d != 0 {
		w.printf("MaxStartDelay=%s", secs2time(int64(d)))
	} else {
		w.printf("MaxStartDelay=(null)")
	}
	if oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}

// reservationExists asks the controller whether a reservation exists.
func (c *cmd) reservationExists(ctx context.Context, name string) (bool, *restError) {
	ans, err := readmodel.GetReservation(ctx, c.env.Client, name)
	if err != nil {
		re, _ := fromTransport(err)
		return false, re
	}
	if ans.Failed() {
		return false, fromStatus(0)
	}
	return len(ans.Records) > 0, nil
}

// reservationNames lists the reservations there are (none when the
// answer failed).
func (c *cmd) reservationNames(ctx context.Context) (map[string]bool, error) {
	ans, err := readmodel.GetReservations(ctx, c.env.Client)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if !ans.Failed() {
		for _, r := range ans.Records {
			out[r.Name] = true
		}
	}
	return out, nil
}
