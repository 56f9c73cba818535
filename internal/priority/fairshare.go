package priority

import (
	"math"
	"slices"
	"time"
)

// Usage is each user's decayed usage: billing-seconds (CPU-seconds
// unless TRESBillingWeights say otherwise), halved every
// PriorityDecayHalfLife.
type Usage map[string]float64

// Decay ages usage by elapsed under a half-life (0: no decay).
func (u Usage) Decay(elapsed, halfLife time.Duration) {
	if halfLife <= 0 || elapsed <= 0 {
		return
	}
	k := math.Exp2(-float64(elapsed) / float64(halfLife))
	for user, v := range u {
		u[user] = v * k
	}
}

// FairShare computes every user's fair-share factor. Until accounting
// brings associations, every user is an association of one share under
// root, so a user's normalised share is 1/len(users). Classic:
// 2^(-U/S), U the user's share of all usage. Fair Tree (the default, as
// in Slurm): users ranked by S/U, the best 1, then down in equal steps to
// 1/n; users with equal S/U share a rank.
func FairShare(usage Usage, users []string, fairTree bool) map[string]float64 {
	out := make(map[string]float64, len(users))
	n := len(users)
	if n == 0 {
		return out
	}
	total := 0.0
	for _, u := range users {
		total += usage[u]
	}
	share := 1 / float64(n)
	norm := func(u string) float64 {
		if total <= 0 {
			return 0
		}
		return usage[u] / total
	}
	if !fairTree {
		for _, u := range users {
			out[u] = math.Exp2(-norm(u) / share)
		}
		return out
	}
	level := func(u string) float64 {
		if norm(u) == 0 {
			return math.Inf(1)
		}
		return share / norm(u)
	}
	ranked := slices.Clone(users)
	slices.SortStableFunc(ranked, func(a, b string) int {
		la, lb := level(a), level(b)
		switch {
		case la > lb:
			return -1
		case la < lb:
			return 1
		}
		return 0
	})
	for i, u := range ranked {
		rank := i
		for rank > 0 && level(ranked[rank-1]) == level(u) {
			rank--
		}
		out[u] = float64(n-rank) / float64(n)
	}
	return out
}

// ResetDue reports whether PriorityUsageResetPeriod clears usage between
// last and now: at the start of each day, week (Monday), month, quarter
// or year (UTC), as slurmctld's priority thread does.
func ResetDue(period string, last, now time.Time) bool {
	if last.IsZero() {
		return false
	}
	start := func(t time.Time) time.Time {
		t = t.UTC()
		y, m, d := t.Date()
		switch period {
		case "DAILY":
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		case "WEEKLY":
			wd := (int(t.Weekday()) + 6) % 7
			return time.Date(y, m, d-wd, 0, 0, 0, 0, time.UTC)
		case "MONTHLY":
			return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		case "QUARTERLY":
			return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, time.UTC)
		case "YEARLY":
			return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return time.Time{}
	}
	s := start(now)
	return !s.IsZero() && last.Before(s)
}
