package sched

import (
	"cmp"
	"slices"
)

// kindIndex groups a partition's nodes by their free runs for one kind of
// per-node share, for the jobs on several nodes of that kind. Nodes with
// the same runs are alike to the search for a start (a busy cluster has
// far fewer distinct futures than nodes: a job on 64 nodes ends on all 64
// at once), so a search reads each group once instead of every node, and
// reads the nodes only to place the job at the start it found. A node
// whose timeline changes moves to the group of its new runs.
type kindIndex struct {
	sh    hostKey
	nodes []int // the partition's usable nodes, indices into lines
	// group is each line's group (-1: not in the partition) and seen the
	// timeline version its runs were read at.
	group []int32
	seen  []uint64
	// cursor is how far into the pass's change log the index has read.
	cursor int
	groups []runGroup
	byHash map[uint64][]int32
	spare  []int32
	last   int32
	// weighted is the search's scratch.
	starts, ends []weightedTime
}

// runGroup is a set of nodes with the same free runs.
type runGroup struct {
	runs  []span
	count int
	hash  uint64
}

type weightedTime struct {
	at int64
	n  int
}

// reset makes ki the index of a partition's nodes for kind k, reusing
// its memory.
func (ki *kindIndex) reset(k hostKey, lines []*timeline, nodes []int) *kindIndex {
	ki.sh, ki.nodes, ki.cursor, ki.last = k, nodes, 0, -1
	ki.group = slices.Grow(ki.group[:0], len(lines))[:len(lines)]
	ki.seen = slices.Grow(ki.seen[:0], len(lines))[:len(lines)]
	for g := range ki.groups {
		ki.groups[g].count = 0
	}
	ki.spare = ki.spare[:0]
	for g := len(ki.groups) - 1; g >= 0; g-- {
		ki.spare = append(ki.spare, int32(g))
	}
	if ki.byHash == nil {
		ki.byHash = map[uint64][]int32{}
	}
	clear(ki.byHash)
	for i := range ki.group {
		ki.group[i] = -1
	}
	for _, i := range nodes {
		ki.join(i, lines[i])
	}
	return ki
}

// hashRuns is FNV-1a over a run list.
func hashRuns(runs []span) uint64 {
	h := uint64(14695981039346656037)
	for _, r := range runs {
		for _, v := range [2]int64{r.a, r.b} {
			h ^= uint64(v)
			h *= 1099511628211
		}
	}
	return h
}

// join puts a node into the group of its current runs. The nodes of one
// allocation change together and mostly end up alike, so the group the
// last node joined is tried first.
func (ki *kindIndex) join(i int, tl *timeline) {
	runs := tl.freeRuns(&ki.sh)
	if g := ki.last; g >= 0 && ki.groups[g].count > 0 && slices.Equal(ki.groups[g].runs, runs) {
		ki.groups[g].count++
		ki.group[i], ki.seen[i] = g, tl.version
		return
	}
	h := hashRuns(runs)
	for _, g := range ki.byHash[h] {
		if slices.Equal(ki.groups[g].runs, runs) {
			ki.groups[g].count++
			ki.group[i], ki.seen[i], ki.last = g, tl.version, g
			return
		}
	}
	var g int32
	if n := len(ki.spare); n > 0 {
		g, ki.spare = ki.spare[n-1], ki.spare[:n-1]
		ki.groups[g] = runGroup{runs: append(ki.groups[g].runs[:0], runs...), count: 1, hash: h}
	} else {
		g = int32(len(ki.groups))
		ki.groups = append(ki.groups, runGroup{runs: slices.Clone(runs), count: 1, hash: h})
	}
	ki.byHash[h] = append(ki.byHash[h], g)
	ki.group[i], ki.seen[i], ki.last = g, tl.version, g
}

// leave takes a node out of its group.
func (ki *kindIndex) leave(i int) {
	g := ki.group[i]
	ki.group[i] = -1
	grp := &ki.groups[g]
	if grp.count--; grp.count > 0 {
		return
	}
	ki.byHash[grp.hash] = slices.DeleteFunc(ki.byHash[grp.hash], func(x int32) bool { return x == g })
	if len(ki.byHash[grp.hash]) == 0 {
		delete(ki.byHash, grp.hash)
	}
	ki.spare = append(ki.spare, g)
}

// refresh regroups the nodes whose timelines changed since the last
// search.
func (ki *kindIndex) refresh(lines []*timeline, changed []int) {
	for _, i := range changed[ki.cursor:] {
		if ki.group[i] < 0 || ki.seen[i] == lines[i].version {
			continue
		}
		ki.leave(i)
		ki.join(i, lines[i])
	}
	ki.cursor = len(changed)
}

// candidates returns, in increasing order, the start times from lb up to
// limit at which at least need nodes can host a share for d seconds: the
// times firstFit tries, read from the groups.
func (ki *kindIndex) candidates(out []int64, need int, d, lb, limit int64) []int64 {
	starts, ends := ki.starts[:0], ki.ends[:0]
	var buf [8]span
	for g := range ki.groups {
		grp := &ki.groups[g]
		if grp.count == 0 {
			continue
		}
		sp := buf[:0]
		for _, r := range grp.runs {
			if r.a > limit {
				break
			}
			if r.b != forever && r.b <= lb {
				continue
			}
			sp = addSpan(sp, r.a, r.b, d, lb, limit)
		}
		for _, s := range sp {
			starts = append(starts, weightedTime{s.a, grp.count})
			ends = append(ends, weightedTime{s.b, grp.count})
		}
	}
	ki.starts, ki.ends = starts, ends
	byTime := func(x, y weightedTime) int { return cmp.Compare(x.at, y.at) }
	slices.SortFunc(starts, byTime)
	slices.SortFunc(ends, byTime)
	active, ei := 0, 0
	for si := 0; si < len(starts); si++ {
		t := starts[si].at
		active += starts[si].n
		if si+1 < len(starts) && starts[si+1].at == t {
			continue
		}
		for ei < len(ends) && ends[ei].at < t {
			active -= ends[ei].n
			ei++
		}
		if active >= need {
			out = append(out, t)
			if len(out) >= maxPlaceTries {
				break
			}
		}
	}
	return out
}

// hosts reports whether node i can host a share from t for d seconds.
func (ki *kindIndex) hosts(i int, t, d int64) bool {
	for _, r := range ki.groups[ki.group[i]].runs {
		if r.a > t {
			return false
		}
		if r.b == forever || d != forever && t+d <= r.b {
			return true
		}
	}
	return false
}
