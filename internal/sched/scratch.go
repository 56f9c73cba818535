package sched

import (
	"sync"

	"github.com/droverhq/drover/internal/job"
)

// scratch is the memory one scheduling cycle works in, kept from cycle to
// cycle: a pass over thousands of nodes would otherwise allocate (and the
// collector scan) the same node copies and timelines every time. Nothing
// in a Plan points into it.
type scratch struct {
	order []*job.Job
	// nodes are the pass's working copies of the snapshot's nodes, and
	// gpus the backing array of their GPU flags.
	nodes    []NodeState
	nodePtrs []*NodeState
	gpus     []bool
	// index is each node's position by name; names are the names it was
	// built for, so that it is rebuilt only when the nodes change.
	index map[string]int
	names []string
	// cands is the main pass's candidate list, reused from job to job.
	cands []*NodeState
	// mark and partIdx are usableIn's: a flag per node, and the lists it
	// returned last time, by partition.
	mark    []bool
	partIdx map[string][]int
	// The backfill pass's timelines and the releases they are built from.
	lines    []timeline
	linePtrs []*timeline
	rel      [][]release
}

var scratchPool = sync.Pool{New: func() any { return &scratch{index: map[string]int{}, partIdx: map[string][]int{}} }}

// indexNodes makes index name each of the snapshot's nodes, rebuilding it
// only when the node names differ from last time.
func (sc *scratch) indexNodes(nodes []NodeState) {
	same := len(sc.names) == len(nodes)
	for i := 0; same && i < len(nodes); i++ {
		same = sc.names[i] == nodes[i].Node.Name
	}
	if same {
		return
	}
	clear(sc.index)
	sc.names = sc.names[:0]
	for i := range nodes {
		name := nodes[i].Node.Name
		sc.index[name] = i
		sc.names = append(sc.names, name)
	}
}
