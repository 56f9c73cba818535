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
