package sched

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/topology"
)

// BackfillParams are the bf_* settings of slurm.conf's SchedulerParameters.
type BackfillParams struct {
	// MaxJobTest is how many pending jobs one pass plans (bf_max_job_test).
	MaxJobTest int
	// Window is how far ahead the plan looks (bf_window); a job that
	// cannot start within it gets no planned start.
	Window time.Duration
	// Resolution rounds every time in the plan up to a multiple of it
	// (bf_resolution), which merges nearby ends into one step.
	Resolution time.Duration
	// MaxJobUser caps the jobs of one user a pass plans (bf_max_job_user;
	// 0: no cap).
	MaxJobUser int
	// Interval is the time between backfill passes (bf_interval); the
	// controller paces them, main passes run in between.
	Interval time.Duration
	// Continue is bf_continue. A pass here never yields its lock half
	// way, so there is nothing to continue; the setting is accepted.
	Continue bool
}

// DefaultBackfillParams are slurmctld's defaults.
func DefaultBackfillParams() BackfillParams {
	return BackfillParams{
		MaxJobTest: 500,
		Window:     24 * time.Hour,
		Resolution: 60 * time.Second,
		Interval:   30 * time.Second,
	}
}

// Backfill is sched/backfill: the main pass, then (when the snapshot asks
// for it) a pass that plans a start for each of the highest-priority
// pending jobs in turn and reserves the nodes for it, starting a job at
// once only where its whole time limit fits before every reservation
// made for a job above it. Plans are conservative: every planned job holds
// its reservation, so a lower-priority job never delays one above it.
type Backfill struct {
	FIFO
	Params BackfillParams
	// scanOnly turns the heaps off, so that tests can check them against
	// reading every node.
	scanOnly bool
}

// Schedule implements Scheduler.
func (b *Backfill) Schedule(s *Snapshot) *Plan {
	p := b.mainPass(s)
	defer p.done()
	if s.Backfill {
		b.backfill(s, p)
	}
	return p.plan
}

// bfPass is one backfill pass's working state.
type bfPass struct {
	p      *pass
	params *BackfillParams
	res    int64 // seconds
	window int64 // seconds
	lines  []*timeline
	// partNodes are the indices (into lines) of each partition's usable
	// nodes, in configuration order.
	partNodes map[string][]int
	index     map[string]int
	// lowest remembers, per kind of request, the earliest starts jobs of
	// that kind found: reservations only ever take resources away, so a
	// later job of the same kind and no shorter cannot start sooner.
	lowest map[shapeKey][]bound
	// most is what one empty node holds of a spread job's tasks, per
	// partition and kind of task, found on first use.
	most  map[shapeKey]uint32
	spans []nodeSpan
	one   []span
	// startBuf and endBuf are firstFit's scratch.
	startBuf, endBuf []int64
	// heaps find one-node jobs' starts, per partition and kind of share
	// (see freeHeap).
	heaps map[runsKey]*freeHeap
	// kinds find the starts of jobs on several nodes, per kind of share
	// (see kindIndex); changed logs the nodes whose timelines changed, for
	// them to catch up.
	kinds   map[runsKey]*kindIndex
	changed []int
	times   []int64
	// states, cands, flags and alloc are placeAt's scratch.
	states []NodeState
	cands  []*NodeState
	flags  []bool
	alloc  job.Allocation
	picks  []pick
	// agg is what one partition's nodes have left in all, over time, kept
	// once a starts-only pass makes its first reservation.
	agg      *aggregate
	scanOnly bool
	topo     *topology.Topology
}

type shapeKey struct {
	part string
	sh   shape
}

// runsKey names what a partition's nodes' free runs for one kind of
// share are read into.
type runsKey struct {
	part string
	key  hostKey
}

// bound says that a job of some kind on nodes nodes or more, running d
// seconds or longer, starts no earlier than lb.
type bound struct {
	nodes int
	d, lb int64
}

