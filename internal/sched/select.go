package sched

import (
	"math/bits"
	"slices"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
)

// shape is a job's resource request after defaults, per node.
type shape struct {
	nodes       int
	tasks       uint32
	cpusPerTask uint32
	// tasksPerNode is fixed when --ntasks-per-node was given (0: free).
	tasksPerNode uint32
	exclusive    bool
	memPerNode   uint64 // MB; 0 with memAll false: not tracked
	memPerCPU    uint64
	memAll       bool // take the node's whole memory (--mem=0, no default)
	gpusPerNode  uint32
	gpusPerJob   uint32
	gpuType      string
	// spread says the job named no node count (-n alone, no -N, -w or
	// --ntasks-per-node): as cons_tres does, its tasks go on as many
	// nodes as it takes, nodes at least one task each.
	spread bool
}

// shapeOf derives the per-node request Slurm's cons_tres would compute.
func shapeOf(r *job.Request, defMemPerCPU, defMemPerNode uint64) shape {
	s := shape{
		nodes:        int(max(r.MinNodes, 1)),
		cpusPerTask:  max(r.CPUsPerTask, 1),
		tasksPerNode: r.TasksPerNode,
		exclusive:    r.Exclusive,
		gpusPerNode:  r.GPUsPerNode,
		gpusPerJob:   r.GPUsPerJob,
		gpuType:      r.GPUType,
	}
	if len(r.NodeList) > s.nodes {
		s.nodes = len(r.NodeList)
	}
	s.tasks = r.NumTasks
	s.spread = r.MinNodes == 0 && r.MaxNodes == 0 && len(r.NodeList) == 0 && r.TasksPerNode == 0 && r.NumTasks > 1
	if s.tasks == 0 {
		if s.tasksPerNode > 0 {
			s.tasks = s.tasksPerNode * uint32(s.nodes)
		} else {
			s.tasks = uint32(s.nodes)
		}
	}
	// More tasks than nodes with a fixed per-node count needs more nodes.
	if s.tasksPerNode > 0 && r.MaxNodes == 0 && r.MinNodes == 0 {
		need := int((s.tasks + s.tasksPerNode - 1) / s.tasksPerNode)
		if need > s.nodes {
			s.nodes = need
		}
	}
	switch {
	case r.MemPerNode > 0:
		s.memPerNode = r.MemPerNode
	case r.MemPerCPU > 0:
		s.memPerCPU = r.MemPerCPU
	case defMemPerCPU > 0:
		s.memPerCPU = defMemPerCPU
	case defMemPerNode > 0:
		s.memPerNode = defMemPerNode
	default:
		s.memAll = true
	}
	return s
}

// minTasksOn is the fewest tasks a node of the job must run.
func (s shape) minTasksOn() uint32 {
	if s.tasksPerNode > 0 {
		return s.tasksPerNode
	}
	return 1
}

// memFor returns the memory a node share needs for cpus CPUs.
func (s shape) memFor(n *node.Node, cpus uint32) uint64 {
	switch {
	case s.memAll || s.exclusive && s.memPerNode == 0 && s.memPerCPU == 0:
		return n.RealMemory
	case s.memPerNode > 0:
		return s.memPerNode
	default:
		return s.memPerCPU * uint64(cpus)
	}
}

// free is what a node has left for new jobs: now, or over a stretch of
// the backfill plan.
type free struct {
	cpus uint32
	mem  uint64
	// gpus has bit i set when the GPU of device index i is free. Indices
	// from 64 up are never offered (nodes carry at most 16 today).
	gpus uint64
	// jobs counts the jobs holding a share: an exclusive request needs 0.
	jobs int
}

// freeOf is what a node has left now.
func freeOf(ns *NodeState) free {
	n := ns.Node
	f := free{
		cpus: n.CPUs - min(ns.Used.CPUs, n.CPUs),
		mem:  n.RealMemory - min(ns.Used.MemMB, n.RealMemory),
		jobs: ns.Used.Jobs,
	}
	for _, g := range n.GPUs {
		if g.Index < 64 && !(g.Index < len(ns.Used.GPUs) && ns.Used.GPUs[g.Index]) {
			f.gpus |= 1 << g.Index
		}
	}
	return f
}

