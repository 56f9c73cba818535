package sched

import (
	"slices"
	"sync"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
)

// scratch is the memory one scheduling cycle works in, kept from cycle to
// cycle: a pass over thousands of nodes would otherwise allocate (and the
// collector scan) the same node copies and timelines every time. Nothing
// in a Plan points into it.
type scratch struct {
	order []*job.Job
	keys  []orderKey
	// nodes are the pass's working copies of the snapshot's nodes, and
	// gpus the backing array of their GPU flags.
	nodes    []NodeState
	nodePtrs []*NodeState
	gpus     []bool
	// inPlace is the first of the snapshot nodes nodePtrs point to when
	// a pass worked on the snapshot's own (Snapshot.InPlace).
	inPlace *NodeState
	// keptIdx and keptCands are the usable nodes and the candidate lists
	// of each partition for that in-place snapshot, kept from cycle to
	// cycle.
	keptIdx   map[string][]int
	keptCands map[string]bool
	// index is each node's position by name; names are the names it was
	// built for, so that it is rebuilt only when the nodes change.
	index map[string]int
	names []string
	// indexed are the node objects index was built from, beside names.
	indexed []*node.Node
	// indexGen counts the times index was rebuilt.
	indexGen uint64
	// cands is the main pass's candidate list, reused from job to job;
	// partCands the lists of jobs that exclude no node, by partition.
	cands     []*NodeState
	partCands map[string][]*NodeState
	// partIdx are the lists usableIn returned last time, by partition;
	// member flags each partition's nodes, for the node list it was made
	// from.
	partIdx map[string][]int
	member  map[string]*membership
	// agg is a starts-only backfill pass's aggregate; bf the backfill
	// pass, and kinds and heaps the groups and heaps passes made, kept for
	// their memory (the first kindsUsed and heapsUsed are this pass's).
	agg       aggregate
	bf        bfPass
	kinds     []*kindIndex
	kindsUsed int
	heaps     []*freeHeap
	heapsUsed int
	// The backfill pass's timelines and the releases they are built from.
	lines    []timeline
	linePtrs []*timeline
	rel      [][]release
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{index: map[string]int{}, partIdx: map[string][]int{}, member: map[string]*membership{},
		partCands: map[string][]*NodeState{}, keptIdx: map[string][]int{}, keptCands: map[string]bool{}}
}}

// membership flags the nodes (by position) of one partition.
type membership struct {
	of    []string
	gen   uint64
	flags []bool
}

// members flags the positions of a partition's nodes, read again only
// when its node list or the node positions change (comparing names is
// far cheaper than looking each up).
func (sc *scratch) members(part *partition.Partition, n int) []bool {
	m := sc.member[part.Name]
	if m != nil && m.gen == sc.indexGen && len(m.flags) == n && slices.Equal(m.of, part.Nodes) {
		// The caller's own strings from now on: equal names are then
		// told by their pointers, without reading their bytes.
		copy(m.of, part.Nodes)
		return m.flags
	}
	if m == nil {
		m = &membership{}
		sc.member[part.Name] = m
	}
	m.of, m.gen = append(m.of[:0], part.Nodes...), sc.indexGen
	m.flags = slices.Grow(m.flags[:0], n)[:n]
	clear(m.flags)
	for _, name := range part.Nodes {
		if i, ok := sc.index[name]; ok {
			m.flags[i] = true
		}
	}
	return m.flags
}

// indexNodes makes index name each of the snapshot's nodes, rebuilding it
// only when the node names differ from last time.
func (sc *scratch) indexNodes(nodes []NodeState) {
	same := len(sc.names) == len(nodes) && len(sc.indexed) == len(nodes)
	for i := 0; same && i < len(nodes); i++ {
		// The same node object has the same name: the names are read
		// only for nodes the caller made anew, which are remembered so
		// that the next cycle reads no name again.
		if n := nodes[i].Node; sc.indexed[i] != n {
			same = sc.names[i] == n.Name
			sc.indexed[i] = n
		}
	}
	if same {
		return
	}
	clear(sc.index)
	sc.indexGen++
	sc.names, sc.indexed = sc.names[:0], sc.indexed[:0]
	for i := range nodes {
		name := nodes[i].Node.Name
		sc.index[name] = i
		sc.names = append(sc.names, name)
		sc.indexed = append(sc.indexed, nodes[i].Node)
	}
}