// kindOf is the cache key of a request. Where every node runs the same
// share (no task count or GPUs per job to spread), a job on more nodes
// needs more of the same, so the node count moves from the key into the
// bound.
func kindOf(part string, sh *shape) (shapeKey, int) {
	k := shapeKey{part: part, sh: *sh}
	if sh.gpusPerJob == 0 && sh.tasks == uint32(sh.nodes)*sh.minTasksOn() {
		k.sh.nodes, k.sh.tasks = 0, 0
		return k, sh.nodes
	}
	return k, 0
}

// lowerBound is the earliest a job of a kind on nodes nodes running d
// seconds can start.
func (bf *bfPass) lowerBound(key shapeKey, nodes int, d int64) int64 {
	lb := int64(0)
	for _, b := range bf.lowest[key] {
		if b.d <= d && b.nodes <= nodes {
			lb = max(lb, b.lb)
		}
	}
	return lb
}

// learn records a job's earliest start for the jobs of its kind after it;
// a bound another one implies is dropped, so the list stays short.
func (bf *bfPass) learnFrom(from int64, key shapeKey, nodes int, d, lb int64) {
	if from == 0 {
		bf.learn(key, nodes, d, lb)
	}
}

func (bf *bfPass) learn(key shapeKey, nodes int, d, lb int64) {
	list := bf.lowest[key]
	for _, b := range list {
		if b.d <= d && b.nodes <= nodes && b.lb >= lb {
			return
		}
	}
	list = slices.DeleteFunc(list, func(b bound) bool { return b.d >= d && b.nodes >= nodes && b.lb <= lb })
	bf.lowest[key] = append(list, bound{nodes, d, lb})
}

// nodeSpan is a span of start times at which one node can host a share.
type nodeSpan struct {
	span
	node int
}

func (b *Backfill) backfill(s *Snapshot, p *pass) {
	bf := p.sc.backfillPass()
	bf.p, bf.params = p, &b.Params
	bf.res = max(int64(b.Params.Resolution/time.Second), 1)
	bf.window = int64(b.Params.Window / time.Second)
	bf.index, bf.scanOnly, bf.topo = p.index, b.scanOnly, s.Topology
	plan := p.plan
	plan.Planned = map[job.ID]Planned{}
	plan.Backfilled = map[job.ID]bool{}
	maxTest := b.Params.MaxJobTest
	if maxTest <= 0 {
		maxTest = DefaultBackfillParams().MaxJobTest
	}
	if s.StartsOnly && !bf.anyFitsNow(s, maxTest) {
		return
	}
	bf.buildLines(s)

	tested := 0
	perUser := map[uint32]int{}
	for at, j := range p.order {
		if tested >= maxTest {
			break
		}
		if r := p.reason(j); r != job.ReasonResources && r != job.ReasonPriority {
			continue
		}
		if j.Req.Reservation != "" {
			// Jobs in a reservation start in its window on its nodes, which
			// the main pass sees to.
			continue
		}
		if b.Params.MaxJobUser > 0 && perUser[j.Req.UserID] >= b.Params.MaxJobUser {
			continue
		}
		if j.IsHet() {
			if j.IsHetLeader() {
				tested++
				perUser[j.Req.UserID]++
				b.backfillHet(s, bf, j)
			}
			continue
		}
		tested++
		perUser[j.Req.UserID]++
		part := s.Partitions[j.Req.Partition]
		asked := shapeOf(&j.Req, b.defMemPerCPU(part), b.defMemPerNode(part))
		sh := bf.planShape(part, asked)
		d := int64(forever)
		if j.Req.TimeLimit != job.Infinite {
			d = bf.roundUp(int64(j.Req.TimeLimit) * 60)
		}
		for {
			task, reason, more := p.nextTask(j)
			if !more {
				if reason != "" {
					plan.Reasons[j.ID] = reason
				}
				break
			}
			if r := p.policy.Runnable(j); r != "" {
				plan.Reasons[j.ID] = r
				break
			}
			t, alloc, ok := bf.earliest(j, part, &sh, d)
			if !ok {
				break
			}
			if t == 0 && asked.spread && sh.nodes > 1 {
				// Planned on whole nodes; it starts with what it asked.
				if alloc, ok = bf.spreadNow(&asked, alloc); !ok {
					break
				}
			}
			if t == 0 {
				// Held by a limit, it must not take the nodes it would
				// have started on from the jobs after it.
				bill(part, alloc)
				if r := p.policy.Fits(j, alloc); r != "" {
					plan.Reasons[j.ID] = r
					break
				}
			}
			end := int64(forever)
			if d != forever {
				end = t + d
			}
			if s.StartsOnly && t > 0 && bf.agg == nil {
				bf.agg = p.sc.agg.reset(bf.lines, bf.partNodes[part.Name], part.Name)
			}
			bf.reserve(t, end, alloc)
			if t > 0 {
				pl := Planned{Start: s.Now.Add(time.Duration(t) * time.Second)}
				if !s.StartsOnly {
					pl.Nodes = alloc.NodeNames()
				}
				plan.Planned[j.ID] = pl
				if bf.agg != nil && !bf.anyMayStart(p.order[at+1:], maxTest-tested) {
					return
				}
				break
			}
			p.start(j, task, cloneAlloc(alloc))
			plan.Backfilled[j.ID] = true
			if !j.IsArrayMeta() || p.started[j.ID] >= len(j.PendingTasks) {
				delete(plan.Reasons, j.ID)
			}
		}
	}
}

