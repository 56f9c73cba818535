package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseState(t *testing.T) {
	tests := map[string]struct {
		name   string
		want   State
		wantOK bool
	}{
		"long":             {name: "running", want: StateRunning, wantOK: true},
		"compact":          {name: "PD", want: StatePending, wantOK: true},
		"mixed case":       {name: "Node_Fail", want: StateNodeFail, wantOK: true},
		"oom compact":      {name: "oom", want: StateOutOfMemory, wantOK: true},
		"flag":             {name: "completing", want: FlagCompleting, wantOK: true},
		"flag compact":     {name: "CG", want: FlagCompleting, wantOK: true},
		"requeued":         {name: "REQUEUED", want: FlagRequeue, wantOK: true},
		"expediting":       {name: "expediting", want: FlagExpediting, wantOK: true},
		"unknown":          {name: "bogus", wantOK: false},
		"empty":            {name: "", wantOK: false},
		"all is not state": {name: "all", wantOK: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseState(tc.name)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("ParseState(%q) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestStateNames(t *testing.T) {
	tests := map[string]struct {
		state         State
		long, compact string
	}{
		"pending":           {state: StatePending, long: "PENDING", compact: "PD"},
		"completing wins":   {state: StateRunning | FlagCompleting, long: "COMPLETING", compact: "CG"},
		"stage out":         {state: StateCompleted | FlagStageOut, long: "STAGE_OUT", compact: "SO"},
		"expediting":        {state: StatePending | FlagExpediting, long: "EXPEDITING", compact: "PD"},
		"launch failed":     {state: StatePending | FlagLaunchFailed, long: "PENDING", compact: "PD"},
		"unknown base":      {state: 0x42, long: "?", compact: "?"},
		"requeue hold":      {state: StatePending | FlagRequeueHold, long: "REQUEUE_HOLD", compact: "RH"},
		"out of memory":     {state: StateOutOfMemory, long: "OUT_OF_MEMORY", compact: "OOM"},
		"resv del hold":     {state: StatePending | FlagResvDelHold, long: "RESV_DEL_HOLD", compact: "RD"},
		"signaling running": {state: StateRunning | FlagSignaling, long: "SIGNALING", compact: "SI"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.state.String(); got != tc.long {
				t.Errorf("String() = %q, want %q", got, tc.long)
			}
			if got := tc.state.Compact(); got != tc.compact {
				t.Errorf("Compact() = %q, want %q", got, tc.compact)
			}
		})
	}
}

func TestStateFromWire(t *testing.T) {
	tests := map[string]struct {
		items []string
		want  State
	}{
		"base":          {items: []string{"RUNNING"}, want: StateRunning},
		"base and flag": {items: []string{"CANCELLED", "COMPLETING"}, want: StateCancelled | FlagCompleting},
		"requeued":      {items: []string{"PENDING", "REQUEUED", "LAUNCH_FAILED"}, want: FlagRequeue | FlagLaunchFailed},
		"unknown":       {items: []string{"WHATEVER"}, want: StatePending},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := StateFromWire(tc.items); got != tc.want {
				t.Errorf("StateFromWire(%q) = %#x, want %#x", tc.items, got, tc.want)
			}
		})
	}
}

func TestStateNamesList(t *testing.T) {
	want := []string{"pending", "running", "suspended", "completed", "cancelled", "failed", "timeout",
		"node_fail", "preempted", "boot_fail", "deadline", "out_of_memory", "completing", "configuring",
		"expediting", "resizing", "resv_del_hold", "requeued", "requeue_fed", "requeue_hold", "revoked",
		"signaling", "special_exit", "stage_out", "stopped"}
	if diff := cmp.Diff(want, StateNames()); diff != "" {
		t.Errorf("StateNames (-want +got):\n%s", diff)
	}
	for _, n := range StateNames() {
		if _, ok := ParseState(n); !ok {
			t.Errorf("ParseState(%q) fails for a listed name", n)
		}
	}
}
