package partition

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// BillingWeights are a partition's TRESBillingWeights: how much each TRES
// counts in a job's billing TRES (fair-share usage and limits on billing
// count it), by Slurm's TRES names in lower case ("cpu", "mem",
// "gres/gpu"). Memory's weight is per MB (a "G" suffix on the weight
// makes it per GB, as slurm.conf writes it).
type BillingWeights map[string]float64

// ParseBillingWeights reads TRESBillingWeights ("CPU=1.0,Mem=0.25G,
// GRES/gpu=2.0").
func ParseBillingWeights(s string) (BillingWeights, error) {
	out := BillingWeights{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, v, ok := strings.Cut(item, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("invalid TRESBillingWeights entry %q", item)
		}
		div := 1.0
		switch strings.ToUpper(v[max(len(v)-1, 0):]) {
		case "K":
			div, v = 1.0/1024, v[:len(v)-1]
		case "M":
			v = v[:len(v)-1]
		case "G":
			div, v = 1024, v[:len(v)-1]
		case "T":
			div, v = 1024*1024, v[:len(v)-1]
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("invalid TRESBillingWeights weight %q", item)
		}
		if name != "mem" {
			div = 1
		}
		out[name] = w / div
	}
	return out, nil
}

// Billing is the billing TRES of counts (by TRES name): the weighted sum,
// or with max (PriorityFlags=MAX_TRES) the largest weighted TRES plus
// the weighted generic ones... as Slurm's assoc_mgr_tres_weighted: here
// the largest weighted TRES. Without weights it is the CPU count.
func (w BillingWeights) Billing(counts map[string]uint64, useMax bool) uint64 {
	if len(w) == 0 {
		return counts["cpu"]
	}
	var sum, top float64
	for _, name := range slices.Sorted(maps.Keys(w)) {
		v := w[name] * float64(counts[name])
		sum += v
		top = max(top, v)
	}
	if useMax {
		return uint64(top)
	}
	return uint64(sum)
}