// gpuIndices lists the GPUs of a mask in the node's device order.
func gpuIndices(n *node.Node, mask uint64) []int {
	var out []int
	for _, g := range n.GPUs {
		if g.Index < 64 && mask&(1<<g.Index) != 0 {
			out = append(out, g.Index)
		}
	}
	return out
}

// capacity is how many tasks a node can take now, and the GPUs it offers.
func (s shape) capacity(ns *NodeState) (tasks uint32, gpus []int) {
	t, mask := s.capacityFree(ns.Node, freeOf(ns))
	if t == 0 {
		return 0, nil
	}
	return t, gpuIndices(ns.Node, mask)
}

// capacityFree is how many tasks a node with f left can take, and the
// free GPUs of the requested type.
func (s shape) capacityFree(n *node.Node, f free) (tasks uint32, gpus uint64) {
	if s.exclusive && f.jobs > 0 {
		return 0, 0
	}
	tasks = f.cpus / s.cpusPerTask
	if s.tasksPerNode > 0 {
		tasks = min(tasks, s.tasksPerNode)
	}
	if tasks < s.minTasksOn() {
		return 0, 0
	}
	// Memory bounds the CPUs, and hence tasks, a node can give.
	switch {
	case s.memAll || (s.exclusive && s.memPerNode == 0 && s.memPerCPU == 0):
		if f.mem < n.RealMemory {
			return 0, 0
		}
	case s.memPerNode > 0:
		if s.memPerNode > f.mem {
			return 0, 0
		}
	case s.memPerCPU > 0:
		tasks = min(tasks, uint32(f.mem/(s.memPerCPU*uint64(s.cpusPerTask))))
		if tasks < s.minTasksOn() {
			return 0, 0
		}
	}
	gpus = f.gpus
	if s.gpuType != "" {
		gpus &= typeMask(n, s.gpuType)
	}
	count := uint32(bits.OnesCount64(gpus))
	if count < s.gpusPerNode || (s.gpusPerJob > 0 && count == 0) {
		return 0, 0
	}
	return tasks, gpus
}

// shareTest decides whether a node can host a job's share (a one-node
// job all of it, a job on several nodes at least its minimum on each),
// compiled for one node: the least of each resource a step must have
// left.
type shareTest struct {
	never     bool
	exclusive bool
	cpus      uint32
	mem       uint64
	gpuMask   uint64
	gpus      int
}

// hostKey is what decides whether a node can host a share of a job,
// whatever the node: shapes with the same key host alike everywhere, so
// they share free runs, heaps and groups.
type hostKey struct {
	never, exclusive bool
	cpus             uint32
	// wholeMem asks for the node's whole memory; mem is a fixed amount.
	wholeMem bool
	mem      uint64
	gpuType  string
	gpus     int
}

// hostKey is the shape's hostKey: a one-node job needs all of itself on
// its node, a job on several nodes only its minimum on each.
func (s shape) hostKey() hostKey {
	need := s.minTasksOn()
	gpus := s.gpusPerNode
	if s.gpusPerJob > 0 {
		gpus = max(gpus, 1)
	}
	if s.nodes == 1 {
		need = max(need, s.tasks)
		gpus = max(gpus, s.gpusPerJob)
	}
	k := hostKey{exclusive: s.exclusive, cpus: need * s.cpusPerTask, gpuType: s.gpuType, gpus: int(gpus)}
	if s.tasksPerNode > 0 && s.tasksPerNode < need {
		k.never = true
	}
	switch {
	case s.memAll || (s.exclusive && s.memPerNode == 0 && s.memPerCPU == 0):
		k.wholeMem = true
	case s.memPerNode > 0:
		k.mem = s.memPerNode
	case s.memPerCPU > 0:
		k.mem = uint64(need) * s.memPerCPU * uint64(s.cpusPerTask)
	}
	return k
}

