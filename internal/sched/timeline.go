package sched

import (
	"cmp"
	"math"
	"slices"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
)

// forever is the end of a plan: a job without a time limit holds its
// share until then.
const forever = math.MaxInt64

// step is what a node has left from at (seconds after the cycle's clock)
// until the next step.
type step struct {
	at int64
	free
}

// timeline is one node's future as the backfill pass sees it: what is left
// of it from now on, as running jobs end by their time limits and planned
// jobs take their shares. steps[0].at is 0 and the last step lasts forever.
type timeline struct {
	ns    *NodeState
	steps []step
	// most is the most the node has left at any one time from now to the
	// window's end (each resource on its own), so that a node that can
	// never host a share is passed over without reading its steps; it is
	// current while mostAt equals version.
	most   free
	mostAt uint64
	// runs caches the node's free runs for the last kind of share asked
	// for, valid while the timeline is unchanged (version): the jobs of a
	// pass are mostly of few kinds, and each changes few nodes.
	version uint64
	runs    runCache
}

// runCache is a timeline's free runs [a, b) for one kind of share.
type runCache struct {
	key     hostKey
	version uint64
	valid   bool
	runs    []span
}

// release is a running job's share coming back at a time.
type release struct {
	at    int64
	share job.NodeAlloc
}

// init builds a node's timeline from what it has left now and the shares
// running jobs give back when they end, appending to tl.steps.
func (tl *timeline) init(ns *NodeState, rel []release) {
	tl.ns = ns
	tl.version++
	tl.steps = append(tl.steps[:0], step{at: 0, free: freeOf(ns)})
	slices.SortFunc(rel, func(a, b release) int { return cmp.Compare(a.at, b.at) })
	for _, r := range rel {
		if r.at == forever {
			break
		}
		last := &tl.steps[len(tl.steps)-1]
		if last.at != r.at {
			tl.steps = append(tl.steps, step{at: r.at, free: last.free})
			last = &tl.steps[len(tl.steps)-1]
		}
		last.cpus += r.share.CPUs
		last.mem += r.share.MemMB
		last.gpus |= gpuMask(r.share.GPUs)
		last.jobs--
	}
	n := ns.Node
	for i := range tl.steps {
		// Usage above the configuration (a node reconfigured smaller)
		// must not turn into more than the node has.
		f := &tl.steps[i].free
		f.cpus = min(f.cpus, n.CPUs)
		f.mem = min(f.mem, n.RealMemory)
		f.jobs = max(f.jobs, 0)
	}
}

func gpuMask(idx []int) uint64 {
	var m uint64
	for _, g := range idx {
		if g >= 0 && g < 64 {
			m |= 1 << g
		}
	}
	return m
}

// over returns the least the node has left at any time in [from, to).
func (tl *timeline) over(from, to int64) free {
	i := tl.index(from)
	f := tl.steps[i].free
	for i++; i < len(tl.steps) && tl.steps[i].at < to; i++ {
		g := tl.steps[i].free
		f.cpus = min(f.cpus, g.cpus)
		f.mem = min(f.mem, g.mem)
		f.gpus &= g.gpus
		f.jobs = max(f.jobs, g.jobs)
	}
	return f
}

// index returns the step in force at t.
func (tl *timeline) index(t int64) int {
	i, found := slices.BinarySearchFunc(tl.steps, t, func(s step, t int64) int { return cmp.Compare(s.at, t) })
	if !found {
		i--
	}
	return i
}

// split makes a step begin at t (t > 0) and returns its index.
func (tl *timeline) split(t int64) int {
	i := tl.index(t)
	if tl.steps[i].at == t {
		return i
	}
	tl.steps = slices.Insert(tl.steps, i+1, step{at: t, free: tl.steps[i].free})
	return i + 1
}

