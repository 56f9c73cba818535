package scontrol

import (
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// partitionView carries what the partition layout needs besides the
// partition: the flags that only slurm.conf has (see partFlags) and the
// cluster-wide defaults.
type partitionView struct {
	oneLiner    bool
	flags       map[string]partFlags
	preemptMode string
	powerSave   bool
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// formatPartition prints one partition in `scontrol show partition` layout
// (slurm_sprint_partition_info).
func formatPartition(p *readmodel.Partition, v partitionView) string {
	w := newLineWriter(v.oneLiner)
	fl := v.flags[p.Name]

	w.printf("PartitionName=%s", p.Name)
	w.end()

	if p.AllowGroups == "" {
		w.printf("AllowGroups=ALL")
	} else {
		w.printf("AllowGroups=%s", p.AllowGroups)
	}
	if p.AllowAccounts != "" || p.DenyAccounts == "" {
		w.printf(" AllowAccounts=%s", orAll(p.AllowAccounts))
	} else {
		w.printf(" DenyAccounts=%s", p.DenyAccounts)
	}
	if p.AllowQOS != "" || p.DenyQOS == "" {
		w.printf(" AllowQos=%s", orAll(p.AllowQOS))
	} else {
		w.printf(" DenyQos=%s", p.DenyQOS)
	}
	w.end()

	w.printf("AllocNodes=%s", orAll(p.AllowAlloc))
	if p.Alternate != "" {
		w.printf(" Alternate=%s", p.Alternate)
	}
	w.printf(" Default=%s", yesNo(fl.Default))
	if p.QOS != "" {
		w.printf(" QoS=%s", p.QOS)
	} else {
		w.printf(" QoS=N/A")
	}
	w.end()

	switch dt := p.DefaultTime; dt {
	case infinite:
		w.printf("DefaultTime=UNLIMITED")
	case noVal:
		w.printf("DefaultTime=NONE")
	default:
		w.printf("DefaultTime=%s", secs2time(int64(dt)*60))
	}
	w.printf(" DisableRootJobs=%s ExclusiveUser=%s ExclusiveTopo=%s", yesNo(fl.DisableRootJobs), yesNo(fl.ExclusiveUser), yesNo(fl.ExclusiveTopo))
	w.printf(" GraceTime=%d Hidden=%s", p.GraceTime, yesNo(fl.Hidden))
	w.end()

	if mn := p.MaxNodes; mn == infinite || mn == noVal {
		w.printf("MaxNodes=UNLIMITED")
	} else {
		w.printf("MaxNodes=%d", mn)
	}
	if mt := p.MaxTime; mt == infinite || mt == noVal {
		w.printf(" MaxTime=UNLIMITED")
	} else {
		w.printf(" MaxTime=%s", secs2time(int64(mt)*60))
	}
	w.printf(" MinNodes=%d LLN=%s", p.MinNodes, yesNo(fl.LLN))
	if c := p.MaxCPUsPerNode; c == infinite || c == noVal {
		w.printf(" MaxCPUsPerNode=UNLIMITED")
	} else {
		w.printf(" MaxCPUsPerNode=%d", c)
	}
	if c := p.MaxCPUsPerSocket; c == infinite || c == noVal {
		w.printf(" MaxCPUsPerSocket=UNLIMITED")
	} else {
		w.printf(" MaxCPUsPerSocket=%d", c)
	}
	w.end()

	if p.NodeSets != "" {
		w.printf("NodeSets=%s", p.NodeSets)
		w.end()
	}
	w.printf("Nodes=%s", orNull(p.Nodes))
	w.end()

	w.printf("PriorityJobFactor=%d PriorityTier=%d RootOnly=%s ReqResv=%s",
		p.JobFactor, p.Tier, yesNo(fl.RootOnly), yesNo(fl.ReqResv))
	w.printf(" OverSubscribe=%s", oversubscribe(p.MaxShare, p.ForceShare))
	w.end()

	switch otl := p.OverTimeLimit; otl {
	case noVal16:
		w.printf("OverTimeLimit=NONE")
	case infinite16:
		w.printf("OverTimeLimit=UNLIMITED")
	default:
		w.printf("OverTimeLimit=%d", otl)
	}
	mode := fl.PreemptMode
	if mode == "" {
		mode = v.preemptMode
	}
	w.printf(" PreemptMode=%s", strings.ToUpper(mode))
	w.end()

	if p.Topology != "" {
		w.printf("Topology=%s", p.Topology)
		w.end()
	}

	w.printf("State=%s TotalCPUs=%d TotalNodes=%d SelectTypeParameters=%s",
		p.State, p.TotalCPUs, p.TotalNodes, selectTypeParams(p.SelectType))
	w.end()

	w.printf("JobDefaults=%s", orNull(p.JobDefaults))
	w.end()

	w.printf("%s %s", memLimit("Def", p.DefMemPerCPU, p.DefMemPerNode), memLimit("Max", p.MaxMemPerCPU, p.MaxMemPerNode))
	w.end()
	w.printf("TRES=%s", orNull(p.TRES))
	if p.BillingWeights != "" {
		w.end()
		w.printf("TRESBillingWeights=%s", p.BillingWeights)
	}
	if v.powerSave {
		w.end()
		w.printf("ResumeTimeout=%s SuspendTimeout=%s SuspendTime=%s PowerDownOnIdle=%s",
			globalOr(uint64(p.ResumeTimeout), true), globalOr(uint64(p.SuspendTimeout), true),
			globalOr(uint64(p.SuspendTime), false), yesNo(fl.PowerDownOnIdle))
	}
	if v.oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}

func orAll(s string) string {
	if s == "" {
		return "ALL"
	}
	return s
}

// globalOr prints a power-saving timeout: GLOBAL when unset (the
// slurm.conf value applies), INFINITE, or the number.
func globalOr(v uint64, is16 bool) string {
	nv, inf := uint64(noVal), uint64(infinite)
	if is16 {
		nv, inf = noVal16, infinite16
	}
	switch v {
	case nv:
		return "GLOBAL"
	case inf:
		return "INFINITE"
	}
	return fmt.Sprint(v)
}

// oversubscribe prints a partition's OverSubscribe as scontrol does from
// max_share (EXCLUSIVE, NO, YES:n, FORCE:n).
func oversubscribe(jobs int32, force bool) string {
	switch {
	case jobs == 0:
		return "EXCLUSIVE"
	case force:
		return fmt.Sprintf("FORCE:%d", jobs)
	case jobs == 1:
		return "NO"
	}
	return fmt.Sprintf("YES:%d", jobs)
}

// memLimit prints DefMemPerCPU/DefMemPerNode (prefix "Def") or the Max
// variants as scontrol does: a per-CPU limit when one is set, else the
// per-node one, UNLIMITED for 0.
func memLimit(prefix string, perCPU, perNode uint64) string {
	if c := perCPU; c != noVal64 {
		if c == infinite64 || c == 0 {
			return prefix + "MemPerCPU=UNLIMITED"
		}
		return fmt.Sprintf("%sMemPerCPU=%d", prefix, c)
	}
	if n := perNode; n != noVal64 && n != infinite64 && n != 0 {
		return fmt.Sprintf("%sMemPerNode=%d", prefix, n)
	}
	return prefix + "MemPerNode=UNLIMITED"
}

// selectTypeParams is select_type_param_string for a partition's
// select_type list: NONE when empty.
func selectTypeParams(items []string) string {
	if len(items) == 0 {
		return "NONE"
	}
	return strings.Join(items, ",")
}