// testOn compiles the share test for node n.
func (k *hostKey) testOn(n *node.Node) shareTest {
	t := shareTest{never: k.never, exclusive: k.exclusive, cpus: k.cpus, mem: k.mem, gpuMask: ^uint64(0), gpus: k.gpus}
	if k.wholeMem {
		t.mem = n.RealMemory
	}
	if k.gpuType != "" {
		t.gpuMask = typeMask(n, k.gpuType)
	}
	return t
}

// hosts reports whether a node with f left hosts a share.
func (t *shareTest) hosts(f free) bool {
	return !t.never && (!t.exclusive || f.jobs == 0) && f.cpus >= t.cpus && f.mem >= t.mem &&
		bits.OnesCount64(f.gpus&t.gpuMask) >= t.gpus
}

// leastNeed is the least a job needs over all its nodes: CPUs and GPUs.
func leastNeed(r *job.Request) (cpus, gpus int64) {
	nodes := int64(max(r.MinNodes, 1, uint32(len(r.NodeList))))
	tasks := max(int64(r.NumTasks), nodes*int64(max(r.TasksPerNode, 1)))
	// GPUs per job are spread over the nodes, topping up the per-node ones.
	return tasks * int64(max(r.CPUsPerTask, 1)), max(nodes*int64(r.GPUsPerNode), int64(r.GPUsPerJob))
}

// packsGPUs reports whether placement packs the job onto the busiest GPU
// node that fits: a one-node GPU job that does not want the node to
// itself.
func (s shape) packsGPUs() bool {
	return s.nodes == 1 && !s.exclusive && (s.gpusPerNode > 0 || s.gpusPerJob > 0)
}

// freeGPUCount is how many of a node's GPUs are free now.
func freeGPUCount(ns *NodeState) int {
	return bits.OnesCount64(freeOf(ns).gpus)
}

// typeMask has the bits of a node's GPUs of one type.
func typeMask(n *node.Node, gpuType string) uint64 {
	var m uint64
	for _, g := range n.GPUs {
		if g.Index < 64 && g.Type == gpuType {
			m |= 1 << g.Index
		}
	}
	return m
}

// fits reports whether the node's configuration could ever host one share
// of the job (ignoring what is in use), for submit-time refusal.
func (s shape) fitsConfig(n *node.Node) bool {
	empty := NodeState{Node: n, Used: node.Alloc{GPUs: make([]bool, len(n.GPUs))}}
	t, _ := s.capacity(&empty)
	return t >= s.minTasksOn()
}

// place chooses nodes for the job among candidates (in order; required
// first) and lays tasks out as cons_tres does by default: every node gets
// its minimum, then the remaining tasks fill the first nodes as far as
// they fit (so -N4 -n8 on 8-CPU nodes gives 5,1,1,1).
func (s shape) place(cands []*NodeState, required map[string]bool) (*job.Allocation, bool) {
	var buf [16]pick
	return s.placeInto(&job.Allocation{}, buf[:0], cands, required)
}

// pick is a node place chooses, with what it can take.
type pick struct {
	ns    *NodeState
	cap   uint32
	gpus  []int
	tasks uint32
}