// reserve takes alloc's share of its nodes from t to end on the
// pass's timelines.
func (bf *bfPass) reserve(t, end int64, alloc *job.Allocation) {
	for i := range alloc.Nodes {
		n := bf.index[alloc.Nodes[i].Node]
		bf.lines[n].take(t, end, &alloc.Nodes[i])
		bf.changed = append(bf.changed, n)
		if bf.agg != nil {
			bf.agg.take(t, end, n, &alloc.Nodes[i])
		}
	}
}

// backfillHet plans a heterogeneous job whole: every component from the
// latest time any of them can start (slurmctld's second backfill mode), each
// reserving its nodes for the ones after it; all start now or none does.
func (b *Backfill) backfillHet(s *Snapshot, bf *bfPass, leader *job.Job) {
	p := bf.p
	comps := p.hetComponents(leader)
	if comps == nil {
		return
	}
	shapes := make([]shape, len(comps))
	durs := make([]int64, len(comps))
	from := int64(0)
	for i, c := range comps {
		if r := p.policy.Runnable(c); r != "" {
			p.setHetReason(comps, r)
			return
		}
		part := s.Partitions[c.Req.Partition]
		// A component that named no node count is planned on one node
		// (the main pass spreads it).
		shapes[i] = shapeOf(&c.Req, b.defMemPerCPU(part), b.defMemPerNode(part))
		shapes[i].spread = false
		durs[i] = int64(forever)
		if c.Req.TimeLimit != job.Infinite {
			durs[i] = bf.roundUp(int64(c.Req.TimeLimit) * 60)
		}
		t, _, ok := bf.earliest(c, part, &shapes[i], durs[i])
		if !ok {
			return
		}
		from = max(from, t)
	}
	out := make([]*job.Allocation, len(comps))
	for i, c := range comps {
		part := s.Partitions[c.Req.Partition]
		t, alloc, ok := bf.earliestFrom(c, part, &shapes[i], durs[i], from)
		if !ok {
			return
		}
		// A component that can start only later moves the rest with it;
		// the ones already placed keep their nodes from the earlier time.
		from = max(from, t)
		alloc = cloneAlloc(alloc)
		end := int64(forever)
		if durs[i] != forever {
			end = t + durs[i]
		}
		bf.reserve(t, end, alloc)
		bill(part, alloc)
		out[i] = alloc
	}
	if from > 0 {
		pl := Planned{Start: s.Now.Add(time.Duration(from) * time.Second)}
		for i, c := range comps {
			pc := pl
			if !s.StartsOnly {
				pc.Nodes = out[i].NodeNames()
			}
			p.plan.Planned[c.ID] = pc
		}
		return
	}
	for i, c := range comps {
		if r := p.policy.Fits(c, out[i]); r != "" {
			p.setHetReason(comps, r)
			return
		}
	}
	for i, c := range comps {
		p.start(c, job.NoTask, out[i])
		p.plan.Backfilled[c.ID] = true
		delete(p.plan.Reasons, c.ID)
	}
}

