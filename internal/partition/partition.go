// Package partition holds the domain model of a partition: a named set of
// nodes with limits and defaults for the jobs submitted to it.
package partition

import "time"

// State is a partition's availability (PartitionName State=).
type State uint8

// Partition states as slurm.conf spells them.
const (
	Up State = iota
	Down
	Drain
	Inactive
)

// String returns the state's slurm.conf spelling.
func (s State) String() string {
	switch s {
	case Down:
		return "DOWN"
	case Drain:
		return "DRAIN"
	case Inactive:
		return "INACTIVE"
	default:
		return "UP"
	}
}

// Infinite is an unlimited time (minutes) or node count.
const Infinite uint32 = 0xFFFFFFFF

// Partition is one partition.
type Partition struct {
	Name  string
	Nodes []string
	// AllNodes (Nodes=ALL) and NodeFeatures (the Features of the NodeSets
	// Nodes= names) say which dynamic nodes join the partition, as
	// slurmctld's _update_parts adds them.
	AllNodes     bool
	NodeFeatures []string
	Default      bool
	State        State
	// MaxTime and DefaultTime are minutes (Infinite: UNLIMITED; DefaultTime
	// 0: none, so MaxTime applies).
	MaxTime           uint32
	DefaultTime       uint32
	PriorityTier      uint32
	PriorityJobFactor uint32
	MaxNodes          uint32
	MinNodes          uint32
	// DefMemPerCPU and DefMemPerNode (MB) default a job's memory.
	DefMemPerCPU  uint64
	DefMemPerNode uint64
	MaxMemPerNode uint64
	// BillingWeights are TRESBillingWeights (nil: billing is the CPUs),
	// as slurm.conf wrote them in BillingWeightsText.
	BillingWeights     BillingWeights
	BillingWeightsText string
	// QOS is the partition's QOS (QOS=): its limits hold the partition's
	// jobs, over the jobs' own QOS's.
	QOS           string
	Hidden        bool
	OverSubscribe string
	ExclusiveUser bool
	// PreemptMode is what happens to this partition's jobs when a job of
	// a higher PriorityTier preempts them (the partition's PreemptMode, or
	// the cluster's): PreemptOff, PreemptCancel or PreemptRequeue.
	PreemptMode string
	// GraceTime is how long a preempted job has between SIGTERM and
	// SIGKILL.
	GraceTime time.Duration
}

// Preemption modes.
const (
	PreemptOff     = "OFF"
	PreemptCancel  = "CANCEL"
	PreemptRequeue = "REQUEUE"
)

// HasNode reports whether the partition contains node.
func (p *Partition) HasNode(node string) bool {
	for _, n := range p.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// AcceptsJobs reports whether jobs may be submitted (UP or DOWN: DOWN
// partitions queue jobs without starting them, as Slurm does).
func (p *Partition) AcceptsJobs() bool { return p.State == Up || p.State == Down }

// RunsJobs reports whether pending jobs may start.
func (p *Partition) RunsJobs() bool { return p.State == Up || p.State == Drain }
