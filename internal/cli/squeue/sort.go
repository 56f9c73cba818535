package squeue

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
)

// defaultSort is squeue's job order: partition, then state (compact name,
// alphabetically), then decreasing priority.
const defaultSort = "P,t,-p"

// sortComparator compares two records for one sort key; reverse flips it.
type sortComparator func(a, b *record, reverse bool) int

// sortKeys maps -S letters to comparators. Letters Slurm accepts without
// sorting on them (c, f, h, n, O) map to nil.
func (q *queue) sortKeys(now time.Time) map[byte]sortComparator {
	num := func(get func(*readmodel.Job) int64) sortComparator {
		return func(a, b *record, rev bool) int { return flip(cmp.Compare(get(a.job), get(b.job)), rev) }
	}
	strKey := func(get func(*readmodel.Job) string) sortComparator {
		return func(a, b *record, rev bool) int { return flip(strings.Compare(get(a.job), get(b.job)), rev) }
	}
	u16 := func(get func(*readmodel.Job) uint16) sortComparator {
		return num(func(j *readmodel.Job) int64 { return int64(get(j)) })
	}
	return map[byte]sortComparator{
		'B': strKey(func(j *readmodel.Job) string { return j.BatchHost }),
		'c': nil, 'f': nil, 'h': nil, 'n': nil, 'O': nil,
		'C': num(func(j *readmodel.Job) int64 { return int64(j.NumCPUs) }),
		'd': num(func(j *readmodel.Job) int64 { return int64(j.MinTmpDisk) }),
		'D': num(func(j *readmodel.Job) int64 { return int64(j.NumNodes) }),
		'e': num(func(j *readmodel.Job) int64 { return j.EndTime }),
		'g': strKey(func(j *readmodel.Job) string {
			if j.GroupName == "" {
				return utoa(j.GroupID)
			}
			return j.GroupName
		}),
		'G': num(func(j *readmodel.Job) int64 { return int64(j.GroupID) }),
		'H': u16(func(j *readmodel.Job) uint16 { return j.SocketsPerNode }),
		'i': compareID,
		'I': u16(func(j *readmodel.Job) uint16 { return j.CoresPerSocket }),
		'j': strKey(func(j *readmodel.Job) string { return j.Name }),
		'J': u16(func(j *readmodel.Job) uint16 { return j.ThreadsPerCore }),
		'l': num(func(j *readmodel.Job) int64 { return int64(j.TimeLimit) }),
		'L': num(func(j *readmodel.Job) int64 {
			if j.TimeLimit == readmodel.Infinite || j.TimeLimit == readmodel.NoVal {
				return int64(readmodel.Infinite)
			}
			return int64(j.TimeLimit)*60 - jobfmt.TimeUsed(j, now)
		}),
		'm': num(func(j *readmodel.Job) int64 { return int64(j.MinMemory) }),
		'M': num(func(j *readmodel.Job) int64 { return jobfmt.TimeUsed(j, now) }),
		'N': func(a, b *record, rev bool) int { return flip(compareNodeLists(a.job.Nodes, b.job.Nodes), rev) },
		'p': comparePriority,
		'P': func(a, b *record, rev bool) int { return flip(strings.Compare(a.part, b.part), rev) },
		'Q': comparePriority,
		'S': startTimeComparator(now.Unix()),
		't': strKey(func(j *readmodel.Job) string { return j.State.Compact() }),
		'T': strKey(func(j *readmodel.Job) string { return j.State.String() }),
		'u': strKey(jobfmt.UserName),
		'U': num(func(j *readmodel.Job) int64 { return int64(j.UserID) }),
		'v': strKey(func(j *readmodel.Job) string { return j.Reservation }),
		'V': num(func(j *readmodel.Job) int64 { return j.SubmitTime }),
		'z': func(a, b *record, rev bool) int {
			for _, get := range []func(*readmodel.Job) uint16{
				func(j *readmodel.Job) uint16 { return j.SocketsPerNode },
				func(j *readmodel.Job) uint16 { return j.CoresPerSocket },
				func(j *readmodel.Job) uint16 { return j.ThreadsPerCore },
			} {
				if d := flip(cmp.Compare(get(a.job), get(b.job)), rev); d != 0 {
					return d
				}
			}
			return 0
		},
	}
}

