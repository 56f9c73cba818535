package reservation

import (
	"slices"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	got, err := ParseFlags("maint, IGNORE_JOBS,,Maint,daily")
	if err != nil || !slices.Equal(got, []Flag{Maint, IgnoreJobs, Daily}) {
		t.Errorf("got %v %v", got, err)
	}
	if _, err := ParseFlags("MAINT,BOGUS"); err == nil || err.Error() != `unsupported reservation flag "BOGUS"` {
		t.Errorf("bad flag: %v", err)
	}
}

func TestWindow(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	r := Reservation{Name: "r", Start: t0, End: t0.Add(time.Hour), Users: []string{"alice"}, Accounts: []string{"ml"}, Nodes: []string{"n1"}}
	if !r.Active(t0) || r.Active(t0.Add(time.Hour)) || r.Active(t0.Add(-time.Second)) {
		t.Errorf("Active is not [start, end)")
	}
	if !r.Overlaps(t0.Add(-time.Minute), t0.Add(time.Second)) || r.Overlaps(t0.Add(time.Hour), t0.Add(2*time.Hour)) {
		t.Errorf("Overlaps is not half-open")
	}
	if !r.Admits("alice", "") || !r.Admits("bob", "ml") || r.Admits("bob", "") {
		t.Errorf("Admits")
	}
	if r.Roll(t0.Add(3 * time.Hour)) {
		t.Errorf("a one-off reservation rolled")
	}
	r.Flags = []Flag{Daily}
	if !r.Roll(t0.Add(49*time.Hour)) || !r.Start.Equal(t0.Add(72*time.Hour)) || r.Duration() != time.Hour {
		t.Errorf("daily roll: %v..%v", r.Start.Sub(t0), r.End.Sub(t0))
	}
	r.Flags = []Flag{Weekly}
	start := r.Start
	if !r.Roll(r.End) || !r.Start.Equal(start.Add(7*24*time.Hour)) {
		t.Errorf("weekly roll: %v", r.Start.Sub(start))
	}
}

func FuzzParseFlags(f *testing.F) {
	f.Add("MAINT,IGNORE_JOBS")
	f.Add(",,flex ,weekly,")
	f.Fuzz(func(t *testing.T, s string) {
		flags, err := ParseFlags(s)
		if err != nil {
			return
		}
		for _, fl := range flags {
			if !slices.Contains(known, fl) {
				t.Fatalf("%q gave unknown flag %q", s, fl)
			}
		}
	})
}
