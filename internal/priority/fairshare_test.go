package priority

import (
	"math"
	"testing"
	"time"
)

func TestFairShare(t *testing.T) {
	usage := Usage{"b": 100, "c": 300}
	users := []string{"a", "b", "c"}
	classic := FairShare(usage, users, false)
	want := map[string]float64{"a": 1, "b": math.Exp2(-0.75), "c": math.Exp2(-2.25)}
	for u, w := range want {
		if math.Abs(classic[u]-w) > 1e-12 {
			t.Errorf("classic %s: %v, want %v", u, classic[u], w)
		}
	}
	tree := FairShare(usage, users, true)
	for u, w := range map[string]float64{"a": 1, "b": 2.0 / 3, "c": 1.0 / 3} {
		if math.Abs(tree[u]-w) > 1e-12 {
			t.Errorf("fair tree %s: %v, want %v", u, tree[u], w)
		}
	}
	// Equal usage shares a rank; no usage at all: everyone 1.
	tied := FairShare(Usage{"a": 5, "b": 5}, []string{"a", "b", "c"}, true)
	if tied["a"] != tied["b"] || tied["c"] != 1 || tied["a"] != 2.0/3 {
		t.Errorf("ties: %v", tied)
	}
	if f := FairShare(Usage{}, []string{"a"}, false); f["a"] != 1 {
		t.Errorf("no usage: %v", f)
	}
}

func TestDecayAndReset(t *testing.T) {
	u := Usage{"a": 100}
	u.Decay(14*24*time.Hour, 7*24*time.Hour)
	if math.Abs(u["a"]-25) > 1e-9 {
		t.Errorf("two half-lives: %v", u["a"])
	}
	u.Decay(time.Hour, 0)
	if math.Abs(u["a"]-25) > 1e-9 {
		t.Errorf("no half-life decayed: %v", u["a"])
	}
	mon := time.Date(2026, 11, 30, 0, 0, 1, 0, time.UTC) // a Monday
	sun := mon.Add(-2 * time.Second)
	for period, want := range map[string]bool{"DAILY": true, "WEEKLY": true, "MONTHLY": false, "NONE": false} {
		if got := ResetDue(period, sun, mon); got != want {
			t.Errorf("%s across Sunday midnight: %v", period, got)
		}
	}
	if !ResetDue("MONTHLY", sun, time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC)) || ResetDue("QUARTERLY", sun, time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC)) {
		t.Errorf("monthly/quarterly boundaries")
	}
}