// anyTested reports whether ok holds for any of the jobs the pass would
// test among next (up to budget of them).
func (bf *bfPass) anyTested(next []*job.Job, budget int, ok func(*job.Job) bool) bool {
	for _, j := range next {
		if budget <= 0 {
			break
		}
		if r := bf.p.reason(j); r != job.ReasonResources && r != job.ReasonPriority || j.Req.Reservation != "" {
			continue
		}
		budget--
		if ok(j) {
			return true
		}
	}
	return false
}

// anyMayStart reports whether any of the next jobs the pass would test
// (up to budget of them) might still start now: a job starts now only if
// what it needs at the least, counted over its partition's nodes, is
// free at every moment of its time limit from now (the aggregate, which
// only overstates what any set of nodes has). False means the rest of the
// pass can start nothing.
func (bf *bfPass) anyMayStart(next []*job.Job, budget int) bool {
	g := bf.agg
	g.prefixMin()
	return bf.anyTested(next, budget, func(j *job.Job) bool {
		if j.Req.Partition != g.part {
			// Other nodes: the aggregate says nothing about them.
			return true
		}
		d := int64(forever)
		if j.Req.TimeLimit != job.Infinite {
			d = bf.roundUp(int64(j.Req.TimeLimit) * 60)
		}
		cpus, gpus := g.leastFree(d)
		needC, needG := leastNeed(&j.Req)
		return needC <= cpus && needG <= gpus
	})
}

// anyFitsNow reports whether any of the jobs the pass would test (up to
// budget of them) needs no more than its partition's nodes have left in
// all after the main pass; false means the pass can start nothing.
func (bf *bfPass) anyFitsNow(s *Snapshot, budget int) bool {
	type left struct{ cpus, gpus int64 }
	free := map[string]left{}
	return bf.anyTested(bf.p.order, budget, func(j *job.Job) bool {
		name := j.Req.Partition
		f, ok := free[name]
		if !ok {
			for _, i := range bf.p.usableIn(s.Partitions[name]) {
				n := freeOf(bf.p.nodes[i])
				f.cpus += int64(n.cpus)
				f.gpus += int64(bits.OnesCount64(n.gpus))
			}
			free[name] = f
		}
		cpus, gpus := leastNeed(&j.Req)
		return cpus <= f.cpus && gpus <= f.gpus
	})
}

// cloneAlloc copies an allocation out of the pass's scratch.
func cloneAlloc(a *job.Allocation) *job.Allocation {
	out := &job.Allocation{Nodes: slices.Clone(a.Nodes), Billing: a.Billing}
	for i := range out.Nodes {
		if len(out.Nodes[i].GPUs) == 0 {
			out.Nodes[i].GPUs = nil
		} else {
			out.Nodes[i].GPUs = slices.Clone(out.Nodes[i].GPUs)
		}
	}
	return out
}

