package scontrol

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// resvRequest is a parsed create or update reservation line.
type resvRequest struct {
	desc v0044.V0044ReservationDescMsg
	// hasEnd and hasUsers track what scontrol itself insists on before
	// asking the controller to create.
	hasEnd, hasUsers bool
}

// parseReservation reads the Key=value words of scontrol's create and
// update reservation (scontrol's parse_resv_params), keys matched
// case-insensitively by their shortest unambiguous prefix.
func parseReservation(argv []string, now time.Time) (*resvRequest, *updateError) {
	r := &resvRequest{}
	d := &r.desc
	for _, word := range argv {
		key, val, ok := strings.Cut(word, "=")
		if !ok {
			if abbrev(word, "reservation", 3) || abbrev(word, "reservationname", 3) {
				continue
			}
			return nil, errorMsg("Unknown parameter %s.  Request aborted", word)
		}
		switch {
		case abbrev(key, "ReservationName", 3):
			d.Name = v0044.NewOptString(val)
		case abbrev(key, "StartTime", 1):
			t, err := timefmt.ParseTime(val, now)
			if err != nil {
				return nil, errorMsg("Invalid start time %s.  Request aborted", val)
			}
			d.StartTime = u64Struct(uint64(t.Unix()))
		case abbrev(key, "EndTime", 1):
			t, err := timefmt.ParseTime(val, now)
			if err != nil {
				return nil, errorMsg("Invalid end time %s.  Request aborted", val)
			}
			d.EndTime = u64Struct(uint64(t.Unix()))
			r.hasEnd = true
		case abbrev(key, "Duration", 1):
			l, err := timefmt.ParseLimit(val)
			if err != nil {
				return nil, errorMsg("Invalid duration %s.  Request aborted", val)
			}
			if l.Infinite {
				d.Duration = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Infinite: v0044.NewOptBool(true)})
			} else {
				d.Duration = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(l.Minutes))})
			}
			r.hasEnd = true
		case abbrev(key, "Nodes", 5):
			if _, err := hostlist.Expand(val); err != nil {
				return nil, errorMsg("Invalid node list %s.  Request aborted", val)
			}
			d.NodeList = v0044.V0044HostlistString{val}
		case abbrev(key, "NodeCnt", 5), abbrev(key, "NodeCount", 5):
			n, err := strconv.ParseUint(val, 10, 31)
			if err != nil || n == 0 {
				return nil, errorMsg("Invalid node count %s.  Request aborted", val)
			}
			d.NodeCount = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(n))})
		case abbrev(key, "Users", 1):
			d.Users = v0044.V0044CsvString(getopt.SplitList(val))
			r.hasUsers = true
		case abbrev(key, "Accounts", 1):
			d.Accounts = v0044.V0044CsvString(getopt.SplitList(val))
			r.hasUsers = true
		case abbrev(key, "Flags", 2):
			d.Flags = []v0044.V0044ReservationDescMsgFlagsItem{}
			for _, f := range getopt.SplitList(val) {
				d.Flags = append(d.Flags, v0044.V0044ReservationDescMsgFlagsItem(strings.ToUpper(f)))
			}
		default:
			return nil, errorMsg("Unknown parameter %s.  Request aborted", word)
		}
	}
	return r, nil
}

// postReservation sends a create or update; it returns Slurm's error
// message on refusal.
func (c *cmd) postReservation(ctx context.Context, d *v0044.V0044ReservationDescMsg) (string, bool) {
	res, err := c.env.Client.SlurmV0044PostReservation(ctx, v0044.NewOptV0044ReservationDescMsg(*d))
	if err != nil {
		re, _ := fromTransport(err)
		return re.Message, false
	}
	var errs v0044.V0044OpenapiErrors
	status := 200
	switch r := res.(type) {
	case *v0044.V0044OpenapiReservationModResp:
		errs = r.Errors
	case *v0044.V0044OpenapiReservationModRespStatusCode:
		errs, status = r.Response.Errors, r.StatusCode
	}
	if re := fromErrors(errs, status); re != nil {
		return re.Message, false
	}
	if status != 200 {
		return fromStatus(status).Message, false
	}
	return "", true
}

// createReservation is scontrol create reservation.
func (c *cmd) createReservation(ctx context.Context, argv []string) {
	r, perr := parseReservation(argv, c.now())
	if perr != nil {
		c.report(perr)
		return
	}
	if !r.hasEnd {
		c.report(errorMsg("An end time or duration must be given.  No reservation created."))
		return
	}
	if !r.hasUsers {
		c.report(errorMsg("Either Users/Groups and/or Accounts must be specified.  No reservation created."))
		return
	}
	if name := r.desc.Name.Or(""); name != "" {
		exists, re := c.reservationExists(ctx, name)
		if re != nil {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "Error creating the reservation: %s\n", re.Message)
			return
		}
		if exists {
			c.exitCode = 1
			fmt.Fprintln(c.env.Stderr, "Error creating the reservation: Duplicate reservation name")
			return
		}
	}
	before, _ := c.reservationNames(ctx)
	if msg, ok := c.postReservation(ctx, &r.desc); !ok {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "Error creating the reservation: %s\n", msg)
		return
	}
	name := r.desc.Name.Or("")
	if name == "" {
		// The controller named it: the one that was not there before.
		after, _ := c.reservationNames(ctx)
		for n := range after {
			if !before[n] {
				name = n
			}
		}
	}
	fmt.Fprintf(c.env.Stdout, "Reservation created: %s\n", name)
}

// updateReservation is scontrol update ReservationName=...
func (c *cmd) updateReservation(ctx context.Context, argv []string) {
	r, perr := parseReservation(argv, c.now())
	if perr != nil {
		c.report(perr)
		return
	}
	fail := func(msg string) {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "Error updating the reservation: %s\nslurm_update error: %s\n", msg, msg)
	}
	name := r.desc.Name.Or("")
	exists, re := c.reservationExists(ctx, name)
	if re != nil {
		fail(re.Message)
		return
	}
	if !exists {
		fail("Requested reservation is invalid")
		return
	}
	if msg, ok := c.postReservation(ctx, &r.desc); !ok {
		fail(msg)
		return
	}
	fmt.Fprintln(c.env.Stdout, "Reservation updated.")
}

// deleteReservation is scontrol delete ReservationName=NAME (or
// "delete reservation NAME").
func (c *cmd) deleteReservation(ctx context.Context, argv []string) {
	name := ""
	for i := 0; i < len(argv); i++ {
		key, val, ok := strings.Cut(argv[i], "=")
		switch {
		case ok && abbrev(key, "ReservationName", 3):
			name = val
		case !ok && (abbrev(key, "reservation", 3) || abbrev(key, "reservationname", 3)) && i+1 < len(argv):
			name = argv[i+1]
			i++
		default:
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "invalid entity:%s for keyword:delete\n", argv[i])
			return
		}
	}
	if name == "" {
		c.exitCode = 1
		fmt.Fprintln(c.env.Stderr, "too few arguments for keyword:delete")
		return
	}
	res, err := c.env.Client.SlurmV0044DeleteReservation(ctx, v0044.SlurmV0044DeleteReservationParams{ReservationName: name})
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiResp:
			re = fromErrors(r.Errors, 200)
		case *v0044.V0044OpenapiRespStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		}
	}
	if re != nil {
		c.perror("delete_reservation "+argv[0], re)
	}
}