// workingNodes returns the nodes a pass works on: copies of the
// snapshot's, whose usage the pass's starts change, or the snapshot's own
// when it hands them over (InPlace). kept says they are the same
// in-place nodes as last cycle's, so that what was derived from them
// then still holds.
func (sc *scratch) workingNodes(s *Snapshot) (nodes []*NodeState, kept bool) {
	n := len(s.Nodes)
	if s.InPlace && n > 0 {
		if len(sc.nodePtrs) == n && sc.inPlace == &s.Nodes[0] {
			return sc.nodePtrs, true
		}
		sc.forget()
		sc.indexNodes(s.Nodes)
		sc.nodePtrs = slices.Grow(sc.nodePtrs[:0], n)[:n]
		for i := range s.Nodes {
			sc.nodePtrs[i] = &s.Nodes[i]
		}
		sc.inPlace = &s.Nodes[0]
		return sc.nodePtrs, false
	}
	if sc.inPlace != nil {
		sc.forget()
	}
	sc.indexNodes(s.Nodes)
	flags := 0
	for i := range s.Nodes {
		flags += max(len(s.Nodes[i].Node.GPUs), len(s.Nodes[i].Used.GPUs))
	}
	sc.nodes = slices.Grow(sc.nodes[:0], n)[:n]
	sc.nodePtrs = slices.Grow(sc.nodePtrs[:0], n)[:n]
	sc.gpus = slices.Grow(sc.gpus[:0], flags)[:flags]
	off := 0
	for i := range s.Nodes {
		ns := s.Nodes[i]
		size := max(len(ns.Node.GPUs), len(ns.Used.GPUs))
		used := sc.gpus[off : off+size : off+size]
		off += size
		clear(used[copy(used, ns.Used.GPUs):])
		ns.Used.GPUs = used
		sc.nodes[i] = ns
		sc.nodePtrs[i] = &sc.nodes[i]
	}
	return sc.nodePtrs, false
}

// forget drops what was kept for an in-place snapshot.
func (sc *scratch) forget() {
	sc.inPlace = nil
	clear(sc.keptIdx)
	for _, c := range sc.partCands {
		clear(c)
	}
	clear(sc.keptCands)
}

// backfillPass is the backfill pass's state, emptied for a new pass.
func (sc *scratch) backfillPass() *bfPass {
	bf := &sc.bf
	if bf.lowest == nil {
		bf.partNodes, bf.lowest = map[string][]int{}, map[shapeKey][]bound{}
		bf.heaps, bf.kinds = map[runsKey]*freeHeap{}, map[runsKey]*kindIndex{}
		bf.most = map[shapeKey]uint32{}
	}
	clear(bf.partNodes)
	clear(bf.lowest)
	clear(bf.most)
	clear(bf.heaps)
	clear(bf.kinds)
	bf.changed, bf.agg, bf.lines = bf.changed[:0], nil, nil
	sc.kindsUsed, sc.heapsUsed = 0, 0
	return bf
}

// kindIndex is a kindIndex for this pass, reusing one an earlier pass made.
func (sc *scratch) kindIndex(k hostKey, lines []*timeline, nodes []int) *kindIndex {
	if sc.kindsUsed == len(sc.kinds) {
		sc.kinds = append(sc.kinds, &kindIndex{})
	}
	ki := sc.kinds[sc.kindsUsed]
	sc.kindsUsed++
	return ki.reset(k, lines, nodes)
}

// freeHeap is a freeHeap for this pass, reusing one an earlier pass made.
func (sc *scratch) freeHeap(k hostKey, lines []*timeline, nodes []int, limit int64) *freeHeap {
	if sc.heapsUsed == len(sc.heaps) {
		sc.heaps = append(sc.heaps, &freeHeap{})
	}
	h := sc.heaps[sc.heapsUsed]
	sc.heapsUsed++
	return h.reset(k, lines, nodes, limit)
}
