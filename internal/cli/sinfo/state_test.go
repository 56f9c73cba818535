package sinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func TestStateNames(t *testing.T) {
	type names struct{ Compact, Long, Complete string }
	tests := map[string]struct {
		rest []v0044.V0044NodeStateItem
		want names
	}{
		"idle":              {[]v0044.V0044NodeStateItem{"IDLE"}, names{"IDLE", "IDLE", "IDLE"}},
		"drained":           {[]v0044.V0044NodeStateItem{"IDLE", "DRAIN"}, names{"DRAIN", "DRAINED", "IDLE+DRAIN"}},
		"draining":          {[]v0044.V0044NodeStateItem{"ALLOCATED", "DRAIN"}, names{"DRNG", "DRAINING", "ALLOCATED+DRAIN"}},
		"mixed draining":    {[]v0044.V0044NodeStateItem{"MIXED", "DRAIN"}, names{"DRNG", "DRAINING", "MIXED+DRAIN"}},
		"down":              {[]v0044.V0044NodeStateItem{"DOWN", "NOT_RESPONDING"}, names{"DOWN*", "DOWN*", "DOWN+NOT_RESPONDING"}},
		"drained down":      {[]v0044.V0044NodeStateItem{"DOWN", "DRAIN", "NOT_RESPONDING"}, names{"DRAIN*", "DRAINED*", "DOWN+DRAIN+NOT_RESPONDING"}},
		"completing":        {[]v0044.V0044NodeStateItem{"IDLE", "COMPLETING"}, names{"COMP", "COMPLETING", "IDLE+COMPLETING"}},
		"alloc completing":  {[]v0044.V0044NodeStateItem{"ALLOCATED", "COMPLETING"}, names{"ALLOC+", "ALLOCATED+", "ALLOCATED+COMPLETING"}},
		"maint":             {[]v0044.V0044NodeStateItem{"IDLE", "MAINTENANCE"}, names{"MAINT", "MAINT", "IDLE+MAINTENANCE"}},
		"reserved":          {[]v0044.V0044NodeStateItem{"IDLE", "RESERVED"}, names{"RESV", "RESERVED", "IDLE+RESERVED"}},
		"planned":           {[]v0044.V0044NodeStateItem{"IDLE", "PLANNED"}, names{"PLND", "PLANNED", "IDLE+PLANNED"}},
		"mixed planned":     {[]v0044.V0044NodeStateItem{"MIXED", "PLANNED"}, names{"MIX-", "MIXED-", "MIXED+PLANNED"}},
		"powered down":      {[]v0044.V0044NodeStateItem{"IDLE", "POWERED_DOWN"}, names{"IDLE~", "IDLE~", "IDLE+POWERED_DOWN"}},
		"fail":              {[]v0044.V0044NodeStateItem{"IDLE", "FAIL"}, names{"FAIL", "FAIL", "IDLE+FAIL"}},
		"failing":           {[]v0044.V0044NodeStateItem{"ALLOCATED", "FAIL"}, names{"FAILG", "FAILING", "ALLOCATED+FAIL"}},
		"unknown":           {[]v0044.V0044NodeStateItem{"UNKNOWN", "NOT_RESPONDING"}, names{"UNK*", "UNKNOWN*", "UNKNOWN+NOT_RESPONDING"}},
		"future":            {[]v0044.V0044NodeStateItem{"FUTURE"}, names{"FUTR", "FUTURE", "FUTURE"}},
		"reboot":            {[]v0044.V0044NodeStateItem{"IDLE", "REBOOT_REQUESTED"}, names{"BOOT", "REBOOT", "IDLE+REBOOT_REQUESTED"}},
		"alloc reboot":      {[]v0044.V0044NodeStateItem{"ALLOCATED", "REBOOT_REQUESTED"}, names{"ALLOC@", "ALLOCATED@", "ALLOCATED+REBOOT_REQUESTED"}},
		"invalid reg":       {[]v0044.V0044NodeStateItem{"IDLE", "INVALID_REG"}, names{"INVAL", "INVAL", "IDLE+INVALID_REG"}},
		"mixed powering up": {[]v0044.V0044NodeStateItem{"MIXED", "POWERING_UP"}, names{"MIX#", "MIXED#", "MIXED+POWERING_UP"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := stateFromREST(tc.rest)
			got := names{s.Compact(), s.String(), s.Complete()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state %v (-want +got):\n%s", tc.rest, diff)
			}
		})
	}
}

func TestStateIDs(t *testing.T) {
	tests := map[string]struct {
		word string
		want nodeState
		ok   bool
	}{
		"idle":      {"idle", stateIdle, true},
		"abbrev":    {"al", stateAllocated, true},
		"compact":   {"mix", stateMixed, true},
		"drain":     {"drain", flagDrain, true},
		"drained":   {"drained", flagDrain | stateIdle, true},
		"draining":  {"drng", flagDrain | stateAllocated, true},
		"resv":      {"RESV", flagReserved, true},
		"no resp":   {"no_respond", flagNoRespond, true},
		"maint":     {"maint", flagMaint, true},
		"planned":   {"plnd", flagPlanned, true},
		"power up":  {"power_up", flagPowerUp, true},
		"bogus":     {"bogus", 0, false},
		"completed": {"comp", flagCompleting, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := stateID(tc.word)
			if ok != tc.ok || got != tc.want {
				t.Errorf("stateID(%q) = %#x, %v; want %#x, %v", tc.word, got, ok, tc.want, tc.ok)
			}
		})
	}
}
