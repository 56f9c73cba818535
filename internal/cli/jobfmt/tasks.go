package jobfmt

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxTaskID bounds the task ids a TaskSet accepts: Slurm's MaxArraySize
// cannot exceed 4000001, so anything larger is malformed input.
const MaxTaskID = 4000000

// TaskRange is an inclusive run of array task ids.
type TaskRange struct{ First, Last uint32 }

// TaskSet is a set of array task ids kept as sorted, disjoint, non-adjacent
// ranges: Slurm's task bitmaps can span millions of ids.
type TaskSet struct {
	ranges []TaskRange
}

// ParseTaskSet reads the task list of an array record ("0-9%2",
// "1,3,5-7"), as bit_unfmt does after squeue strips the "%throttle" suffix.
// It returns false when the list is malformed or names an id above
// MaxTaskID.
func ParseTaskSet(s string) (TaskSet, bool) {
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	var ts TaskSet
	if s == "" {
		return ts, true
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, ok := parseTaskID(lo)
		if !ok {
			return TaskSet{}, false
		}
		b := a
		if isRange {
			if b, ok = parseTaskID(hi); !ok || b < a {
				return TaskSet{}, false
			}
		}
		ts.AddRange(a, b)
	}
	return ts, true
}

func parseTaskID(s string) (uint32, bool) {
	if s == "" || len(s) > 7 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n > MaxTaskID {
		return 0, false
	}
	return uint32(n), true
}

// Add puts one id in the set.
func (t *TaskSet) Add(id uint32) { t.AddRange(id, id) }

// AddRange puts first..last (inclusive) in the set.
func (t *TaskSet) AddRange(first, last uint32) {
	if last < first {
		return
	}
	// i is the first range that overlaps or touches [first, last] or lies
	// after it; uint64 keeps last+1 from wrapping.
	i := sort.Search(len(t.ranges), func(k int) bool {
		return uint64(t.ranges[k].Last)+1 >= uint64(first)
	})
	j := i
	for j < len(t.ranges) && uint64(t.ranges[j].First) <= uint64(last)+1 {
		first = min(first, t.ranges[j].First)
		last = max(last, t.ranges[j].Last)
		j++
	}
	t.ranges = slices.Replace(t.ranges, i, j, TaskRange{first, last})
}

// Contains reports whether id is in the set.
func (t TaskSet) Contains(id uint32) bool {
	_, found := slices.BinarySearchFunc(t.ranges, id, func(r TaskRange, v uint32) int {
		switch {
		case r.Last < v:
			return -1
		case r.First > v:
			return 1
		}
		return 0
	})
	return found
}

// Len returns the number of ids in the set.
func (t TaskSet) Len() int {
	n := 0
	for _, r := range t.ranges {
		n += int(r.Last-r.First) + 1
	}
	return n
}

// Ranges returns the set's runs in increasing order.
func (t TaskSet) Ranges() []TaskRange { return slices.Clone(t.ranges) }

// First returns the smallest id; ok is false for an empty set.
func (t TaskSet) First() (id uint32, ok bool) {
	if len(t.ranges) == 0 {
		return 0, false
	}
	return t.ranges[0].First, true
}

// String prints the set as Slurm's bit_fmt does: "0-3,5,7-9".
func (t TaskSet) String() string {
	var b strings.Builder
	for i, r := range t.ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(utoa(r.First))
		if r.Last != r.First {
			b.WriteByte('-')
			b.WriteString(utoa(r.Last))
		}
	}
	return b.String()
}

// Intersect keeps only the ids also in o.
func (t *TaskSet) Intersect(o TaskSet) {
	var out []TaskRange
	i, j := 0, 0
	for i < len(t.ranges) && j < len(o.ranges) {
		a, b := t.ranges[i], o.ranges[j]
		lo, hi := max(a.First, b.First), min(a.Last, b.Last)
		if lo <= hi {
			out = append(out, TaskRange{lo, hi})
		}
		if a.Last < b.Last {
			i++
		} else {
			j++
		}
	}
	t.ranges = out
}
