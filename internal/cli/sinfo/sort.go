package sinfo

import (
	"cmp"
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
)

// availOrder ranks partition states as Slurm's PARTITION_* values do.
var availOrder = map[string]int{"INACTIVE": 0, "DOWN": 1, "DRAIN": 2, "UP": 3}

func partString(r *record, get func(*partition) string) string {
	if r.part == nil {
		return ""
	}
	return get(r.part)
}

func partNumber(r *record, get func(*partition) uint64) uint64 {
	if r.part == nil {
		return 0
	}
	return get(r.part)
}

func firstName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	s := slices.Clone(names)
	hostlist.Sort(s)
	return s[0]
}

// sortKeys are sinfo's -S/--sort keys: each compares two records.
var sortKeys = map[byte]func(a, b *record, partOrder bool) int{
	'a': func(a, b *record, _ bool) int {
		return cmp.Compare(availOrder[partString(a, func(p *partition) string { return p.stateUp })],
			availOrder[partString(b, func(p *partition) string { return p.stateUp })])
	},
	'A': cmpNodesAI,
	'F': cmpNodesAI,
	'b': func(a, b *record, _ bool) int { return strings.Compare(a.featuresAct, b.featuresAct) },
	'c': func(a, b *record, _ bool) int { return cmp.Compare(a.minCPUs, b.minCPUs) },
	'd': func(a, b *record, _ bool) int { return cmp.Compare(a.minDisk, b.minDisk) },
	'D': func(a, b *record, _ bool) int { return cmp.Compare(a.nodesTotal, b.nodesTotal) },
	'e': func(a, b *record, _ bool) int { return cmp.Compare(a.minFreeMem, b.minFreeMem) },
	'E': func(a, b *record, _ bool) int { return strings.Compare(a.reason, b.reason) },
	'f': func(a, b *record, _ bool) int { return strings.Compare(a.features, b.features) },
	'g': func(a, b *record, _ bool) int {
		return strings.Compare(partString(a, func(p *partition) string { return p.allowGroups }),
			partString(b, func(p *partition) string { return p.allowGroups }))
	},
	'h': func(a, b *record, _ bool) int {
		return cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.maxShare }),
			partNumber(b, func(p *partition) uint64 { return p.maxShare }))
	},
	'H': func(a, b *record, _ bool) int { return cmp.Compare(a.reasonTime, b.reasonTime) },
	'l': func(a, b *record, _ bool) int {
		return cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.maxTime }),
			partNumber(b, func(p *partition) uint64 { return p.maxTime }))
	},
	'm': func(a, b *record, _ bool) int { return cmp.Compare(a.minMem, b.minMem) },
	'M': func(a, b *record, _ bool) int {
		return strings.Compare(partString(a, func(p *partition) string { return p.preemptMode }),
			partString(b, func(p *partition) string { return p.preemptMode }))
	},
	'n': func(a, b *record, _ bool) int { return hostlist.Compare(firstName(a.hostnms), firstName(b.hostnms)) },
	'N': func(a, b *record, _ bool) int { return hostlist.Compare(firstName(a.nodes), firstName(b.nodes)) },
	'o': func(a, b *record, _ bool) int { return hostlist.Compare(firstName(a.nodeAddr), firstName(b.nodeAddr)) },
	'O': func(a, b *record, _ bool) int { return cmp.Compare(a.minCPULoad, b.minCPULoad) },
	'p': func(a, b *record, _ bool) int {
		return cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.prioTier }),
			partNumber(b, func(p *partition) uint64 { return p.prioTier }))
	},
	'P': cmpPartition,
	'R': cmpPartition,
	'r': func(a, b *record, _ bool) int {
		root := func(r *record) int {
			if r.part != nil && r.part.rootOnly {
				return 1
			}
			return 0
		}
		return cmp.Compare(root(a), root(b))
	},
	's': func(a, b *record, _ bool) int {
		if c := cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.minNodes }),
			partNumber(b, func(p *partition) uint64 { return p.minNodes })); c != 0 {
			return c
		}
		return cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.maxNodes }),
			partNumber(b, func(p *partition) uint64 { return p.maxNodes }))
	},
	'S': func(a, b *record, _ bool) int {
		return cmp.Compare(partNumber(a, func(p *partition) uint64 { return p.prioJobFactor }),
			partNumber(b, func(p *partition) uint64 { return p.prioJobFactor }))
	},
	't': cmpState,
	'T': cmpState,
	'u': func(a, b *record, _ bool) int { return strings.Compare(a.reasonUser, b.reasonUser) },
	'U': func(a, b *record, _ bool) int { return strings.Compare(a.reasonUser, b.reasonUser) },
	'V': func(*record, *record, bool) int { return 0 },
	'w': func(a, b *record, _ bool) int { return cmp.Compare(a.minWeight, b.minWeight) },
	'X': func(a, b *record, _ bool) int { return cmp.Compare(a.minSockets, b.minSockets) },
	'Y': func(a, b *record, _ bool) int { return cmp.Compare(a.minCores, b.minCores) },
	'Z': func(a, b *record, _ bool) int { return cmp.Compare(a.minThreads, b.minThreads) },
	'z': func(a, b *record, _ bool) int {
		if c := cmp.Compare(a.minSockets, b.minSockets); c != 0 {
			return c
		}
		if c := cmp.Compare(a.minCores, b.minCores); c != 0 {
			return c
		}
		return cmp.Compare(a.minThreads, b.minThreads)
	},
}

func cmpNodesAI(a, b *record, _ bool) int {
	if c := cmp.Compare(a.nodesAlloc, b.nodesAlloc); c != 0 {
		return c
	}
	return cmp.Compare(a.nodesIdle, b.nodesIdle)
}

func cmpPartition(a, b *record, partOrder bool) int {
	if partOrder {
		return cmp.Compare(a.partInx, b.partInx)
	}
	return strings.Compare(partString(a, func(p *partition) string { return p.name }),
		partString(b, func(p *partition) string { return p.name }))
}

// cmpState compares Slurm's numeric node states, as sinfo does.
func cmpState(a, b *record, _ bool) int { return cmp.Compare(a.state, b.state) }

// sortRecords is sinfo's sort_sinfo_list: the keys are applied from the
// last to the first, each a stable sort, so the first key matters most.
// '-' before a key reverses it, '#' before P sorts partitions in the
// controller's order rather than by name.
func sortRecords(recs []*record, spec string) {
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '#' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		partOrder := i > 0 && spec[i-1] == '#'
		less, ok := sortKeys[c]
		if !ok {
			continue
		}
		slices.SortStableFunc(recs, func(a, b *record) int {
			d := less(a, b, partOrder)
			if reverse {
				return -d
			}
			return d
		})
	}
}
