package gres

import (
	"slices"
	"strconv"
	"strings"
)

// ParseLinks reads a Links= vector ("-1,2,0,1") into link counts by device
// index, -1 marking the device itself; nil for "" or a malformed vector
// (no topology known).
func ParseLinks(s string) []int {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxLinks {
		return nil
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < -1 || n > 1<<10 {
			return nil
		}
		out[i] = n
	}
	return out
}

// MaxLinks bounds a Links= vector, as Slurm's GRES_MAX_LINK does.
const MaxLinks = 1023

// TopoGPU is what device selection knows of one GPU: its index, its
// NVLink counts to the others (by device index, nil when unknown) and the
// CPUs near it (as reported: GPUs with the same list share a NUMA node).
type TopoGPU struct {
	Index int
	Links []int
	Cores string
}

// PickGPUs chooses want GPUs among free (device indices, in the node's
// order) the way Slurm's gres selection prefers them: the set with the
// most NVLinks between its members, then the one spanning the fewest
// NUMA nodes, then the lowest indices. Without topology (no links and one
// NUMA node) it returns the first want free GPUs. It returns nil when
// fewer than want are free; free is not changed.
//
// The search is greedy (grow a set from each free GPU, adding the GPU
// with the most links into it), exact for the meshes and NVSwitch
// systems GPUs come in, and cheap enough for every placement the
// scheduler tries.
func PickGPUs(gpus []TopoGPU, free []int, want int) []int {
	if want > len(free) || want < 0 {
		return nil
	}
	if want == 0 {
		return []int{}
	}
	if want == 1 || want == len(free) || !hasTopology(gpus) {
		return append([]int(nil), free[:want]...)
	}
	maxIndex := 0
	for _, g := range gpus {
		maxIndex = max(maxIndex, g.Index)
	}
	byIndex := make([]*TopoGPU, maxIndex+1)
	for i := range gpus {
		if gpus[i].Index >= 0 {
			byIndex[gpus[i].Index] = &gpus[i]
		}
	}
	gpu := func(g int) *TopoGPU {
		if g < 0 || g >= len(byIndex) {
			return nil
		}
		return byIndex[g]
	}
	links := func(a, b int) int {
		ga := gpu(a)
		if ga == nil || b < 0 || b >= len(ga.Links) || ga.Links[b] < 0 {
			return 0
		}
		return ga.Links[b]
	}
	domain := func(g int) string {
		if t := gpu(g); t != nil {
			return t.Cores
		}
		return ""
	}
	var best []int
	bestLinks, bestDomains := -1, 0
	set := make([]int, 0, want)
	in := make([]bool, len(free))
	gain := make([]int, len(free))
	for seed := range free {
		set = set[:0]
		clear(in)
		clear(gain)
		add := func(k int) {
			in[k] = true
			set = append(set, free[k])
			for j := range free {
				if !in[j] {
					gain[j] += links(free[j], free[k])
				}
			}
		}
		add(seed)
		total := 0
		for len(set) < want {
			pick := -1
			for j := range free {
				if in[j] {
					continue
				}
				switch {
				case pick < 0, gain[j] > gain[pick]:
					pick = j
				case gain[j] == gain[pick] && domain(free[j]) == domain(free[seed]) && domain(free[pick]) != domain(free[seed]):
					pick = j
				}
			}
			total += gain[pick]
			add(pick)
		}
		domains := countDomains(set, domain)
		if total > bestLinks || (total == bestLinks && domains < bestDomains) {
			best = append(best[:0], set...)
			bestLinks, bestDomains = total, domains
		}
	}
	slices.Sort(best)
	return best
}

// hasTopology reports whether selection can matter: some links known, or
// GPUs near different CPUs.
func hasTopology(gpus []TopoGPU) bool {
	cores := ""
	first := true
	for _, g := range gpus {
		if len(g.Links) > 0 {
			return true
		}
		if first {
			cores, first = g.Cores, false
		} else if g.Cores != cores {
			return true
		}
	}
	return false
}

func countDomains(set []int, domain func(int) string) int {
	seen := make(map[string]bool, 2)
	for _, g := range set {
		seen[domain(g)] = true
	}
	return len(seen)
}