// take removes a job's share of the node over [from, to).
func (tl *timeline) take(from, to int64, share *job.NodeAlloc) {
	i := tl.split(from)
	end := len(tl.steps)
	if to != forever {
		end = tl.split(to)
	}
	mask := gpuMask(share.GPUs)
	tl.version++
	for ; i < end; i++ {
		f := &tl.steps[i].free
		f.cpus -= min(f.cpus, share.CPUs)
		f.mem -= min(f.mem, share.MemMB)
		f.gpus &^= mask
		f.jobs++
	}
}

// mostUntil returns the most the node has left at any time up to limit,
// each resource on its own.
func (tl *timeline) mostUntil(limit int64) free {
	if tl.mostAt == tl.version {
		return tl.most
	}
	var m free
	m.jobs = math.MaxInt
	for i := range tl.steps {
		st := &tl.steps[i]
		if st.at > limit {
			break
		}
		m.cpus = max(m.cpus, st.cpus)
		m.mem = max(m.mem, st.mem)
		m.gpus |= st.gpus
		m.jobs = min(m.jobs, st.jobs)
	}
	tl.most, tl.mostAt = m, tl.version
	return m
}

// freeRuns returns the runs of time [a, b) over which the node can host
// a share of the job (b forever for a run that never ends).
func (tl *timeline) freeRuns(k *hostKey) []span {
	c := &tl.runs
	if c.valid && c.version == tl.version && c.key == *k {
		return c.runs
	}
	test := k.testOn(tl.ns.Node)
	runs := c.runs[:0]
	runStart := int64(-1)
	for i := range tl.steps {
		st := &tl.steps[i]
		if test.hosts(st.free) {
			if runStart < 0 {
				runStart = st.at
			}
			continue
		}
		if runStart >= 0 {
			runs = append(runs, span{runStart, st.at})
			runStart = -1
		}
	}
	if runStart >= 0 {
		runs = append(runs, span{runStart, forever})
	}
	*c = runCache{key: *k, version: tl.version, valid: true, runs: runs}
	return runs
}

// starts appends to out the spans of start times [a, b] at which a share
// of the job fits on the node for d seconds, beginning no earlier than lb
// and no later than limit.
func (tl *timeline) starts(out []span, k *hostKey, d, lb, limit int64) []span {
	for _, r := range tl.freeRuns(k) {
		if r.a > limit {
			break
		}
		if r.b != forever && r.b <= lb {
			continue
		}
		out = addSpan(out, r.a, r.b, d, lb, limit)
	}
	return out
}

// firstFree returns when the node first has room for a share of the job,
// at any length, up to limit (forever: never).
func (tl *timeline) firstFree(k *hostKey, limit int64) int64 {
	if runs := tl.freeRuns(k); len(runs) > 0 && runs[0].a <= limit {
		return runs[0].a
	}
	return forever
}

// span is a range of start times [a, b], both ends included.
type span struct{ a, b int64 }

// addSpan adds the starts that keep a job of length d inside a free run
// [runStart, runEnd).
func addSpan(out []span, runStart, runEnd, d, lb, limit int64) []span {
	a := max(runStart, lb)
	b := limit
	if runEnd != forever {
		if d == forever || runEnd-d < a {
			return out
		}
		b = min(b, runEnd-d)
	}
	if a > b {
		return out
	}
	return append(out, span{a, b})
}

// freeStateIn turns what a node has left into the NodeState placement
// reads, its GPU flags appended to buf (returned grown).
func freeStateIn(buf []bool, n *node.Node, f free) (NodeState, []bool) {
	size := 0
	for _, g := range n.GPUs {
		size = max(size, g.Index+1)
	}
	from := len(buf)
	buf = slices.Grow(buf, size)[:from+size]
	used := buf[from : from+size : from+size]
	clear(used)
	for _, g := range n.GPUs {
		if g.Index >= 0 && (g.Index >= 64 || f.gpus&(1<<g.Index) == 0) {
			used[g.Index] = true
		}
	}
	return NodeState{Node: n, Used: node.Alloc{
		CPUs:  n.CPUs - min(f.cpus, n.CPUs),
		MemMB: n.RealMemory - min(f.mem, n.RealMemory),
		GPUs:  used,
		Jobs:  f.jobs,
	}}, buf
}