// buildLines makes every node's timeline from what is left of it after the
// main pass and the ends of the jobs holding it, running and just started.
func (bf *bfPass) buildLines(s *Snapshot) {
	sc := bf.p.sc
	n := len(bf.p.nodes)
	sc.rel = slices.Grow(sc.rel[:0], n)[:n]
	rel := sc.rel
	for i := range rel {
		rel[i] = rel[i][:0]
	}
	add := func(na job.NodeAlloc, end int64) {
		if i, ok := bf.index[na.Node]; ok {
			rel[i] = append(rel[i], release{at: end, share: na})
		}
	}
	for _, r := range s.Running {
		end := int64(forever)
		if !r.End.IsZero() {
			end = bf.roundUp(int64(r.End.Sub(s.Now).Seconds()))
		}
		for _, na := range r.Alloc.Nodes {
			add(na, end)
		}
	}
	if len(bf.p.plan.Starts) > 0 {
		limits := make(map[job.ID]uint32, len(bf.p.plan.Starts))
		for _, j := range bf.p.order {
			limits[j.ID] = j.Req.TimeLimit
		}
		for _, st := range bf.p.plan.Starts {
			end := int64(forever)
			if l := limits[st.JobID]; l != job.Infinite {
				end = bf.roundUp(int64(l) * 60)
			}
			for _, na := range st.Alloc.Nodes {
				add(na, end)
			}
		}
	}
	// The timelines and their steps are kept from pass to pass.
	sc.lines = slices.Grow(sc.lines[:0], n)[:n]
	sc.linePtrs = slices.Grow(sc.linePtrs[:0], n)[:n]
	bf.lines = sc.linePtrs
	for i, ns := range bf.p.nodes {
		sc.lines[i].init(ns, rel[i])
		bf.lines[i] = &sc.lines[i]
	}
	for i := range rel {
		clear(rel[i])
	}
	// A reservation's window is its own: no job the pass plans may use
	// its nodes then (jobs in it are the main pass's).
	for _, r := range s.Reservations {
		if !r.End.After(s.Now) {
			continue
		}
		from := max(int64(r.Start.Sub(s.Now)/time.Second), 0)
		to := int64(r.End.Sub(s.Now)/time.Second) + 1
		for _, name := range r.Nodes {
			if i, ok := bf.index[name]; ok {
				n := bf.lines[i].ns.Node
				whole := job.NodeAlloc{Node: name, CPUs: n.CPUs, MemMB: n.RealMemory}
				for _, g := range n.GPUs {
					whole.GPUs = append(whole.GPUs, g.Index)
				}
				bf.lines[i].take(from, to, &whole)
			}
		}
	}
	for _, part := range s.Partitions {
		bf.partNodes[part.Name] = bf.p.usableIn(part)
	}
}

// roundUp rounds seconds from now up to the plan's resolution; anything
// due now or overdue (a job past its limit, still being killed) comes back
// one step from now.
func (bf *bfPass) roundUp(sec int64) int64 {
	if sec <= 0 {
		return bf.res
	}
	return (sec + bf.res - 1) / bf.res * bf.res
}

// planShape is the shape backfill plans a job with. A job that named no
// node count (spread) and fits on no single node is planned on the fewest
// of its partition's nodes that hold its tasks when empty, each of them
// whole: a reservation over time needs a node count and shares that do
// not depend on what else runs. The main pass still starts such a job
// over partly used nodes as soon as their free processors add up.
func (bf *bfPass) planShape(part *partition.Partition, sh shape) shape {
	if !sh.spread {
		return sh
	}
	sh.spread = false
	// What an empty node holds depends on the tasks' needs, not on how
	// many there are: one walk of the nodes serves every job alike.
	key := shapeKey{part: part.Name, sh: sh}
	key.sh.tasks, key.sh.nodes = 0, 0
	most, ok := bf.most[key]
	if !ok {
		most = bf.mostTasks(part, sh)
		bf.most[key] = most
	}
	if most == 0 || sh.tasks <= most {
		return sh
	}
	k := (sh.tasks + most - 1) / most
	sh.nodes, sh.tasksPerNode, sh.tasks = int(k), most, k*most
	return sh
}

