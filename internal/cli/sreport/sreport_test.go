package sreport

import (
	"testing"
	"time"
)

func TestParseRequestPeriod(t *testing.T) {
	now := time.Date(2026, 12, 6, 21, 7, 30, 0, time.UTC)
	for name, tc := range map[string]struct {
		words      []string
		start, end string
	}{
		"default: yesterday":      {nil, "2026-12-05T00:00:00", "2026-12-05T23:59:59"},
		"end clipped to the hour": {[]string{"start=2026-12-01", "end=2026-12-07"}, "2026-12-01T00:00:00", "2026-12-06T20:59:59"},
		"start on the hour":       {[]string{"start=2026-12-06T10:45", "end=2026-12-06T12:30"}, "2026-12-06T10:00:00", "2026-12-06T11:59:59"},
		"relative":                {[]string{"start=now-3hours", "end=now"}, "2026-12-06T18:00:00", "2026-12-06T20:59:59"},
	} {
		r, err := parseRequest(tc.words, now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := r.period(); got != tc.start+" - "+tc.end {
			t.Errorf("%s: %s, want %s - %s", name, got, tc.start, tc.end)
		}
	}
	r, _ := parseRequest([]string{"start=2026-12-01", "end=2026-12-07"}, now)
	if r.seconds() != 507600 {
		t.Errorf("seconds %d, want 507600 (real sreport's)", r.seconds())
	}
	for _, bad := range [][]string{{"start=garbage"}, {"bogus=1"}, {"TopCount=0"}, {"Grouping=50,20"}, {"Grouping="}} {
		if _, err := parseRequest(bad, now); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]string{"": "600", "s": "36000", "hours": "10", "p": "25.00%", "minper": "600(25.00%)", "HourPer": "10(25.00%)"} {
		u, err := parseUnits(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := u.format(36000, 144000); got != want {
			t.Errorf("-t %q: %q, want %q", in, got, want)
		}
	}
	if _, err := parseUnits("fortnights"); err == nil || err.Error() != "unknown time format fortnights" {
		t.Errorf("bad unit: %v", err)
	}
	if u, _ := parseUnits("percent"); u.title("CPU ") != "Percentage of Total" {
		t.Errorf("title %q", u.title("CPU "))
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"start=now-1day", "Grouping=1,2,3", "TopCount=x", "format=Cluster%20"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 6, 21, 7, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := parseRequest([]string{s}, now); err == nil && !r.start.Before(r.end) {
			t.Fatalf("%q: period %s", s, r.period())
		}
	})
}
