package sched

import (
	"container/heap"
	"slices"
)

// freeHeap orders a partition's nodes by when each first has room for a
// share of one kind of one-node job, at any length. That time is a lower
// bound on when the node can run such a job for its whole time limit, so
// the earliest start of a one-node job is found by reading nodes in this
// order and stopping at the first whose bound is past the best start yet,
// instead of reading every node. Reservations move nodes back (fix).
type freeHeap struct {
	sh    hostKey
	lines []*timeline
	limit int64
	items []freeItem
	// pos is each line's place in items (-1: not in the partition).
	pos []int
	// seen is the timeline version each node was read at, and cursor how
	// far into the pass's change log the heap has read.
	seen   []uint64
	cursor int
	// stack is earliest's scratch.
	stack []int
}

type freeItem struct {
	node  int
	first int64
}

// reset makes h the heap of a partition's nodes for kind k, reusing its
// memory.
func (h *freeHeap) reset(k hostKey, lines []*timeline, nodes []int, limit int64) *freeHeap {
	h.sh, h.lines, h.limit, h.cursor = k, lines, limit, 0
	h.pos = slices.Grow(h.pos[:0], len(lines))[:len(lines)]
	h.seen = slices.Grow(h.seen[:0], len(lines))[:len(lines)]
	for i := range h.pos {
		h.pos[i] = -1
	}
	h.items = slices.Grow(h.items[:0], len(nodes))
	for _, i := range nodes {
		h.pos[i] = len(h.items)
		h.seen[i] = lines[i].version
		h.items = append(h.items, freeItem{node: i, first: lines[i].firstFree(&h.sh, limit)})
	}
	heap.Init(h)
	return h
}

func (h *freeHeap) Len() int { return len(h.items) }
func (h *freeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.first < b.first || a.first == b.first && a.node < b.node
}
func (h *freeHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].node] = i
	h.pos[h.items[j].node] = j
}
func (h *freeHeap) Push(x any) {
	it := x.(freeItem)
	h.pos[it.node] = len(h.items)
	h.items = append(h.items, it)
}
func (h *freeHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	h.pos[it.node] = -1
	return it
}

// refresh re-reads the nodes whose timelines changed since the heap was
// last read.
func (h *freeHeap) refresh(changed []int) {
	for _, node := range changed[h.cursor:] {
		if p := h.pos[node]; p >= 0 && h.seen[node] != h.lines[node].version {
			h.items[p].first = h.lines[node].firstFree(&h.sh, h.limit)
			h.seen[node] = h.lines[node].version
			heap.Fix(h, p)
		}
	}
	h.cursor = len(changed)
}

// earliest returns the earliest start at or after lb, up to limit, of a
// job of this kind running d seconds, and the first node (in
// configuration order) free then; ok is false when none is. It walks the
// heap from the top and leaves a subtree as soon as its root cannot beat
// the best start found: every node below it is free no sooner.
func (h *freeHeap) earliest(d, lb, limit int64, scratch []span) (t int64, node int, ok bool, _ []span) {
	best, bestNode := int64(forever), -1
	stack := append(h.stack[:0], 0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h.items) {
			continue
		}
		top := h.items[i]
		if top.first == forever || top.first > limit || top.first > best || top.first == best && top.node > bestNode {
			continue
		}
		scratch = h.lines[top.node].starts(scratch[:0], &h.sh, d, max(lb, top.first), min(limit, best))
		if len(scratch) > 0 {
			if a := scratch[0].a; a < best || a == best && top.node < bestNode {
				best, bestNode = a, top.node
			}
		}
		stack = append(stack, 2*i+2, 2*i+1)
	}
	h.stack = stack
	return best, bestNode, bestNode >= 0, scratch
}
