package sinfo

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
)

// field is one attribute sinfo can print (Slurm's fmt_data[]): its -O
// name, its -o letter, its column title, the match flags it implies and
// how to print a record.
type field struct {
	name   string
	letter byte
	title  string
	flags  matchFlags
	// hidden fields work but are not listed by --helpformat.
	hidden bool
	// width overrides: partition names and node lists size their column
	// to the data in the default formats (part_field_flag, node_field_flag).
	partWidth, nodeWidth bool
	// uncutTitle prints the title without truncation (node lists).
	uncutTitle bool
	value      func(*record, *printCtx) string
}

// printCtx is what printing needs besides a record.
type printCtx struct {
	timeStr     func(int64) string
	preemptMode string
	partWidth   int
	nodeWidth   int
	usePartW    bool
	useNodeW    bool
}

// fields is sinfo's fmt_data[] in its order: the first field with a letter
// wins for -o (GresUsed shares 'G' with Gres but is reached by -O only).
var fields = []field{
	{name: "AllocMem", title: "ALLOCMEM", flags: matchAllocMem, value: func(r *record, _ *printCtx) string {
		return strconv.FormatUint(r.allocMem, 10)
	}},
	{name: "AllocNodes", letter: 'S', title: "ALLOCNODES", value: func(r *record, _ *printCtx) string {
		switch {
		case r.part == nil:
			return "n/a"
		case r.part.allowAlloc != "":
			return r.part.allowAlloc
		}
		return "all"
	}},
	{name: "Available", letter: 'a', title: "AVAIL", flags: matchAvail, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "n/a"
		}
		switch r.part.stateUp {
		case "UP":
			return "up"
		case "DOWN":
			return "down"
		case "DRAIN":
			return "drain"
		case "INACTIVE":
			return "inactive"
		}
		return "unknown"
	}},
	{name: "Cluster", letter: 'V', title: "CLUSTER", value: func(*record, *printCtx) string { return "N/A" }},
	{name: "Comment", title: "COMMENT", flags: matchComment, value: func(r *record, _ *printCtx) string { return orNull(r.comment) }},
	{name: "Cores", letter: 'Y', title: "CORES", flags: matchCores, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minCores, r.maxCores, false, true)
	}},
	{name: "CPUs", letter: 'c', title: "CPUS", flags: matchCPUs, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minCPUs, r.maxCPUs, false, true)
	}},
	{name: "CPUsLoad", letter: 'O', title: "CPU_LOAD", flags: matchCPULoad, value: func(r *record, _ *printCtx) string {
		load := func(v uint64) string {
			if v == noVal {
				return "N/A"
			}
			return fmt.Sprintf("%.2f", float64(v)/100.0)
		}
		return rangeString(load(r.minCPULoad), load(r.maxCPULoad), r.minCPULoad == r.maxCPULoad, true)
	}},
	{name: "CPUsState", letter: 'C', title: "CPUS(A/I/O/T)", flags: matchCPUs, value: func(r *record, _ *printCtx) string {
		return fmt.Sprintf("%d/%d/%d/%d", r.cpusAlloc, r.cpusIdle, r.cpusOther, r.cpusTotal)
	}},
	{name: "DefaultTime", letter: 'L', title: "DEFAULTTIME", flags: matchDefaultTime, value: func(r *record, _ *printCtx) string {
		switch {
		case r.part == nil || r.part.defaultTime == noVal:
			return "n/a"
		case r.part.defaultTime == infinite:
			return "infinite"
		}
		return secsString(int64(r.part.defaultTime) * 60)
	}},
	{name: "Disk", letter: 'd', title: "TMP_DISK", flags: matchDisk, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minDisk, r.maxDisk, false, false)
	}},
	{name: "Extra", title: "EXTRA", flags: matchExtra, value: func(r *record, _ *printCtx) string { return orNull(r.extra) }},
	{name: "Features", letter: 'f', title: "AVAIL_FEATURES", flags: matchFeatures, value: func(r *record, _ *printCtx) string {
		return orNull(r.features)
	}},
	{name: "features_act", letter: 'b', title: "ACTIVE_FEATURES", flags: matchFeaturesAct, value: func(r *record, _ *printCtx) string {
		return orNull(r.featuresAct)
	}},
	{name: "FreeMem", letter: 'e', title: "FREE_MEM", flags: matchFreeMem, value: func(r *record, _ *printCtx) string {
		mem := func(v uint64) string {
			if v == noVal64 {
				return "N/A"
			}
			return strconv.FormatUint(v, 10)
		}
		return rangeString(mem(r.minFreeMem), mem(r.maxFreeMem), r.minFreeMem == r.maxFreeMem, true)
	}},
	{name: "Gres", letter: 'G', title: "GRES", flags: matchGres, value: func(r *record, _ *printCtx) string { return orNull(r.gres) }},
	{name: "GresUsed", letter: 'G', title: "GRES_USED", flags: matchGresUsed, value: func(r *record, _ *printCtx) string {
		return orNull(r.gresUsed)
	}},
	{name: "Groups", letter: 'g', title: "GROUPS", flags: matchGroups, value: func(r *record, _ *printCtx) string {
		switch {
		case r.part == nil:
			return "n/a"
		case r.part.allowGroups != "":
			return r.part.allowGroups
		}
		return "all"
	}},
	{name: "MaxCPUsPerNode", letter: 'B', title: "MAX_CPUS_PER_NODE", flags: matchMaxCPUsPerNode, value: func(r *record, _ *printCtx) string {
		if r.part != nil && r.part.maxCPUsPerNode == infinite {
			return "UNLIMITED"
		}
		return strconv.FormatUint(r.maxCPUsPerNode, 10)
	}},
	{name: "Memory", letter: 'm', title: "MEMORY", flags: matchMemory, value: func(r *record, _ *printCtx) string {
		return rangeString(strconv.FormatUint(r.minMem, 10), strconv.FormatUint(r.maxMem, 10), r.minMem == r.maxMem, false)
	}},
	{name: "NodeAddr", letter: 'o', title: "NODE_ADDR", flags: matchNodeAddr, uncutTitle: true, value: func(r *record, _ *printCtx) string {
		return hostlistString(r.nodeAddr)
	}},
	{name: "NodeAI", letter: 'A', title: "NODES(A/I)", value: func(r *record, _ *printCtx) string {
		return fmt.Sprintf("%d/%d", r.nodesAlloc, r.nodesIdle)
	}},
	{name: "NodeAIOT", letter: 'F', title: "NODES(A/I/O/T)", value: func(r *record, _ *printCtx) string {
		return fmt.Sprintf("%d/%d/%d/%d", r.nodesAlloc, r.nodesIdle, r.nodesOther, r.nodesTotal)
	}},
	{name: "NodeHost", letter: 'n', title: "HOSTNAMES", flags: matchHostnames, nodeWidth: true, uncutTitle: true, value: func(r *record, _ *printCtx) string {
		return hostlistString(r.hostnms)
	}},
	{name: "NodeList", letter: 'N', title: "NODELIST", nodeWidth: true, uncutTitle: true, value: func(r *record, _ *printCtx) string {
		return hostlistString(r.nodes)
	}},
	{name: "Nodes", letter: 'D', title: "NODES", value: func(r *record, _ *printCtx) string {
		return strconv.FormatUint(r.nodesTotal, 10)
	}},
	{name: "OverSubscribe", letter: 'h', title: "OVERSUBSCRIBE", value: oversubscribeValue},
	// The default partition's '*' depends on the column width: see
	// column.text.
	{name: "Partition", letter: 'P', title: "PARTITION", flags: matchPartition, partWidth: true, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "n/a"
		}
		return r.part.name
	}},
	{name: "PartitionName", letter: 'R', title: "PARTITION", flags: matchPartition, partWidth: true, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "n/a"
		}
		return r.part.name
	}},
	{name: "Port", title: "PORT", flags: matchPort, value: func(r *record, _ *printCtx) string {
		return strconv.FormatUint(r.port, 10)
	}},
	{name: "PreemptMode", letter: 'M', title: "PREEMPT_MODE", flags: matchPreemptMode, value: func(r *record, c *printCtx) string {
		mode := c.preemptMode
		if r.part != nil && r.part.preemptMode != "" {
			mode = r.part.preemptMode
		}
		return strings.ToUpper(mode)
	}},
	{name: "PriorityJobFactor", letter: 'I', title: "PRIO_JOB_FACTOR", flags: matchPriorityJobFactor, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "0"
		}
		return strconv.FormatUint(r.part.prioJobFactor, 10)
	}},
	{name: "PriorityTier", letter: 'p', title: "PRIO_TIER", flags: matchPriorityTier, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "0"
		}
		return strconv.FormatUint(r.part.prioTier, 10)
	}},
	{name: "Reason", letter: 'E', title: "REASON", flags: matchReason, value: func(r *record, _ *printCtx) string {
		if r.reason == "" || strings.HasPrefix(r.reason, "(null)") {
			return "none"
		}
		return r.reason
	}},
	{name: "Reservation", letter: 'i', title: "RESERVATION", flags: matchResvName, value: func(r *record, _ *printCtx) string {
		return r.resvName
	}},
	{name: "Root", letter: 'r', title: "ROOT", flags: matchRoot, value: func(r *record, _ *printCtx) string {
		switch {
		case r.part == nil:
			return "n/a"
		case r.part.rootOnly:
			return "yes"
		}
		return "no"
	}},
	{name: "Share", letter: 'h', title: "OVERSUBSCRIBE", flags: matchOversubscribe, hidden: true, value: oversubscribeValue},
	{name: "Size", letter: 's', title: "JOB_SIZE", flags: matchJobSize, value: func(r *record, _ *printCtx) string {
		if r.part == nil {
			return "n/a"
		}
		lo := r.part.minNodes
		if lo < 1 && r.part.maxNodes > 0 {
			lo = 1
		}
		return minMaxString(lo, r.part.maxNodes, true, true)
	}},
	{name: "Sockets", letter: 'X', title: "SOCKETS", flags: matchSockets, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minSockets, r.maxSockets, false, true)
	}},
	{name: "SocketCoreThread", letter: 'z', title: "S:C:T", flags: matchSCT, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minSockets, r.maxSockets, false, true) + ":" +
			minMaxString(r.minCores, r.maxCores, false, true) + ":" +
			minMaxString(r.minThreads, r.maxThreads, false, true)
	}},
	{name: "StateCompact", letter: 't', title: "STATE", flags: matchState, value: func(r *record, _ *printCtx) string {
		if r.nodesTotal == 0 {
			return "n/a"
		}
		return strings.ToLower(r.state.Compact())
	}},
	{name: "StateComplete", title: "STATECOMPLETE", flags: matchStateComplete, value: func(r *record, _ *printCtx) string {
		if r.nodesTotal == 0 {
			return "n/a"
		}
		return strings.ToLower(r.state.Complete())
	}},
	{name: "StateLong", letter: 'T', title: "STATE", flags: matchState, value: func(r *record, _ *printCtx) string {
		if r.nodesTotal == 0 {
			return "n/a"
		}
		return strings.ToLower(r.state.String())
	}},
	{name: "Threads", letter: 'Z', title: "THREADS", flags: matchThreads, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minThreads, r.maxThreads, false, true)
	}},
	{name: "Time", letter: 'l', title: "TIMELIMIT", flags: matchMaxTime, value: func(r *record, _ *printCtx) string {
		switch {
		case r.part == nil:
			return "n/a"
		case r.part.maxTime == infinite:
			return "infinite"
		}
		return secsString(int64(r.part.maxTime) * 60)
	}},
	{name: "TimeStamp", letter: 'H', title: "TIMESTAMP", flags: matchReasonTimestamp, value: func(r *record, c *printCtx) string {
		if r.reasonTime == 0 {
			return "Unknown"
		}
		return c.timeStr(r.reasonTime)
	}},
	{name: "User", letter: 'u', title: "USER", flags: matchReasonUser, value: func(r *record, _ *printCtx) string {
		if r.reasonUser == "" {
			return "Unknown"
		}
		return r.reasonUser
	}},
	{name: "UserLong", letter: 'U', title: "USER", flags: matchReasonUser, value: func(r *record, _ *printCtx) string {
		if r.reasonUser == "" {
			return "Unknown"
		}
		if u, err := user.Lookup(r.reasonUser); err == nil {
			return r.reasonUser + "(" + u.Uid + ")"
		}
		return "Unk(" + r.reasonUser + ")"
	}},
	{name: "Version", letter: 'v', title: "VERSION", flags: matchVersion, value: func(r *record, _ *printCtx) string {
		if r.version == "" {
			return "N/A"
		}
		return r.version
	}},
	{name: "Weight", letter: 'w', title: "WEIGHT", flags: matchWeight, value: func(r *record, _ *printCtx) string {
		return minMaxString(r.minWeight, r.maxWeight, false, false)
	}},
}