// sort orders recs as squeue does: first by decreasing start time, then by
// each -S key from the last to the first, every pass a stable merge sort
// (glibc's qsort), so earlier keys dominate and ties keep the previous
// order. It returns an error (already reported) for an unknown key.
func (q *queue) sort(recs []*record, now time.Time) *exitError {
	env := q.env
	// Slurm's first pass runs before its clock is read: pending jobs'
	// start times are taken as they are.
	mergeSort(recs, func(a, b *record) int { return startTimeComparator(0)(a, b, true) })
	spec := defaultSort
	if q.opts.sort != nil {
		spec = *q.opts.sort
	}
	keys := q.sortKeys(now)
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		const cluster = "cluster"
		if i+1 >= len(cluster) && strings.EqualFold(spec[i+1-len(cluster):i+1], cluster) {
			reverse = i >= len(cluster) && spec[i-len(cluster)] == '-'
			mergeSort(recs, func(a, b *record) int {
				return flip(strings.Compare(a.job.Cluster, b.job.Cluster), reverse)
			})
			i -= len(cluster) - 1
			continue
		}
		if c == 'b' {
			fmt.Fprintf(env.Stderr, "%s: Invalid sort specification: b\n", env.Prog)
			continue
		}
		fn, ok := keys[c]
		if !ok {
			fmt.Fprintf(env.Stderr, "%s: error: Invalid sort specification: %c\n", env.Prog, c)
			return &exitError{1}
		}
		if fn != nil {
			mergeSort(recs, func(a, b *record) int { return fn(a, b, reverse) })
		}
	}
	return nil
}

func flip(d int, reverse bool) int {
	if reverse {
		return -d
	}
	return d
}

// comparePriority orders by partition priority tier, then job priority.
func comparePriority(a, b *record, rev bool) int {
	d := cmp.Compare(a.partPrio, b.partPrio)
	if d == 0 {
		d = cmp.Compare(a.prio(), b.prio())
	}
	return flip(d, rev)
}

func (r *record) prio() uint32 {
	if r.jobPrio != 0 {
		return r.jobPrio
	}
	return r.job.Priority
}

// compareID orders by job id, array tasks of one array by task id.
func compareID(a, b *record, rev bool) int {
	key := func(j *readmodel.Job) (uint32, uint32) {
		switch {
		case j.HetJobID != 0:
			return j.HetJobID, j.HetJobOffset
		case !j.IsArrayTask():
			return j.JobID, j.ArrayTaskID
		}
		return j.ArrayJobID, j.ArrayTaskID
	}
	ia, ta := key(a.job)
	ib, tb := key(b.job)
	d := cmp.Compare(ia, ib)
	if d == 0 {
		d = cmp.Compare(ta, tb)
	}
	return flip(d, rev)
}

// startTimeComparator orders by start time, with pending jobs whose
// expected start has passed counted as starting now. Jobs without a start
// time sort last whichever the direction: Slurm's comparator answers
// "greater" for them unconditionally, and the merge sort's exact steps
// decide how they end up among themselves.
func startTimeComparator(now int64) sortComparator {
	start := func(j *readmodel.Job) int64 {
		if j.State == readmodel.StatePending && j.StartTime < now {
			return now
		}
		return j.StartTime
	}
	return func(a, b *record, rev bool) int {
		if a.job.StartTime == 0 {
			return 1
		}
		if b.job.StartTime == 0 {
			return -1
		}
		return flip(cmp.Compare(start(a.job), start(b.job)), rev)
	}
}

// compareNodeLists orders by the first host of each list in Slurm's host
// order (hostlist_cmp_first).
func compareNodeLists(a, b string) int {
	first := func(s string) string {
		hs, err := hostlist.Expand(s)
		if err != nil || len(hs) == 0 {
			return ""
		}
		hostlist.Sort(hs)
		return hs[0]
	}
	fa, fb := first(a), first(b)
	switch {
	case fa == "" && fb == "":
		return 0
	case fa == "":
		return -1
	case fb == "":
		return 1
	}
	return hostlist.Compare(fa, fb)
}

// mergeSort sorts s in place with glibc qsort's merge sort: split in
// halves (the first one the smaller), sort each, merge taking from the
// first half while cmp(first, second) <= 0. Reproducing its exact steps
// matters because Slurm's start time comparator is not a consistent order.
func mergeSort[T any](s []T, cmp func(a, b T) int) {
	if len(s) < 2 {
		return
	}
	tmp := make([]T, len(s))
	msort(s, tmp, cmp)
}

func msort[T any](b, tmp []T, cmp func(a, b T) int) {
	n := len(b)
	if n <= 1 {
		return
	}
	n1 := n / 2
	b1, b2 := b[:n1], b[n1:]
	msort(b1, tmp, cmp)
	msort(b2, tmp, cmp)
	i, j, k := 0, 0, 0
	for i < len(b1) && j < len(b2) {
		if cmp(b1[i], b2[j]) <= 0 {
			tmp[k] = b1[i]
			i++
		} else {
			tmp[k] = b2[j]
			j++
		}
		k++
	}
	k += copy(tmp[k:], b1[i:])
	copy(b, tmp[:k])
}
