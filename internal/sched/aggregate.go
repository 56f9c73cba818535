package sched

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/droverhq/drover/internal/job"
)

// aggregate is what a partition's nodes have left in all (CPUs and GPUs),
// as a step function of time: more than any set of them can give one job,
// so a job that does not fit in it cannot fit at all.
type aggregate struct {
	part  string
	steps []aggStep
	// least[i] is the least of steps[0..i], current while fresh.
	least []aggStep
	fresh bool
	// in flags the partition's nodes (by line), whose shares count.
	in []bool
	// deltas is reset's scratch.
	deltas []aggStep
}

type aggStep struct {
	at         int64
	cpus, gpus int64
}

// reset makes g what a partition's nodes have left, reusing its memory.
func (g *aggregate) reset(lines []*timeline, nodes []int, part string) *aggregate {
	deltas := g.deltas[:0]
	for _, i := range nodes {
		var prev free
		for k, st := range lines[i].steps {
			d := aggStep{at: st.at, cpus: int64(st.cpus) - int64(prev.cpus),
				gpus: int64(bits.OnesCount64(st.gpus)) - int64(bits.OnesCount64(prev.gpus))}
			if k == 0 || d.cpus != 0 || d.gpus != 0 {
				deltas = append(deltas, d)
			}
			prev = st.free
		}
	}
	slices.SortFunc(deltas, func(a, b aggStep) int { return cmp.Compare(a.at, b.at) })
	g.deltas = deltas
	g.part, g.steps, g.fresh = part, g.steps[:0], false
	g.in = slices.Grow(g.in[:0], len(lines))[:len(lines)]
	clear(g.in)
	for _, i := range nodes {
		g.in[i] = true
	}
	var run aggStep
	for _, d := range deltas {
		run.cpus += d.cpus
		run.gpus += d.gpus
		if n := len(g.steps); n > 0 && g.steps[n-1].at == d.at {
			g.steps[n-1].cpus, g.steps[n-1].gpus = run.cpus, run.gpus
			continue
		}
		g.steps = append(g.steps, aggStep{at: d.at, cpus: run.cpus, gpus: run.gpus})
	}
	if len(g.steps) == 0 || g.steps[0].at != 0 {
		g.steps = slices.Insert(g.steps, 0, aggStep{})
	}
	return g
}

// split makes a step begin at t and returns its index.
func (g *aggregate) split(t int64) int {
	i, found := slices.BinarySearchFunc(g.steps, t, func(s aggStep, t int64) int { return cmp.Compare(s.at, t) })
	if found {
		return i
	}
	prev := g.steps[i-1]
	prev.at = t
	g.steps = slices.Insert(g.steps, i, prev)
	return i
}

// take removes a share of line node from [from, to), if the node is the
// partition's.
func (g *aggregate) take(from, to int64, node int, share *job.NodeAlloc) {
	if !g.in[node] {
		return
	}
	cpus, gpus := int64(share.CPUs), int64(len(share.GPUs))
	i := g.split(from)
	end := len(g.steps)
	if to != forever {
		end = g.split(to)
	}
	for ; i < end; i++ {
		g.steps[i].cpus -= cpus
		g.steps[i].gpus -= gpus
	}
	g.fresh = false
}

func (g *aggregate) prefixMin() {
	if g.fresh {
		return
	}
	g.least = slices.Grow(g.least[:0], len(g.steps))[:len(g.steps)]
	for i, st := range g.steps {
		if i > 0 {
			st.cpus = min(st.cpus, g.least[i-1].cpus)
			st.gpus = min(st.gpus, g.least[i-1].gpus)
		}
		g.least[i] = st
	}
	g.fresh = true
}

// leastFree is the least left at any moment of [0, d) (after prefixMin).
func (g *aggregate) leastFree(d int64) (cpus, gpus int64) {
	// The last step beginning before d.
	i, _ := slices.BinarySearchFunc(g.steps, d, func(s aggStep, t int64) int { return cmp.Compare(s.at, t) })
	l := g.least[max(i-1, 0)]
	return l.cpus, l.gpus
}