// placeInto is place writing into dst, whose node list and GPU lists it
// reuses, and choosing nodes in picks' memory: the backfill pass places
// many jobs only to reserve their nodes.
func (s shape) placeInto(dst *job.Allocation, picks []pick, cands []*NodeState, required map[string]bool) (*job.Allocation, bool) {
	picks = picks[:0]
	// Required nodes must all be usable and fit. (Most jobs name none:
	// the candidates are not walked, nor each name hashed, for nothing.)
	for _, ns := range cands {
		if len(required) == 0 {
			break
		}
		if !required[ns.Node.Name] {
			continue
		}
		c, g := s.capacity(ns)
		if c == 0 {
			return nil, false
		}
		picks = append(picks, pick{ns: ns, cap: c, gpus: g})
	}
	var packed *NodeState
	if s.packsGPUs() && len(required) == 0 {
		// GPU packing: the node with the fewest free GPUs that fits, so
		// that whole GPU nodes stay free for the jobs that need them.
		var best *NodeState
		var bestCap uint32
		var bestGPUs []int
		for _, ns := range cands {
			// Only a node that holds every task: a busier one that
			// holds fewer would leave the job unplaced (or spread
			// wider) while another node could run it whole.
			c, g := s.capacity(ns)
			if c == 0 || c < s.tasks {
				continue
			}
			if best == nil || freeGPUCount(ns) < freeGPUCount(best) {
				best, bestCap, bestGPUs = ns, c, g
			}
		}
		if best != nil {
			picks = append(picks, pick{ns: best, cap: bestCap, gpus: bestGPUs})
			packed = best
		}
	}
	var room uint32
	for _, p := range picks {
		room += p.cap
	}
	for _, ns := range cands {
		if len(picks) >= s.nodes && (!s.spread || room >= s.tasks) {
			break
		}
		if ns == packed || (len(required) > 0 && required[ns.Node.Name]) {
			continue
		}
		c, g := s.capacity(ns)
		if c == 0 {
			continue
		}
		picks = append(picks, pick{ns: ns, cap: c, gpus: g})
		room += c
	}
	if len(picks) < s.nodes {
		return nil, false
	}
	if !s.spread {
		picks = picks[:s.nodes]
	}
	// Minimum tasks everywhere, then fill in order.
	var placed uint32
	for i := range picks {
		picks[i].tasks = s.minTasksOn()
		placed += picks[i].tasks
	}
	if placed > s.tasks && s.tasksPerNode == 0 {
		// Fewer tasks than nodes: Slurm refuses such a request at submit;
		// here it cannot happen because tasks defaults to the node count.
		return nil, false
	}
	for i := range picks {
		if placed >= s.tasks {
			break
		}
		room := picks[i].cap - picks[i].tasks
		add := min(room, s.tasks-placed)
		picks[i].tasks += add
		placed += add
	}
	if placed < s.tasks {
		return nil, false
	}
	// GPUs per job are spread over the chosen nodes in order.
	gpuLeft := s.gpusPerJob
	alloc := dst
	alloc.Nodes = slices.Grow(alloc.Nodes[:0], len(picks))[:len(picks)]
	for i, p := range picks {
		n := p.ns.Node
		cpus := p.tasks * s.cpusPerTask
		if s.exclusive {
			cpus = n.CPUs
		}
		na := job.NodeAlloc{Node: n.Name, CPUs: cpus, MemMB: s.memFor(n, cpus), Tasks: p.tasks}
		want := s.gpusPerNode
		if s.gpusPerJob > 0 {
			// Leave at least one GPU for each later node when possible.
			laterNodes := uint32(len(picks) - i - 1)
			take := min(uint32(len(p.gpus)), gpuLeft)
			if gpuLeft > laterNodes && take > gpuLeft-laterNodes {
				take = gpuLeft - laterNodes
			}
			if take == 0 && gpuLeft > 0 {
				take = 1
			}
			want = max(want, take)
			gpuLeft -= min(take, gpuLeft)
		}
		if s.exclusive && want == 0 && s.gpusPerJob == 0 {
			// Whole-node allocations get every GPU, as --exclusive does.
			want = uint32(len(p.gpus))
		}
		if uint32(len(p.gpus)) < want {
			return nil, false
		}
		na.GPUs = append(alloc.Nodes[i].GPUs[:0], pickGPUs(n, p.gpus, int(want))...)
		alloc.Nodes[i] = na
	}
	if gpuLeft > 0 {
		return nil, false
	}
	return alloc, true
}

// pickGPUs chooses want of a node's free GPUs, the best connected (see
// gres.PickGPUs); the first ones when the choice cannot matter.
func pickGPUs(n *node.Node, free []int, want int) []int {
	if want <= 1 || want >= len(free) {
		return free[:min(want, len(free))]
	}
	return gres.PickGPUs(TopoOf(n), free, want)
}

// TopoOf is what GPU selection knows of a node's GPUs.
func TopoOf(n *node.Node) []gres.TopoGPU {
	out := make([]gres.TopoGPU, len(n.GPUs))
	for i, g := range n.GPUs {
		out[i] = gres.TopoGPU{Index: g.Index, Links: g.Links, Cores: g.Cores}
	}
	return out
}