// mostTasks is the most tasks of a shape one empty node of the partition
// holds.
func (bf *bfPass) mostTasks(part *partition.Partition, sh shape) uint32 {
	var most uint32
	for _, i := range bf.partNodes[part.Name] {
		n := bf.lines[i].ns.Node
		empty := free{cpus: n.CPUs, mem: n.RealMemory}
		for _, g := range n.GPUs {
			if g.Index < 64 {
				empty.gpus |= 1 << g.Index
			}
		}
		t, _ := sh.capacityFree(n, empty)
		most = max(most, t)
	}
	return most
}

// spreadNow places a job that asked for no node count on the nodes its
// whole-node plan found free now, taking only the tasks it asked for.
func (bf *bfPass) spreadNow(asked *shape, plan *job.Allocation) (*job.Allocation, bool) {
	cands := make([]*NodeState, 0, len(plan.Nodes))
	for _, na := range plan.Nodes {
		ns := bf.p.node(na.Node)
		if ns == nil {
			return nil, false
		}
		cands = append(cands, ns)
	}
	return asked.place(cands, nil)
}

// earliest finds the earliest time within the window at which the job can
// hold its nodes for d seconds without touching any reservation, and the
// allocation it would get then.
func (bf *bfPass) earliest(j *job.Job, part *partition.Partition, sh *shape, d int64) (int64, *job.Allocation, bool) {
	return bf.earliestFrom(j, part, sh, d, 0)
}

// earliestFrom is earliest for a start no sooner than from (seconds from
// now). What it finds from a later time says nothing of the job's kind,
// so only an answer from now is learnt.
func (bf *bfPass) earliestFrom(j *job.Job, part *partition.Partition, sh *shape, d, from int64) (int64, *job.Allocation, bool) {
	r := &j.Req
	var required map[string]bool
	if len(r.NodeList) > 0 {
		required = make(map[string]bool, len(r.NodeList))
		for _, n := range r.NodeList {
			i, ok := bf.index[n]
			if !ok || !bf.lines[i].ns.Node.Usable() || !slices.Contains(bf.partNodes[part.Name], i) {
				return 0, nil, false
			}
			required[n] = true
		}
	}
	var excluded map[string]bool
	if len(r.Exclude) > 0 {
		excluded = make(map[string]bool, len(r.Exclude))
		for _, n := range r.Exclude {
			excluded[n] = true
		}
	}
	cacheable := required == nil && excluded == nil
	key, nodes := kindOf(part.Name, sh)
	lb := from
	if cacheable {
		lb = max(lb, bf.lowerBound(key, nodes, d))
		if lb > bf.window {
			return 0, nil, false
		}
	}
	single := sh.nodes == 1 && required == nil
	if single && cacheable && !bf.scanOnly {
		rk := runsKey{part: part.Name, key: sh.hostKey()}
		h := bf.heaps[rk]
		if h == nil {
			h = bf.p.sc.freeHeap(rk.key, bf.lines, bf.partNodes[part.Name], bf.window)
			h.cursor = len(bf.changed)
			bf.heaps[rk] = h
		} else {
			h.refresh(bf.changed)
		}
		t, node, ok, one := h.earliest(d, lb, bf.window, bf.one)
		bf.one = one
		var alloc *job.Allocation
		if ok {
			alloc, ok = bf.placeAt([]nodeSpan{{span{t, t}, node}}, t, sh, d, nil)
		}
		if ok {
			bf.learnFrom(from, key, nodes, d, t)
		} else {
			bf.learnFrom(from, key, nodes, d, bf.window+1)
		}
		return t, alloc, ok
	}
	if !single && cacheable && !bf.scanOnly {
		t, alloc, ok := bf.earliestGrouped(part, sh, d, lb)
		if ok {
			bf.learnFrom(from, key, nodes, d, t)
		} else {
			bf.learnFrom(from, key, nodes, d, bf.window+1)
		}
		return t, alloc, ok
	}
	// A one-node job needs only the earliest start of any node: once one
	// is found, later nodes are read no further than it.
	limit := bf.window
	runKey := sh.hostKey()
	spans := bf.spans[:0]
	for _, i := range bf.partNodes[part.Name] {
		tl := bf.lines[i]
		if excluded != nil && excluded[tl.ns.Node.Name] {
			continue
		}
		n := len(spans)
		if t, _ := sh.capacityFree(tl.ns.Node, tl.mostUntil(bf.window)); t > 0 {
			bf.one = tl.starts(bf.one[:0], &runKey, d, lb, limit)
			for _, sp := range bf.one {
				if single && sp.a >= limit && len(spans) > 0 {
					break
				}
				spans = append(spans, nodeSpan{span: sp, node: i})
				if single {
					limit = min(limit, sp.a)
				}
			}
		}
		if required[bf.lines[i].ns.Node.Name] && len(spans) == n {
			// A required node never free in the window.
			bf.spans = spans
			return 0, nil, false
		}
	}
	bf.spans = spans
	t, alloc, ok := bf.firstFit(spans, sh, d, required)
	if cacheable {
		if ok {
			bf.learnFrom(from, key, nodes, d, t)
		} else {
			bf.learnFrom(from, key, nodes, d, bf.window+1)
		}
	}
	return t, alloc, ok
}

