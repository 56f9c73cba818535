package sinfo

import "testing"

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
