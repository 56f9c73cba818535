// Package reservation is the domain model of an advance reservation: a set
// of nodes held for some users or accounts over a window of time, as
// scontrol create reservation makes one. No I/O, no wire types.
package reservation

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Flag is a reservation flag, spelled as Slurm spells it.
type Flag string

// The flags Drover acts on. SPEC_NODES is set by Drover when the nodes
// were named (not counted).
const (
	Maint      Flag = "MAINT"
	IgnoreJobs Flag = "IGNORE_JOBS"
	Flex       Flag = "FLEX"
	Daily      Flag = "DAILY"
	Weekly     Flag = "WEEKLY"
	PurgeComp  Flag = "PURGE_COMP"
	SpecNodes  Flag = "SPEC_NODES"
)

// known are the flags accepted from users.
var known = []Flag{Maint, IgnoreJobs, Flex, Daily, Weekly, PurgeComp}

// ParseFlags reads a comma-separated flag list ("MAINT,IGNORE_JOBS"),
// case-insensitively.
func ParseFlags(s string) ([]Flag, error) {
	var out []Flag
	for _, f := range strings.Split(s, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if !slices.Contains(known, Flag(f)) {
			return nil, fmt.Errorf("unsupported reservation flag %q", f)
		}
		if !slices.Contains(out, Flag(f)) {
			out = append(out, Flag(f))
		}
	}
	return out, nil
}

// Reservation is one advance reservation.
type Reservation struct {
	Name  string    `json:"name"`
	Start time.Time `json:"start"`
	// End is when the window closes (a DAILY or WEEKLY one then moves on
	// by a day or a week).
	End   time.Time `json:"end"`
	Nodes []string  `json:"nodes"`
	// Users and Accounts may use the reservation (either list admits).
	Users    []string `json:"users,omitempty"`
	Accounts []string `json:"accounts,omitempty"`
	Flags    []Flag   `json:"flags,omitempty"`
	// PurgeAfter is PURGE_COMP's idle time before the reservation is
	// removed (Slurm's default 5 minutes).
	PurgeAfter time.Duration `json:"purge_after,omitempty"`
	// CoreCount is the CPUs of its nodes, for display (CoreCnt, TRES).
	CoreCount uint32 `json:"core_count"`
}

// Has reports whether a flag is set.
func (r *Reservation) Has(f Flag) bool { return slices.Contains(r.Flags, f) }

// Duration is the window's length.
func (r *Reservation) Duration() time.Duration { return r.End.Sub(r.Start) }

// Active reports whether the window is open at t.
func (r *Reservation) Active(t time.Time) bool { return !t.Before(r.Start) && t.Before(r.End) }

// Overlaps reports whether the window meets [from, to).
func (r *Reservation) Overlaps(from, to time.Time) bool {
	return from.Before(r.End) && r.Start.Before(to)
}

// Admits reports whether a user (by name) or one of the accounts may run
// jobs in the reservation.
func (r *Reservation) Admits(user, account string) bool {
	return slices.Contains(r.Users, user) || (account != "" && slices.Contains(r.Accounts, account))
}

// HasNode reports whether the reservation holds a node.
func (r *Reservation) HasNode(name string) bool { return slices.Contains(r.Nodes, name) }

// Roll moves a DAILY or WEEKLY reservation whose window closed by now to
// its next window, and reports whether it moved.
func (r *Reservation) Roll(now time.Time) bool {
	var step time.Duration
	switch {
	case r.Has(Daily):
		step = 24 * time.Hour
	case r.Has(Weekly):
		step = 7 * 24 * time.Hour
	default:
		return false
	}
	moved := false
	for !now.Before(r.End) {
		r.Start, r.End = r.Start.Add(step), r.End.Add(step)
		moved = true
	}
	return moved
}