func oversubscribeValue(r *record, _ *printCtx) string {
	if r.part == nil {
		return "n/a"
	}
	switch v := r.part.maxShare; {
	case v == 0:
		return "EXCLUSIVE"
	case r.part.forceShare:
		return fmt.Sprintf("FORCE:%d", v)
	case v == 1:
		return "NO"
	default:
		return fmt.Sprintf("YES:%d", v)
	}
}

// orNull prints a string as C's printf prints Slurm's NULL strings.
func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// convertNumUnit prints a count as Slurm's convert_num_unit does with
// CONVERT_NUM_UNIT_EXACT and no base unit: the value divided by 1024 while
// it divides exactly, followed by the unit letter ("2", "1K", "1500").
func convertNumUnit(v uint64) string {
	const units = "\x00KMGTPE"
	if v == 0 {
		return "0"
	}
	u := 0
	for v%1024 == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatUint(v, 10)
	if u > 0 {
		s += string(units[u])
	}
	return s
}

// minMaxString is sinfo's _build_min_max_32_string: "n" when the bounds
// agree, "lo-hi" (range) or "lo+" otherwise; "lo-infinite" for an
// INFINITE upper bound.
func minMaxString(lo, hi uint64, isRange, suffix bool) string {
	f := func(v uint64) string {
		if suffix {
			return convertNumUnit(v)
		}
		return strconv.FormatUint(v, 10)
	}
	if hi == infinite && isRange && lo != hi {
		return f(lo) + "-infinite"
	}
	return rangeString(f(lo), f(hi), lo == hi, isRange)
}

func rangeString(lo, hi string, same, isRange bool) string {
	switch {
	case same:
		return hi
	case isRange:
		return lo + "-" + hi
	}
	return lo + "+"
}

// secsString is sinfo's _print_secs: "M:SS", "H:MM:SS" or "D-HH:MM:SS".
func secsString(t int64) string {
	s, m, h, d := t%60, (t/60)%60, (t/3600)%24, t/86400
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// lookupLetter finds the field a -o letter names.
func lookupLetter(c byte) *field {
	if c == 0 {
		return nil
	}
	for i := range fields {
		if fields[i].letter == c {
			return &fields[i]
		}
	}
	return nil
}

// lookupName finds the field a -O name names, case-insensitively.
func lookupName(name string) *field {
	for i := range fields {
		if strings.EqualFold(fields[i].name, name) {
			return &fields[i]
		}
	}
	return nil
}
