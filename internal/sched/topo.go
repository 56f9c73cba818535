package sched

import (
	"cmp"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/topology"
)

// topoOrder reorders a multi-node job's candidate nodes so that placement,
// which takes the first nodes that fit, takes them from as few leaf
// switches (or blocks) as possible: one leaf when one can hold the job
// (the fullest such, so emptier leaves stay whole), otherwise the lowest
// switch whose leaves can, its leaves taken from the one with the most
// room down. Nodes outside the topology come last. With switches, a job
// never spans two trees: when none can hold it, no candidate is left.
func topoOrder(t *topology.Topology, sh *shape, cands []*NodeState) []*NodeState {
	byLeaf := make([][]*NodeState, t.Leaves())
	var rest []*NodeState
	for _, ns := range cands {
		leaf := t.Leaf(ns.Node.Name)
		if c, _ := sh.capacity(ns); c == 0 || leaf < 0 {
			rest = append(rest, ns)
			continue
		}
		byLeaf[leaf] = append(byLeaf[leaf], ns)
	}
	need := sh.nodes
	if len(t.Blocks) > 0 {
		return blockOrder(t, sh, cands, byLeaf, rest)
	}
	best := -1
	for i, l := range byLeaf {
		if len(l) >= need && (best < 0 || len(l) < len(byLeaf[best])) {
			best = i
		}
	}
	var leaves []int
	if best >= 0 {
		leaves = []int{best}
	} else {
		// The smallest subtree (fewest fitting nodes) that can hold it.
		under := map[string][]int{}
		total := map[string]int{}
		for i, l := range byLeaf {
			for _, sw := range t.Path(i) {
				under[sw] = append(under[sw], i)
				total[sw] += len(l)
			}
		}
		top := ""
		for sw, n := range total {
			if n >= need && (top == "" || n < total[top] || n == total[top] && sw < top) {
				top = sw
			}
		}
		switch {
		case top != "":
			leaves = slices.Clone(under[top])
		case len(t.Switches) > 0:
			// A job spans one switch fabric only: if no tree can hold it,
			// it waits (an empty candidate list fails placement).
			return nil
		default:
			for i := range byLeaf {
				leaves = append(leaves, i)
			}
		}
		slices.SortStableFunc(leaves, func(a, b int) int { return cmp.Compare(len(byLeaf[b]), len(byLeaf[a])) })
	}
	return ordered(sh, cands, byLeaf, leaves, rest)
}

// blockOrder is topoOrder for topology/block: a job stays within one
// aggregate of the smallest block level that can hold it (the fullest
// such aggregate, so emptier ones stay whole), taking its blocks with the
// most room first; with no such aggregate free it waits. A job larger
// than every level takes the aggregates of the largest with the most
// room first.
func blockOrder(t *topology.Topology, sh *shape, cands []*NodeState, byLeaf [][]*NodeState, rest []*NodeState) []*NodeState {
	room := func(leaves []int) int {
		n := 0
		for _, l := range leaves {
			n += len(byLeaf[l])
		}
		return n
	}
	byRoom := func(leaves []int) {
		slices.SortStableFunc(leaves, func(a, b int) int { return cmp.Compare(len(byLeaf[b]), len(byLeaf[a])) })
	}
	level, within := t.LevelFor(sh.nodes)
	if !within {
		levels := t.Levels()
		level = levels[len(levels)-1]
	}
	var groups [][]int
	for first := 0; first < len(byLeaf); first += level.Blocks {
		var g []int
		for l := first; l < min(first+level.Blocks, len(byLeaf)); l++ {
			g = append(g, l)
		}
		byRoom(g)
		groups = append(groups, g)
	}
	var leaves []int
	if within {
		best := -1
		for i, g := range groups {
			if n := room(g); n >= sh.nodes && (best < 0 || n < room(groups[best])) {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		leaves = groups[best]
	} else {
		slices.SortStableFunc(groups, func(a, b []int) int { return cmp.Compare(room(b), room(a)) })
		for _, g := range groups {
			leaves = append(leaves, g...)
		}
	}
	return ordered(sh, cands, byLeaf, leaves, rest)
}

// ordered lists the nodes of the chosen leaves first, in that order, then
// the other leaves' and the rest; the nodes the job will take are put
// back in configuration order.
func ordered(sh *shape, cands []*NodeState, byLeaf [][]*NodeState, leaves []int, rest []*NodeState) []*NodeState {
	out := make([]*NodeState, 0, len(cands))
	used := make([]bool, len(byLeaf))
	for _, i := range leaves {
		out = append(out, byLeaf[i]...)
		used[i] = true
	}
	for i, l := range byLeaf {
		if !used[i] {
			out = append(out, l...)
		}
	}
	// The nodes the job will take, back in configuration order: slurmctld
	// lists an allocation by node index, and the first is the batch host.
	if k := sh.nodes; len(out) >= k {
		pos := make(map[*NodeState]int, len(cands))
		for i, ns := range cands {
			pos[ns] = i
		}
		slices.SortFunc(out[:k], func(a, b *NodeState) int { return cmp.Compare(pos[a], pos[b]) })
	}
	return append(out, rest...)
}

// leavesUsed counts the leaves an allocation spans.
func leavesUsed(t *topology.Topology, a *job.Allocation) int {
	seen := map[int]bool{}
	for _, na := range a.Nodes {
		seen[t.Leaf(na.Node)] = true
	}
	return len(seen)
}

// waitsForSwitches reports whether a job asking for at most MaxSwitches
// leaf switches keeps waiting for them rather than take this allocation
// (--switches=N@wait: until wait has passed since it became eligible).
func waitsForSwitches(t *topology.Topology, j *job.Job, a *job.Allocation, now time.Time) bool {
	if t == nil || j.Req.MaxSwitches == 0 || leavesUsed(t, a) <= int(j.Req.MaxSwitches) {
		return false
	}
	since := j.EligibleTime
	if since.IsZero() {
		since = j.SubmitTime
	}
	return now.Sub(since) < j.Req.SwitchWait
}
