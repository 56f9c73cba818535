package readmodel

import (
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Partition is one partition record as scontrol and sinfo read it:
// limits as slurmctld holds them (NoVal/Infinite sentinels, widths and
// signs as slurmrestd gives them), "" for NULL strings. v0.0.44 does not
// report the partition flags (Default, Hidden, RootOnly...): the
// commands take those from slurm.conf.
type Partition struct {
	Name      string
	Alternate string
	Topology  string
	NodeSets  string
	// State is the first of partition.state ("UP", "DRAIN"), UNKNOWN
	// when there is none.
	State string

	AllowGroups   string
	AllowAccounts string
	DenyAccounts  string
	AllowQOS      string
	DenyQOS       string
	QOS           string
	AllowAlloc    string
	// Nodes is the configured node list; TotalNodes and TotalCPUs its
	// size.
	Nodes      string
	TotalNodes int32
	TotalCPUs  int32

	// DefaultTime and MaxTime are minutes; NoVal, Infinite.
	DefaultTime, MaxTime uint32
	MinNodes             int32
	MaxNodes             uint32
	MaxCPUsPerNode       uint32
	MaxCPUsPerSocket     uint32
	OverTimeLimit        uint16
	GraceTime            int32
	JobFactor, Tier      int32
	// MaxShare is max_share's job count (1 when absent); ForceShare its
	// FORCE flag.
	MaxShare   int32
	ForceShare bool

	// SelectType lists select_type as slurmrestd spells it.
	SelectType  []string
	JobDefaults string
	// The memory limits in MB: NoVal64 when unset, Infinite64.
	DefMemPerCPU, DefMemPerNode uint64
	MaxMemPerCPU, MaxMemPerNode uint64
	TRES, BillingWeights        string
	// ResumeTimeout and SuspendTimeout are seconds, NoVal16 when the
	// slurm.conf value applies; SuspendTime likewise with NoVal.
	ResumeTimeout, SuspendTimeout uint16
	SuspendTime                   uint32
}

// FromV0044Partition reads one slurmrestd v0.0.44 partition record.
func FromV0044Partition(w *v0044.V0044PartitionInfo) Partition {
	accounts := w.Accounts.Or(v0044.V0044PartitionInfoAccounts{})
	qos := w.Qos.Or(v0044.V0044PartitionInfoQos{})
	nodes := w.Nodes.Or(v0044.V0044PartitionInfoNodes{})
	defaults := w.Defaults.Or(v0044.V0044PartitionInfoDefaults{})
	maxs := w.Maximums.Or(v0044.V0044PartitionInfoMaximums{})
	over := maxs.Oversubscribe.Or(v0044.V0044PartitionInfoMaximumsOversubscribe{})
	prio := w.Priority.Or(v0044.V0044PartitionInfoPriority{})
	tres := w.Tres.Or(v0044.V0044PartitionInfoTres{})
	timeouts := w.Timeouts.Or(v0044.V0044PartitionInfoTimeouts{})
	p := Partition{
		Name:      w.Name.Or(""),
		Alternate: w.Alternate.Or(""),
		Topology:  w.Topology.Or(""),
		NodeSets:  w.NodeSets.Or(""),
		State:     "UNKNOWN",

		AllowGroups:   w.Groups.Or(v0044.V0044PartitionInfoGroups{}).Allowed.Or(""),
		AllowAccounts: accounts.Allowed.Or(""),
		DenyAccounts:  accounts.Deny.Or(""),
		AllowQOS:      qos.Allowed.Or(""),
		DenyQOS:       qos.Deny.Or(""),
		QOS:           qos.Assigned.Or(""),
		AllowAlloc:    nodes.AllowedAllocation.Or(""),
		Nodes:         nodes.Configured.Or(""),
		TotalNodes:    nodes.Total.Or(0),
		TotalCPUs:     w.Cpus.Or(v0044.V0044PartitionInfoCpus{}).Total.Or(0),

		DefaultTime:      u32(defaults.Time),
		MaxTime:          u32(maxs.Time),
		MinNodes:         w.Minimums.Or(v0044.V0044PartitionInfoMinimums{}).Nodes.Or(0),
		MaxNodes:         u32(maxs.Nodes),
		MaxCPUsPerNode:   u32(maxs.CpusPerNode),
		MaxCPUsPerSocket: u32(maxs.CpusPerSocket),
		OverTimeLimit:    u16(maxs.OverTimeLimit),
		GraceTime:        w.GraceTime.Or(0),
		JobFactor:        prio.JobFactor.Or(0),
		Tier:             prio.Tier.Or(0),
		MaxShare:         over.Jobs.Or(1),

		JobDefaults:    defaults.Job.Or(""),
		DefMemPerCPU:   u64(defaults.PartitionMemoryPerCPU),
		DefMemPerNode:  u64(defaults.PartitionMemoryPerNode),
		MaxMemPerCPU:   u64(maxs.PartitionMemoryPerCPU),
		MaxMemPerNode:  u64(maxs.PartitionMemoryPerNode),
		TRES:           tres.Configured.Or(""),
		BillingWeights: tres.BillingWeights.Or(""),
		ResumeTimeout:  u16(timeouts.Resume),
		SuspendTimeout: u16(timeouts.Suspend),
		SuspendTime:    u32(w.SuspendTime),
	}
	if st, ok := w.Partition.Get(); ok && len(st.State) > 0 {
		p.State = string(st.State[0])
	}
	for _, f := range over.Flags {
		if f == v0044.V0044PartitionInfoMaximumsOversubscribeFlagsItemForce {
			p.ForceShare = true
		}
	}
	for _, s := range w.SelectType {
		p.SelectType = append(p.SelectType, string(s))
	}
	return p
}

// FromV0044Partitions reads a REST partition list, in its order.
func FromV0044Partitions(ws []v0044.V0044PartitionInfo) []Partition {
	out := make([]Partition, len(ws))
	for i := range ws {
		out[i] = FromV0044Partition(&ws[i])
	}
	return out
}