// earliestGrouped is earliest for a job on several nodes that names no
// nodes, read from the groups of nodes alike for its kind of share.
func (bf *bfPass) earliestGrouped(part *partition.Partition, sh *shape, d, lb int64) (int64, *job.Allocation, bool) {
	key := runsKey{part: part.Name, key: sh.hostKey()}
	ki := bf.kinds[key]
	if ki == nil {
		ki = bf.p.sc.kindIndex(key.key, bf.lines, bf.partNodes[part.Name])
		ki.cursor = len(bf.changed)
		bf.kinds[key] = ki
	} else {
		ki.refresh(bf.lines, bf.changed)
	}
	bf.times = ki.candidates(bf.times[:0], sh.nodes, d, lb, bf.window)
	for _, t := range bf.times {
		// The nodes free from t, as firstFit would list them.
		spans := bf.spans[:0]
		for _, i := range ki.nodes {
			if ki.hosts(i, t, d) {
				spans = append(spans, nodeSpan{span{t, t}, i})
				if bf.topo == nil && len(spans) >= sh.nodes {
					break
				}
			}
		}
		bf.spans = spans
		if alloc, ok := bf.placeAt(spans, t, sh, d, nil); ok {
			return t, alloc, true
		}
	}
	return 0, nil, false
}

// maxPlaceTries bounds the start times tried for one job whose node count
// is met but whose tasks or GPUs do not fit the first nodes free then.
const maxPlaceTries = 32

// firstFit sweeps the candidate start times in order and returns the first
// at which enough nodes (the required ones among them) are free for the
// whole run and the job's layout fits on them.
func (bf *bfPass) firstFit(spans []nodeSpan, sh *shape, d int64, required map[string]bool) (int64, *job.Allocation, bool) {
	if len(spans) == 0 {
		return 0, nil, false
	}
	bf.startBuf = slices.Grow(bf.startBuf[:0], len(spans))[:len(spans)]
	bf.endBuf = slices.Grow(bf.endBuf[:0], len(spans))[:len(spans)]
	starts, ends := bf.startBuf, bf.endBuf
	for i, sp := range spans {
		starts[i], ends[i] = sp.a, sp.b
	}
	slices.Sort(starts)
	slices.Sort(ends)
	tries := 0
	ei := 0
	for si := 0; si < len(starts); si++ {
		t := starts[si]
		if si+1 < len(starts) && starts[si+1] == t {
			continue
		}
		for ei < len(ends) && ends[ei] < t {
			ei++
		}
		// Nodes free at t: spans begun by t minus spans over before t.
		// A node's spans never overlap, so this counts nodes.
		if si+1-ei < sh.nodes {
			continue
		}
		alloc, ok := bf.placeAt(spans, t, sh, d, required)
		if ok {
			return t, alloc, true
		}
		if tries++; tries >= maxPlaceTries {
			break
		}
	}
	return 0, nil, false
}

