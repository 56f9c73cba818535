package sched

import (
	"github.com/droverhq/drover/internal/acctpolicy"
	"math/bits"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Defaults carries the cluster-wide defaults that shape a request.
type Defaults struct {
	DefMemPerCPU  uint64
	DefMemPerNode uint64
}

// FIFO is the first scheduler: per partition, jobs in priority order (then
// submission order) start while they fit; the first job that does not fit
// blocks the rest of its partition, which wait with reason Priority, as
// slurmctld's main scheduling loop does without backfill.
type FIFO struct {
	Defaults Defaults
}

// Schedule implements Scheduler.
func (f *FIFO) Schedule(s *Snapshot) *Plan {
	p := f.mainPass(s)
	defer p.done()
	return p.plan
}

// pass is one cycle's working state: the plan so far and what its starts
// have taken.
type pass struct {
	plan *Plan
	// order is every pending job, highest priority first.
	order []*job.Job
	nodes []*NodeState
	// index is each node's position in nodes by name.
	index map[string]int
	sc    *scratch
	// quiet passes (Snapshot.StartsOnly) leave out the reasons nobody reads.
	quiet        bool
	arrayRunning map[job.ID]uint32
	// started holds the jobs that started in this cycle, with how many
	// tasks for an array meta-record.
	started map[job.ID]int
	// partNodes are the indices (into nodes) of each partition's usable
	// nodes, in configuration order, built on first use.
	partNodes map[string][]int
	// kept says the nodes are an in-place snapshot's, the same as last
	// cycle's: the usable nodes and candidate lists found then still hold.
	kept bool
	// partCands are the candidate lists of jobs that exclude no node, by
	// partition, built on first use.
	partCands map[string][]*NodeState
	// preempted are the running jobs this cycle chose to preempt.
	preempted map[job.ID]bool
	// policy is the snapshot's limits (nil: none).
	policy *acctpolicy.Policy
	// het holds the pending components of each heterogeneous job by
	// its leader's id, in offset order.
	het map[job.ID][]*job.Job
}

// orderKey is what the pass orders pending jobs by.
type orderKey struct {
	tier, prio uint32
	submit     time.Time
	j          *job.Job
}

// reason is a job's pending reason so far in the pass; a quiet pass
// records none for the jobs behind a blocked one, which wait for
// Priority.
func (p *pass) reason(j *job.Job) job.Reason {
	if r, ok := p.plan.Reasons[j.ID]; ok || !p.quiet || p.started[j.ID] > 0 {
		return r
	}
	return job.ReasonPriority
}

// node returns the pass's copy of a node by name (nil: no such node).
func (p *pass) node(name string) *NodeState {
	if i, ok := p.index[name]; ok {
		return p.nodes[i]
	}
	return nil
}

// done hands the pass's memory back for the next cycle.
func (p *pass) done() {
	clear(p.sc.order)
	clear(p.sc.cands)
	if p.sc.inPlace == nil {
		for _, c := range p.sc.partCands {
			clear(c)
		}
	}
	// Nothing of this cycle's is kept alive by the pooled memory.
	p.sc.bf.p, p.sc.bf.params, p.sc.bf.topo = nil, nil, nil
	scratchPool.Put(p.sc)
	p.sc = nil
}

// usableIn returns the indices of a partition's usable nodes.
func (p *pass) usableIn(part *partition.Partition) []int {
	if idx, ok := p.partNodes[part.Name]; ok {
		return idx
	}
	if idx, ok := p.sc.keptIdx[part.Name]; ok && p.kept {
		p.partNodes[part.Name] = idx
		return idx
	}
	member := p.sc.members(part, len(p.nodes))
	idx := p.sc.partIdx[part.Name][:0]
	for i, ns := range p.nodes {
		if member[i] && ns.Node.Usable() {
			idx = append(idx, i)
		}
	}
	p.sc.partIdx[part.Name] = idx
	p.partNodes[part.Name] = idx
	if p.sc.inPlace != nil {
		p.sc.keptIdx[part.Name] = idx
	}
	return idx
}

// mainPass starts jobs in priority order while they fit, per partition, as
// slurmctld's main scheduling loop does.
func (f *FIFO) mainPass(s *Snapshot) *pass {
	sc := scratchPool.Get().(*scratch)
	nodes, kept := sc.workingNodes(s)
	hint := len(s.Pending)
	if s.StartsOnly {
		// Jobs behind a blocked one get no reason: few entries.
		hint = 0
	}
	p := &pass{
		plan:         &Plan{Reasons: make(map[job.ID]job.Reason, hint)},
		index:        sc.index,
		sc:           sc,
		quiet:        s.StartsOnly,
		arrayRunning: make(map[job.ID]uint32, len(s.ArrayRunning)),
		started:      map[job.ID]int{},
		partNodes:    map[string][]int{},
		partCands:    map[string][]*NodeState{},
		policy:       s.Policy,
	}
	// The sort keys are read once a job, not once a comparison.
	keys := slices.Grow(sc.keys[:0], len(s.Pending))
	for _, j := range s.Pending {
		keys = append(keys, orderKey{tier: f.tier(s, j), prio: j.Priority, submit: j.SubmitTime, j: j})
	}
	slices.SortStableFunc(keys, func(a, b orderKey) int {
		if a.tier != b.tier {
			return cmpDesc(a.tier, b.tier)
		}
		if a.prio != b.prio {
			return cmpDesc(a.prio, b.prio)
		}
		if c := a.submit.Compare(b.submit); c != 0 {
			return c
		}
		return cmpAsc(a.j.ID, b.j.ID)
	})
	p.order = slices.Grow(sc.order[:0], len(keys))
	for _, k := range keys {
		p.order = append(p.order, k.j)
	}
	clear(keys)
	sc.keys = keys[:0]
	sc.order = p.order
	p.nodes, p.kept = nodes, kept
	for k, v := range s.ArrayRunning {
		p.arrayRunning[k] = v
	}
	p.het = hetGroups(s.Pending)
	blocked := map[string]bool{}
	plan := p.plan

	for _, j := range p.order {
		if j.IsHet() {
			// A heterogeneous job is placed whole, when its leader's
			// turn comes.
			if j.IsHetLeader() {
				f.startHet(s, p, j, blocked)
			}
			continue
		}
		part := s.Partitions[j.Req.Partition]
		if r, ok := f.ineligible(s, j, part); ok {
			plan.Reasons[j.ID] = r
			continue
		}
		if r := p.policy.Runnable(j); r != "" {
			// Held by a limit: the jobs behind it go on.
			plan.Reasons[j.ID] = r
			continue
		}
		if blocked[part.Name] {
			if !p.quiet {
				plan.Reasons[j.ID] = job.ReasonPriority
			}
			continue
		}
		sh := shapeOf(&j.Req, f.defMemPerCPU(part), f.defMemPerNode(part))
		cands, required, reqDown := p.candidates(part, &j.Req)
		if reqDown {
			// Its own nodes are out of service: the job waits, the rest of
			// the partition does not.
			plan.Reasons[j.ID] = job.ReasonReqNodeNotAvail
			continue
		}
		cands, r := p.reserved(s, j, cands, required)
		if r != "" {
			// Waiting for its reservation, or for nodes it named that a
			// reservation holds: the rest of the partition goes on.
			plan.Reasons[j.ID] = r
			continue
		}
		if s.Topology != nil && sh.nodes > 1 && len(required) == 0 {
			cands = topoOrder(s.Topology, &sh, cands)
		}
		for {
			task, reason, more := p.nextTask(j)
			if !more {
				if reason != "" {
					plan.Reasons[j.ID] = reason
				}
				break
			}
			if p.started[j.ID] > 0 {
				// The array's tasks started in this pass count too.
				if r := p.policy.Runnable(j); r != "" {
					plan.Reasons[j.ID] = r
					break
				}
			}
			var alloc *job.Allocation
			ok := fitsInAll(cands, &j.Req)
			if ok {
				alloc, ok = sh.place(cands, required)
			}
			if ok {
				bill(part, alloc)
				if r := p.policy.Fits(j, alloc); r != "" {
					plan.Reasons[j.ID] = r
					break
				}
			}
			if ok && waitsForSwitches(s.Topology, j, alloc, s.Now) {
				// Holding out for fewer switches: the job waits, the rest of
				// the partition goes on.
				plan.Reasons[j.ID] = job.ReasonResources
				break
			}
			if !ok {
				plan.Reasons[j.ID] = job.ReasonResources
				blocked[part.Name] = true
				if s.Preempt || s.PreemptQOS {
					p.preemptFor(s, j, part, &sh, cands, required)
				}
				break
			}
			p.start(j, task, alloc)
		}
	}
	return p
}

// hetGroups gathers the pending components of heterogeneous jobs by
// leader, in offset order (nil when there are none).
func hetGroups(pending []*job.Job) map[job.ID][]*job.Job {
	var het map[job.ID][]*job.Job
	for _, j := range pending {
		if !j.IsHet() {
			continue
		}
		if het == nil {
			het = map[job.ID][]*job.Job{}
		}
		het[j.HetJobID] = append(het[j.HetJobID], j)
	}
	for _, comps := range het {
		slices.SortFunc(comps, func(a, b *job.Job) int { return cmpAsc(a.HetJobOffset, b.HetJobOffset) })
	}
	return het
}

// hetComponents returns the pending components of leader's job, or nil
// when some are not pending (the job is already partly gone).
func (p *pass) hetComponents(leader *job.Job) []*job.Job {
	comps := p.het[leader.ID]
	if len(comps) != int(leader.HetSize) {
		return nil
	}
	return comps
}

// setHetReason gives every component the same pending reason.
func (p *pass) setHetReason(comps []*job.Job, r job.Reason) {
	for _, c := range comps {
		p.plan.Reasons[c.ID] = r
	}
}

// startHet starts all the components of a heterogeneous job at once, or
// none: each is placed as a job of its own on what the ones before it
// left, as slurmctld tests every component before it starts any.
func (f *FIFO) startHet(s *Snapshot, p *pass, leader *job.Job, blocked map[string]bool) {
	comps := p.hetComponents(leader)
	if comps == nil {
		return
	}
	for _, c := range comps {
		part := s.Partitions[c.Req.Partition]
		if r, ok := f.ineligible(s, c, part); ok {
			p.setHetReason(comps, r)
			return
		}
		if r := p.policy.Runnable(c); r != "" {
			p.setHetReason(comps, r)
			return
		}
		if blocked[part.Name] {
			p.setHetReason(comps, job.ReasonPriority)
			return
		}
	}
	allocs := make([]*job.Allocation, 0, len(comps))
	fail := func(r job.Reason) {
		for _, a := range allocs {
			unconsume(p, a)
		}
		p.setHetReason(comps, r)
	}
	for _, c := range comps {
		part := s.Partitions[c.Req.Partition]
		sh := shapeOf(&c.Req, f.defMemPerCPU(part), f.defMemPerNode(part))
		cands, required, reqDown := p.candidates(part, &c.Req)
		if reqDown {
			fail(job.ReasonReqNodeNotAvail)
			return
		}
		cands, r := p.reserved(s, c, cands, required)
		if r != "" {
			fail(r)
			return
		}
		if s.Topology != nil && sh.nodes > 1 && len(required) == 0 {
			cands = topoOrder(s.Topology, &sh, cands)
		}
		var alloc *job.Allocation
		ok := fitsInAll(cands, &c.Req)
		if ok {
			alloc, ok = sh.place(cands, required)
		}
		if !ok {
			fail(job.ReasonResources)
			// Like any job that does not fit, it holds back the jobs
			// behind it in its partitions.
			for _, c := range comps {
				blocked[c.Req.Partition] = true
			}
			return
		}
		bill(part, alloc)
		if r := p.policy.Fits(c, alloc); r != "" {
			fail(r)
			return
		}
		consume(p, alloc)
		allocs = append(allocs, alloc)
	}
	for i, c := range comps {
		unconsume(p, allocs[i])
		p.start(c, job.NoTask, allocs[i])
		delete(p.plan.Reasons, c.ID)
	}
}

// nextTask returns the task to start next for a job (job.NoTask for a
// plain job), or more=false with the reason it may not start another.
func (p *pass) nextTask(j *job.Job) (task uint32, reason job.Reason, more bool) {
	started := p.started[j.ID]
	throttled := j.IsArray() && j.Req.Array.MaxRunning > 0 && p.arrayRunning[j.ArrayJobID] >= j.Req.Array.MaxRunning
	switch {
	case j.IsArrayMeta():
		if started >= len(j.PendingTasks) {
			return 0, "", false
		}
		if throttled {
			return 0, job.ReasonArrayTaskLimit, false
		}
		return j.PendingTasks[started], "", true
	case started > 0:
		return 0, "", false
	case throttled:
		// A task split off its array still counts against %N.
		return 0, job.ReasonArrayTaskLimit, false
	}
	return job.NoTask, "", true
}

// bill gives an allocation its billing TRES from its partition's
// TRESBillingWeights.
func bill(part *partition.Partition, alloc *job.Allocation) {
	if part == nil || len(part.BillingWeights) == 0 {
		return
	}
	t := job.TRES{CPUs: alloc.TotalCPUs(), Nodes: uint32(len(alloc.Nodes)), GPUs: uint64(alloc.TotalGPUs())}
	for _, na := range alloc.Nodes {
		t.MemMB += na.MemMB
	}
	alloc.Billing = part.BillingWeights.Billing(t.Counts(), false)
}

// start records a start in the plan and takes its resources.
func (p *pass) start(j *job.Job, task uint32, alloc *job.Allocation) {
	p.policy.Started(j, alloc)
	consume(p, alloc)
	p.plan.Starts = append(p.plan.Starts, Start{JobID: j.ID, Task: task, Alloc: *alloc})
	p.started[j.ID]++
	if j.IsArray() {
		p.arrayRunning[j.ArrayJobID]++
	}
}

func (f *FIFO) tier(s *Snapshot, j *job.Job) uint32 {
	if p := s.Partitions[j.Req.Partition]; p != nil {
		return p.PriorityTier
	}
	return 0
}

func (f *FIFO) defMemPerCPU(p *partition.Partition) uint64 {
	if p.DefMemPerCPU > 0 || p.DefMemPerNode > 0 {
		return p.DefMemPerCPU
	}
	return f.Defaults.DefMemPerCPU
}

func (f *FIFO) defMemPerNode(p *partition.Partition) uint64 {
	if p.DefMemPerCPU > 0 || p.DefMemPerNode > 0 {
		return p.DefMemPerNode
	}
	return f.Defaults.DefMemPerNode
}

// ineligible returns the reason a job cannot be considered at all.
func (f *FIFO) ineligible(s *Snapshot, j *job.Job, part *partition.Partition) (job.Reason, bool) {
	switch {
	case j.Hold == job.HeldUser:
		return job.ReasonHeldUser, true
	case j.Hold == job.HeldAdmin:
		return job.ReasonHeldAdmin, true
	case s.Blocked[j.ID] != "":
		return s.Blocked[j.ID], true
	case part == nil:
		return job.ReasonBadConstraints, true
	case part.State == partition.Inactive:
		return job.ReasonPartitionInactive, true
	case !part.RunsJobs():
		return job.ReasonPartitionDown, true
	case !j.Req.BeginTime.IsZero() && j.Req.BeginTime.After(s.Now):
		return job.ReasonBeginTime, true
	case part.MaxTime != partition.Infinite && (j.Req.TimeLimit == job.Infinite || j.Req.TimeLimit > part.MaxTime):
		return job.ReasonPartitionTimeLimit, true
	case part.MaxNodes != 0 && part.MaxNodes != partition.Infinite && max(j.Req.MinNodes, 1) > part.MaxNodes:
		return job.ReasonPartitionNodeLimit, true
	}
	return "", false
}

// candidates returns the partition's usable nodes minus excluded ones, the
// set of required nodes, and whether a required node is unusable.
func (p *pass) candidates(part *partition.Partition, r *job.Request) ([]*NodeState, map[string]bool, bool) {
	var excluded map[string]bool
	if len(r.Exclude) > 0 {
		excluded = make(map[string]bool, len(r.Exclude))
		for _, n := range r.Exclude {
			excluded[n] = true
		}
	}
	var required map[string]bool
	if len(r.NodeList) > 0 {
		required = make(map[string]bool, len(r.NodeList))
		for _, n := range r.NodeList {
			ns := p.node(n)
			if ns == nil || !ns.Node.Usable() {
				return nil, nil, true
			}
			required[n] = true
		}
	}
	idx := p.usableIn(part)
	if excluded == nil {
		// The same list serves every job of the partition in this pass:
		// the pointers are the pass's own nodes, which starts change in
		// place, and no caller writes into it.
		if c, ok := p.partCands[part.Name]; ok {
			return c, required, false
		}
		if p.kept && p.sc.keptCands[part.Name] {
			c := p.sc.partCands[part.Name]
			p.partCands[part.Name] = c
			return c, required, false
		}
		c := slices.Grow(p.sc.partCands[part.Name][:0], len(idx))
		for _, i := range idx {
			c = append(c, p.nodes[i])
		}
		p.sc.partCands[part.Name] = c
		p.partCands[part.Name] = c
		if p.sc.inPlace != nil {
			p.sc.keptCands[part.Name] = true
		}
		return c, required, false
	}
	// The list lives until the next job's: nothing keeps it.
	out := slices.Grow(p.sc.cands[:0], len(idx))
	for _, i := range idx {
		if ns := p.nodes[i]; excluded == nil || !excluded[ns.Node.Name] {
			out = append(out, ns)
		}
	}
	p.sc.cands = out
	return out, required, false
}

// fitsInAll reports whether what a job needs at the least is no more
// than its candidate nodes have left in all: a cheap refusal of a job that
// cannot fit, before placement reads every node.
func fitsInAll(cands []*NodeState, r *job.Request) bool {
	needC, needG := leastNeed(r)
	var cpus, gpus int64
	for _, ns := range cands {
		f := freeOf(ns)
		cpus += int64(f.cpus)
		gpus += int64(bits.OnesCount64(f.gpus))
		if cpus >= needC && gpus >= needG {
			return true
		}
	}
	return false
}

func consume(p *pass, a *job.Allocation) {
	for _, na := range a.Nodes {
		ns := p.node(na.Node)
		ns.Used.CPUs += na.CPUs
		ns.Used.MemMB += na.MemMB
		ns.Used.Jobs++
		for _, g := range na.GPUs {
			// A caller's own nodes (InPlace) may flag fewer GPUs than
			// they have; a copy's flags are sized to the node.
			for len(ns.Used.GPUs) <= g {
				ns.Used.GPUs = append(ns.Used.GPUs, false)
			}
			ns.Used.GPUs[g] = true
		}
	}
}

// unconsume gives back what consume took.
func unconsume(p *pass, a *job.Allocation) {
	for _, na := range a.Nodes {
		ns := p.node(na.Node)
		ns.Used.CPUs -= na.CPUs
		ns.Used.MemMB -= na.MemMB
		ns.Used.Jobs--
		for _, g := range na.GPUs {
			if g < len(ns.Used.GPUs) {
				ns.Used.GPUs[g] = false
			}
		}
	}
}

// Feasible reports whether a request could ever run in a partition, given
// the configured nodes, and otherwise returns Slurm's refusal, as slurmctld
// refuses at submission what no node configuration can satisfy.
func Feasible(r *job.Request, part *partition.Partition, nodes []*node.Node, d Defaults) error {
	defCPU, defNode := d.DefMemPerCPU, d.DefMemPerNode
	if part.DefMemPerCPU > 0 || part.DefMemPerNode > 0 {
		defCPU, defNode = part.DefMemPerCPU, part.DefMemPerNode
	}
	sh := shapeOf(r, defCPU, defNode)
	inPart := make(map[string]*node.Node)
	for _, n := range nodes {
		if part.HasNode(n.Name) {
			inPart[n.Name] = n
		}
	}
	for _, name := range r.NodeList {
		if _, ok := inPart[name]; !ok {
			return slurmerr.New(slurmerr.RequestedNodesNotInPartition, "Requested nodes %s not in partition %s", name, part.Name)
		}
	}
	if sh.nodes > len(inPart) {
		return slurmerr.New(slurmerr.RequestedNodeConfigUnavailable, "")
	}
	if sh.tasks < uint32(sh.nodes) && r.NumTasks > 0 {
		return slurmerr.New(slurmerr.InvalidNodeCount, "%d tasks cannot run on %d nodes", sh.tasks, sh.nodes)
	}
	excluded := map[string]bool{}
	for _, n := range r.Exclude {
		excluded[n] = true
	}
	var fit int
	var totalTasks uint32
	var totalGPUs uint32
	for _, n := range nodes {
		if inPart[n.Name] == nil || excluded[n.Name] || !sh.fitsConfig(n) {
			continue
		}
		fit++
		empty := NodeState{Node: n, Used: node.Alloc{GPUs: make([]bool, len(n.GPUs))}}
		t, g := sh.capacity(&empty)
		totalTasks += t
		totalGPUs += uint32(len(g))
	}
	if fit < sh.nodes || totalTasks < sh.tasks || (sh.gpusPerJob > 0 && totalGPUs < sh.gpusPerJob) {
		return slurmerr.New(slurmerr.RequestedNodeConfigUnavailable, "")
	}
	return nil
}

func cmpDesc[T ~uint32](a, b T) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func cmpAsc[T ~uint32](a, b T) int { return -cmpDesc(a, b) }

// reserved removes from a job's candidate nodes those advance reservations
// keep from it: a job in a reservation runs on its nodes (any others too
// with FLEX) while its window is open; any other job stays off nodes a
// reservation holds now or before the job's time limit would end. It
// returns the reason the job must wait when the reservations alone decide
// it (its reservation is not open, or a node it named is reserved).
func (p *pass) reserved(s *Snapshot, j *job.Job, cands []*NodeState, required map[string]bool) ([]*NodeState, job.Reason) {
	if len(s.Reservations) == 0 {
		if j.Req.Reservation != "" {
			return nil, job.ReasonReservationDeleted
		}
		return cands, ""
	}
	var own *reservation.Reservation
	if j.Req.Reservation != "" {
		for _, r := range s.Reservations {
			if r.Name == j.Req.Reservation {
				own = r
			}
		}
		if own == nil {
			return nil, job.ReasonReservationDeleted
		}
		if !own.Active(s.Now) {
			return nil, job.ReasonReservation
		}
	}
	end := s.Now.Add(100 * 365 * 24 * time.Hour)
	if j.Req.TimeLimit != job.Infinite {
		end = s.Now.Add(time.Duration(j.Req.TimeLimit) * time.Minute)
	}
	kept := cands[:0:0]
	for _, ns := range cands {
		name := ns.Node.Name
		ok := own == nil || own.HasNode(name) || own.Has(reservation.Flex)
		for _, r := range s.Reservations {
			if r != own && r.HasNode(name) && r.Overlaps(s.Now, end) {
				ok = false
			}
		}
		if ok {
			kept = append(kept, ns)
		} else if required[name] {
			return nil, job.ReasonReqNodeReserved
		}
	}
	return kept, ""
}
