package slurmconf

import "strings"

// AccountingTRES is the list of TRES slurmctld tracks, from
// AccountingStorageTRES as it completes it: the base TRES first, then the
// configured ones, gres/gpu bringing gres/gpumem and gres/gpuutil.
func AccountingTRES(setting string) []string {
	tres := []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}
	seen := map[string]bool{}
	for _, t := range tres {
		seen[t] = true
	}
	add := func(t string) {
		if t != "" && !seen[strings.ToLower(t)] {
			seen[strings.ToLower(t)] = true
			tres = append(tres, t)
		}
	}
	for _, t := range strings.Split(setting, ",") {
		t = strings.TrimSpace(t)
		add(t)
		if strings.EqualFold(t, "gres/gpu") {
			add("gres/gpumem")
			add("gres/gpuutil")
		}
	}
	return tres
}