// placeAt lays the job out on the nodes free at t, as the main pass would
// on the same nodes.
func (bf *bfPass) placeAt(spans []nodeSpan, t int64, sh *shape, d int64, required map[string]bool) (*job.Allocation, bool) {
	end := int64(forever)
	if d != forever {
		end = t + d
	}
	// The candidates' states live in the pass's scratch, sized up front
	// so that the pointers to them stay put.
	bf.states = slices.Grow(bf.states[:0], len(spans))
	bf.flags = bf.flags[:0]
	cands := bf.cands[:0]
	others := 0
	last := -1
	// With a topology every node free at t is a candidate, for topoOrder
	// to choose among.
	limit := sh.nodes
	if bf.topo != nil && sh.nodes > 1 && len(required) == 0 {
		limit = len(spans)
	}
	for _, sp := range spans {
		if sp.a > t || sp.b < t || sp.node == last {
			continue
		}
		last = sp.node
		tl := bf.lines[sp.node]
		isReq := required[tl.ns.Node.Name]
		if !isReq {
			if others >= limit {
				continue
			}
			others++
		}
		var ns NodeState
		ns, bf.flags = freeStateIn(bf.flags, tl.ns.Node, tl.over(t, end))
		bf.states = append(bf.states, ns)
		cands = append(cands, &bf.states[len(bf.states)-1])
	}
	bf.cands = cands
	if len(required) > 0 {
		n := 0
		for _, ns := range cands {
			if required[ns.Node.Name] {
				n++
			}
		}
		if n < len(required) {
			return nil, false
		}
	}
	if bf.topo != nil && sh.nodes > 1 && len(required) == 0 {
		cands = topoOrder(bf.topo, sh, cands)
	}
	// The allocation is the pass's scratch: a job that starts takes a copy.
	bf.picks = slices.Grow(bf.picks[:0], sh.nodes+len(required)+1)
	return sh.placeInto(&bf.alloc, bf.picks, cands, required)
}

// bfNumbers are the numeric bf_* options: their range and where each
// goes.
var bfNumbers = map[string]struct {
	lo, hi int
	set    func(p *BackfillParams, n int)
}{
	"bf_max_job_test": {1, 1_000_000, func(p *BackfillParams, n int) { p.MaxJobTest = n }},
	"bf_window":       {1, 43_200, func(p *BackfillParams, n int) { p.Window = time.Duration(n) * time.Minute }},
	"bf_resolution":   {1, 3_600, func(p *BackfillParams, n int) { p.Resolution = time.Duration(n) * time.Second }},
	"bf_max_job_user": {0, 1_000_000, func(p *BackfillParams, n int) { p.MaxJobUser = n }},
	"bf_interval":     {1, 10_800, func(p *BackfillParams, n int) { p.Interval = time.Duration(n) * time.Second }},
}

// ParseBackfillParams reads the bf_* options of SchedulerParameters
// ("bf_window=2880,bf_continue,..."). As slurmctld does, an option with a
// bad value keeps its default and is reported in warnings; options that
// are not backfill's are left to others.
func ParseBackfillParams(s string) (p BackfillParams, warnings []string) {
	p = DefaultBackfillParams()
	for _, opt := range strings.Split(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
		name = strings.ToLower(name)
		if name == "bf_continue" {
			p.Continue = true
			continue
		}
		spec, ok := bfNumbers[name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(val)
		if !hasVal || err != nil || n < spec.lo || n > spec.hi {
			warnings = append(warnings, fmt.Sprintf("Invalid SchedulerParameters %s: %s", name, val))
			continue
		}
		spec.set(&p, n)
	}
	return p, warnings
}
