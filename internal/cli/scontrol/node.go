package scontrol

import (
	"fmt"
	"slices"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// nodeView carries what the node layout needs besides the node.
type nodeView struct {
	oneLiner bool
	detail   bool
	timeStr  func(int64) string
	// slurmdPort is slurm.conf's SlurmdPort: nodes listening elsewhere
	// print Port=. knownPort is false when no slurm.conf was read, in which
	// case Port= is left out rather than guessed.
	slurmdPort int
	knownPort  bool
}

// nodeBaseStates are Slurm's base node states (node_states[]).
var nodeBaseStates = []string{"DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE", "UNKNOWN"}

// nodeFlagOrder is the order node_state_string_complete prints state flags
// in (Slurm's node_state_flags[] table).
var nodeFlagOrder = []string{
	"BLOCKED", "CLOUD", "COMPLETING", "DRAIN", "DYNAMIC_FUTURE",
	"DYNAMIC_NORM", "EXTERNAL", "INVALID_REG", "FAIL", "MAINTENANCE",
	"POWER_DOWN", "POWER_UP", "POWERED_DOWN", "REBOOT_REQUESTED",
	"REBOOT_ISSUED", "RESERVED", "RESUME", "NOT_RESPONDING", "PLANNED",
	"POWERING_UP", "POWERING_DOWN",
}

// nodeStateComplete is node_state_string_complete for slurmrestd's state
// list: the base state, then "+FLAG" for each flag in Slurm's order
// ("IDLE+DRAIN", "DOWN+NOT_RESPONDING"). Flags Slurm's table does not name
// print as "?".
func nodeStateComplete(states []v0044.V0044NodeStateItem) string {
	base := "INVALID"
	flags := map[string]bool{}
	for _, s := range states {
		if slices.Contains(nodeBaseStates, string(s)) {
			base = string(s)
			continue
		}
		flags[string(s)] = true
	}
	var b strings.Builder
	b.WriteString(base)
	for _, f := range nodeFlagOrder {
		if flags[f] {
			b.WriteString("+" + f)
			delete(flags, f)
		}
	}
	for range flags {
		b.WriteString("+?")
	}
	return b.String()
}

func hasNodeState(n *v0044.V0044Node, s v0044.V0044NodeStateItem) bool {
	return slices.Contains(n.State, s)
}

// formatNode prints one node in `scontrol show node` layout
// (slurm_sprint_node_table).
func formatNode(n *v0044.V0044Node, v nodeView) string {
	w := newLineWriter(v.oneLiner)

	w.printf("NodeName=%s ", n.Name.Or(""))
	if a := n.Architecture.Or(""); a != "" {
		w.printf("Arch=%s ", a)
	}
	w.printf("CoresPerSocket=%d ", n.Cores.Or(0))
	w.end()

	w.printf("CPUAlloc=%d CPUEfctv=%d CPUTot=%d ", n.AllocCpus.Or(0), n.EffectiveCpus.Or(0), n.Cpus.Or(0))
	w.printf("CPULoad=%.2f", float64(n.CPULoad.Or(0))/100.0)
	w.end()

	w.printf("AvailableFeatures=%s", orNull(strings.Join(n.Features, ",")))
	w.end()
	w.printf("ActiveFeatures=%s", orNull(strings.Join(n.ActiveFeatures, ",")))
	w.end()
	w.printf("Gres=%s", orNull(n.Gres.Or("")))
	w.end()
	// slurmctld sends the drained and used GRES only with SHOW_DETAIL.
	if v.detail {
		if g, ok := n.GresDrained.Get(); ok {
			w.printf("GresDrain=%s", g)
			w.end()
		}
		if g, ok := n.GresUsed.Get(); ok {
			w.printf("GresUsed=%s", g)
			w.end()
		}
	}

	used := false
	if a := n.Address.Or(""); a != "" {
		w.printf("NodeAddr=%s ", a)
		used = true
	}
	if h := n.Hostname.Or(""); h != "" {
		w.printf("NodeHostName=%s ", h)
		used = true
	}
	if p := int(n.Port.Or(0)); v.knownPort && p != v.slurmdPort {
		w.printf("Port=%d ", p)
		used = true
	}
	if ver := n.Version.Or(""); ver != "" {
		w.printf("Version=%s", ver)
		used = true
	}
	if used {
		w.end()
	}

	if os := n.OperatingSystem.Or(""); os != "" {
		w.printf("OS=%s ", os)
		w.end()
	}

	w.printf("RealMemory=%d AllocMem=%d ", n.RealMemory.Or(0), n.AllocMemory.Or(0))
	if fm := u64(n.FreeMem); fm == noVal64 || fm == infinite64 {
		w.printf("FreeMem=N/A ")
	} else {
		w.printf("FreeMem=%d ", fm)
	}
	w.printf("Sockets=%d Boards=%d", n.Sockets.Or(0), n.Boards.Or(0))
	w.end()

	specCores, specCPUs, specMem := n.SpecializedCores.Or(0), n.SpecializedCpus.Or(""), n.SpecializedMemory.Or(0)
	if specCores != 0 || specCPUs != "" || specMem != 0 {
		if specCores != 0 {
			w.printf("CoreSpecCount=%d ", specCores)
		}
		if specCPUs != "" {
			w.printf("CPUSpecList=%s ", specCPUs)
		}
		if specMem != 0 {
			w.printf("MemSpecLimit=%d", specMem)
		}
		w.end()
	}
	if r := n.ResCoresPerGpu.Or(0); r != 0 {
		w.printf("RestrictedCoresPerGPU=%d(%s) ", r, orNull(n.GpuSpec.Or("")))
		w.end()
	}

	owner := "N/A"
	if o := n.Owner.Or(""); o != "" {
		owner = o
	}
	mcs := n.McsLabel.Or("")
	if mcs == "" {
		mcs = "N/A"
	}
	w.printf("State=%s ThreadsPerCore=%d TmpDisk=%d Weight=%d Owner=%s MCS_label=%s",
		nodeStateComplete(n.State), n.Threads.Or(0), n.TemporaryDisk.Or(0), n.Weight.Or(0), owner, mcs)
	w.end()

	if next := n.NextStateAfterReboot; len(next) > 0 && next[0] != "INVALID" &&
		(hasNodeState(n, "REBOOT_REQUESTED") || hasNodeState(n, "REBOOT_ISSUED")) {
		names := make([]string, len(next))
		for i, s := range next {
			names[i] = string(s)
		}
		w.printf("NextState=%s", strings.Join(names, "+"))
		w.end()
	}

	if len(n.Partitions) > 0 {
		w.printf("Partitions=%s ", strings.Join(n.Partitions, ","))
		w.end()
	}

	if bt := epoch(n.BootTime); bt != 0 {
		w.printf("BootTime=%s ", v.timeStr(bt))
	} else {
		w.printf("BootTime=None ")
	}
	if st := epoch(n.SlurmdStartTime); st != 0 {
		w.printf("SlurmdStartTime=%s", v.timeStr(st))
	} else {
		w.printf("SlurmdStartTime=None")
	}
	w.end()

	w.printf("LastBusyTime=%s ", v.timeStr(epoch(n.LastBusy)))
	if ra := epoch(n.ResumeAfter); ra != 0 {
		w.printf("ResumeAfterTime=%s", v.timeStr(ra))
	} else {
		w.printf("ResumeAfterTime=None")
	}
	w.end()

	w.printf("CfgTRES=%s", orNull(n.Tres.Or("")))
	w.end()
	w.printf("AllocTRES=%s", n.TresUsed.Or(""))
	w.end()

	cur := uint64(noVal)
	avg := int32(0)
	if e, ok := n.Energy.Get(); ok {
		cur = u32(e.CurrentWatts)
		avg = e.AverageWatts.Or(0)
	}
	if cur == noVal {
		w.printf("CurrentWatts=n/a AveWatts=n/a")
	} else {
		w.printf("CurrentWatts=%d AveWatts=%d", cur, avg)
	}

	if reason := n.Reason.Or(""); reason != "" {
		for i, tok := range strings.Split(reason, "\n") {
			if tok == "" {
				continue
			}
			w.end()
			if i == 0 {
				w.printf("Reason=%s", tok)
				if rt := epoch(n.ReasonChangedAt); rt != 0 {
					w.printf(" [%s@%s]", orNull(n.ReasonSetByUser.Or("")), v.timeStr(rt))
				}
			} else {
				w.printf("       %s", tok)
			}
		}
	}
	for _, f := range []struct{ key, val string }{
		{"Comment", n.Comment.Or("")},
		{"Extra", n.Extra.Or("")},
	} {
		if f.val != "" {
			w.end()
			w.printf("%s=%s", f.key, f.val)
		}
	}
	if id, typ := n.InstanceID.Or(""), n.InstanceType.Or(""); id != "" || typ != "" {
		w.end()
		if id != "" {
			w.printf("InstanceId=%s ", id)
		}
		if typ != "" {
			w.printf("InstanceType=%s", typ)
		}
	}
	if r := n.Reservation.Or(""); r != "" {
		w.end()
		w.printf("ReservationName=%s", r)
	}
	if renewal := epoch(n.TLSCertLastRenewal); len(n.CertFlags) > 0 || renewal != 0 {
		w.end()
		token := "No"
		if slices.Contains(n.CertFlags, "TOKEN_SET") {
			token = "Yes"
		}
		w.printf("TLSCertTokenSet=%s TLSCertLastRenewal=%s", token, v.timeStr(renewal))
	}
	if t := n.Topology.Or(""); t != "" {
		w.end()
		w.printf("Topology=%s", t)
	}
	if v.oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}

// formatLicense prints one license as scontrol's _print_license_info does.
func formatLicense(l *v0044.V0044License, oneLiner bool, timeStr func(int64) string) string {
	sep := "\n    "
	if oneLiner {
		sep = " "
	}
	remote := "no"
	if l.Remote.Or(false) {
		remote = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=%s",
		l.LicenseName.Or(""), sep, l.Total.Or(0), l.Used.Or(0), l.Free.Or(0), l.Reserved.Or(0), remote)
	switch {
	case l.Nodes.Or("") != "":
		// slurmrestd does not report the license mode; node-bound
		// licenses are the ones that have one.
		fmt.Fprintf(&b, "%sNodes=%s Mode=1\n", sep, l.Nodes.Or(""))
	case l.Remote.Or(false):
		fmt.Fprintf(&b, "%sLastConsumed=%d LastDeficit=%d LastUpdate=%s\n", sep,
			l.LastConsumed.Or(0), l.LastDeficit.Or(0), timeStr(l.LastUpdate.Or(0)))
	default:
		b.WriteString("\n")
	}
	return b.String()
}

// formatReservation prints one reservation as
// slurm_sprint_reservation_info does.
func formatReservation(r *v0044.V0044ReservationInfo, oneLiner bool, now int64, timeStr func(int64) string) string {
	w := newLineWriter(oneLiner)
	start, end := epoch(r.StartTime), epoch(r.EndTime)
	duration := "N/A"
	if end >= start {
		duration = secs2time(end - start)
	}
	w.printf("ReservationName=%s StartTime=%s EndTime=%s Duration=%s", r.Name.Or(""), timeStr(start), timeStr(end), duration)
	w.end()
	flags := make([]string, len(r.Flags))
	for i, f := range r.Flags {
		flags[i] = string(f)
	}
	w.printf("Nodes=%s NodeCnt=%d CoreCnt=%d Features=%s PartitionName=%s Flags=%s",
		orNull(r.NodeList.Or("")), r.NodeCount.Or(0), r.CoreCount.Or(0), orNull(r.Features.Or("")),
		orNull(r.Partition.Or("")), strings.Join(flags, ","))
	w.end()
	for _, cs := range r.CoreSpecializations {
		w.printf("  NodeName=%s CoreIDs=%s", cs.Node.Or(""), cs.Core.Or(""))
		w.end()
	}
	w.printf("TRES=%s", orNull(r.Tres.Or("")))
	w.end()
	w.printf("AllowedPartitions=(null) QOS=(null)")
	w.end()
	state := "INACTIVE"
	if start <= now && end >= now {
		state = "ACTIVE"
	}
	w.printf("Users=%s Groups=%s Accounts=%s Licenses=%s State=%s BurstBuffer=%s",
		orNull(r.Users.Or("")), orNull(r.Groups.Or("")), orNull(r.Accounts.Or("")),
		orNull(r.Licenses.Or("")), state, orNull(r.BurstBuffer.Or("")))
	w.end()
	if d := r.MaxStartDelay.Or(0); d != 0 {
		w.printf("MaxStartDelay=%s", secs2time(int64(d)))
	} else {
		w.printf("MaxStartDelay=(null)")
	}
	if oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}
