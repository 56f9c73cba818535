package gres

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHealthPolicy(t *testing.T) {
	p := DefaultHealthPolicy()
	tests := []struct {
		ev     HealthEvent
		fatal  bool
		reason string
	}{
		{HealthEvent{Index: 3, XID: 79}, true, "GPU 3 XID 79: GPU has fallen off the bus"},
		{HealthEvent{Index: 0, XID: 13}, false, "GPU 0 XID 13"},
		{HealthEvent{Index: 2, XID: 31}, false, "GPU 2 XID 31"},
		{HealthEvent{Index: 1, XID: 999}, true, "GPU 1 XID 999"},
		{HealthEvent{Index: 5, DoubleBitECC: true}, true, "GPU 5: double-bit ECC error"},
		{HealthEvent{Index: -1, Lost: true}, true, "GPU lost"},
		{HealthEvent{Index: 4}, false, "GPU 4: unknown event"},
	}
	for _, tt := range tests {
		if got := p.Fatal(tt.ev); got != tt.fatal {
			t.Errorf("Fatal(%+v) = %v, want %v", tt.ev, got, tt.fatal)
		}
		if got := tt.ev.Reason(); got != tt.reason {
			t.Errorf("Reason(%+v) = %q, want %q", tt.ev, got, tt.reason)
		}
	}
}

func TestParseXIDList(t *testing.T) {
	got, err := ParseXIDList(" 13, 31,,43 ")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{13, 31, 43}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"x", "-1", "99999999999"} {
		if _, err := ParseXIDList(bad); err == nil {
			t.Errorf("ParseXIDList(%q) succeeded", bad)
		}
	}
}
