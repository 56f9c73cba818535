package acctdb

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ClusterEvent is the State of the events that give a cluster's size
// (Node ""): each records the CPUs the cluster had from its Start, as
// slurmdbd's cluster TRES events do.
const ClusterEvent = "CLUSTER"

// UsageQuery asks what clusters' CPUs did over [Start, End) (sreport);
// Now ends what still runs or waits.
type UsageQuery struct {
	// Clusters are the clusters to report (none: every cluster the
	// store has sizes for).
	Clusters   []string
	Start, End time.Time
	Now        time.Time
}

// ClusterUsage is one cluster over the period, in CPU-seconds, as
// sreport's cluster Utilization splits it: Reported is what the cluster
// had; Allocated what jobs held; Down what nodes out of service had (less
// what jobs held there); Planned what eligible pending jobs asked for and
// could have had (at most what was left). Idle is the rest.
type ClusterUsage struct {
	Cluster                            string
	Reported, Allocated, Down, Planned float64
	Assocs                             []AssocUsage
	Sizes                              []SizeUsage
}

// Idle is what no job held and no node lacked.
func (c *ClusterUsage) Idle() float64 {
	return max(c.Reported-c.Allocated-c.Down-c.Planned, 0)
}

// AssocUsage is what one user's jobs under one account held.
type AssocUsage struct {
	Account, User string
	UID           uint32
	CPUSeconds    float64
}

// SizeUsage is what an account's jobs of one size held (sreport job
// SizesByAccount): how many jobs, and their CPU-seconds in the period.
type SizeUsage struct {
	Account    string
	CPUs       uint32
	Jobs       int64
	CPUSeconds float64
}

// overlap is how much of [from, to) falls in [start, end), in seconds.
func overlap(from, to, start, end time.Time) float64 {
	from, to = maxTime(from, start), minTime(to, end)
	if !to.After(from) {
		return 0
	}
	return to.Sub(from).Seconds()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Usage adds up, per cluster, the usage of the period from the job
// records and the node and cluster events.
func (s *Store) Usage(ctx context.Context, q UsageQuery) ([]ClusterUsage, error) {
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	clusters := q.Clusters
	if len(clusters) == 0 {
		rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT DISTINCT cluster FROM events WHERE node = ? ORDER BY cluster`), "")
		if err != nil {
			return nil, fmt.Errorf("accounting store: list clusters: %w", err)
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, fmt.Errorf("accounting store: list clusters: %w", err)
			}
			clusters = append(clusters, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("accounting store: list clusters: %w", err)
		}
	}
	var out []ClusterUsage
	for _, c := range clusters {
		u, err := s.clusterUsage(ctx, c, q)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func (s *Store) clusterUsage(ctx context.Context, cluster string, q UsageQuery) (ClusterUsage, error) {
	u := ClusterUsage{Cluster: cluster}
	start, end := q.Start.Unix(), q.End.Unix()
	err := scanRecs(ctx, s, `SELECT rec FROM events WHERE cluster = ? AND time_start < ? AND (time_end = 0 OR time_end > ?)`,
		[]any{cluster, end, start}, func(e *Event) {
			to := e.End
			if to.IsZero() {
				to = q.Now
			}
			secs := float64(e.CPUs) * overlap(e.Start, to, q.Start, q.End)
			if e.Node == "" {
				u.Reported += secs
			} else {
				u.Down += secs
			}
		})
	if err != nil {
		return u, fmt.Errorf("accounting store: read events: %w", err)
	}
	assocs := map[[2]string]*AssocUsage{}
	sizes := map[string]*SizeUsage{}
	err = scanRecs(ctx, s, `SELECT rec FROM jobs WHERE cluster = ? AND submit_time < ? AND (end_time = 0 OR end_time > ?)`,
		[]any{cluster, end, start}, func(j *Job) {
			stop := j.End
			if stop.IsZero() {
				stop = q.Now
			}
			if !j.Start.IsZero() {
				secs := float64(j.AllocCPUs) * overlap(j.Start, stop, q.Start, q.End)
				if secs > 0 {
					u.Allocated += secs
					k := [2]string{j.Account, j.User}
					a := assocs[k]
					if a == nil {
						a = &AssocUsage{Account: j.Account, User: j.User, UID: j.UID}
						assocs[k] = a
					}
					a.CPUSeconds += secs
					sk := fmt.Sprintf("%s\x00%d", j.Account, j.AllocCPUs)
					z := sizes[sk]
					if z == nil {
						z = &SizeUsage{Account: j.Account, CPUs: j.AllocCPUs}
						sizes[sk] = z
					}
					z.Jobs++
					z.CPUSeconds += secs
				}
			}
			// Waiting while eligible: until it started, or ended without
			// starting.
			if !j.Eligible.IsZero() {
				waited := stop
				if !j.Start.IsZero() {
					waited = j.Start
				}
				u.Planned += float64(max(j.ReqCPUs, j.AllocCPUs)) * overlap(j.Eligible, waited, q.Start, q.End)
			}
		})
	if err != nil {
		return u, fmt.Errorf("accounting store: read jobs: %w", err)
	}
	// A drained node may still run jobs: what they held is not down; and
	// pending jobs could have had only what was left.
	u.Down = max(min(u.Down, u.Reported-u.Allocated), 0)
	u.Planned = max(min(u.Planned, u.Reported-u.Allocated-u.Down), 0)
	for _, a := range assocs {
		u.Assocs = append(u.Assocs, *a)
	}
	slices.SortFunc(u.Assocs, func(a, b AssocUsage) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), strings.Compare(a.User, b.User))
	})
	for _, z := range sizes {
		u.Sizes = append(u.Sizes, *z)
	}
	slices.SortFunc(u.Sizes, func(a, b SizeUsage) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), cmp.Compare(a.CPUs, b.CPUs))
	})
	return u, nil
}

// scanRecs runs a query of rec columns and decodes each into a T.
func scanRecs[T any](ctx context.Context, s *Store, q string, args []any, each func(*T)) error {
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return err
		}
		var v T
		if err := json.Unmarshal([]byte(rec), &v); err != nil {
			return err
		}
		each(&v)
	}
	return rows.Err()
}

// ClusterSize is the CPU count of a cluster's newest size event (ok
// false: none yet).
func (s *Store) ClusterSize(ctx context.Context, cluster string) (cpus uint32, since time.Time, ok bool, err error) {
	var last *Event
	err = scanRecs(ctx, s, `SELECT rec FROM events WHERE cluster = ? AND node = ? AND time_end = 0`, []any{cluster, ""}, func(e *Event) {
		if last == nil || e.Start.After(last.Start) {
			last = e
		}
	})
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("accounting store: read cluster size: %w", err)
	}
	if last == nil {
		return 0, time.Time{}, false, nil
	}
	return last.CPUs, last.Start, true, nil
}
