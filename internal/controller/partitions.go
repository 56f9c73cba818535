package controller

import (
	"context"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Partitions made, changed or deleted at run time (scontrol create,
// update and delete PartitionName=, REST v0.0.45 partitions) are commands
// in the log: they outlive restarts and reconfigures, where slurmctld
// would keep them only with ReconfigFlags=KeepPartInfo and -R, so that
// no job waiting in such a partition is lost.

// PartitionChange is what scontrol create/update PartitionName= and a
// REST partition record set; nil members keep their value.
type PartitionChange struct {
	Name string
	// Nodes is a hostlist, or ALL.
	Nodes                          *string
	State                          *partition.State
	MaxTime, DefaultTime           *uint32 // minutes, partition.Infinite
	MaxNodes, MinNodes             *uint32
	PriorityTier, JobFactor        *uint32
	Default, Hidden, ExclusiveUser *bool
	OverSubscribe                  *string
	GraceTime                      *time.Duration
	DefMemPerCPU                   *uint64
	DefMemPerNode                  *uint64
	MaxMemPerNode                  *uint64
	// QOS is the partition's QOS ("" for none).
	QOS *string
}

// SetPartition makes a partition (create) or changes one, as slurmctld's
// update_part: only root, SlurmUser and administrators may; a name taken
// (create) or unknown (update) is an invalid partition name.
func (c *Controller) SetPartition(ctx context.Context, who Identity, ch PartitionChange, create bool) error {
	if err := c.requireSuperUser(who, "UPDATE_PARTITION"); err != nil {
		return err
	}
	if ch.Name == "" || strings.ContainsAny(ch.Name, ", \t") {
		return slurmerr.New(slurmerr.InvalidPartitionName, "invalid partition name %q", ch.Name)
	}
	c.mu.RLock()
	cur, exists := c.parts[ch.Name]
	var p partition.Partition
	switch {
	case create && exists:
		c.mu.RUnlock()
		return slurmerr.New(slurmerr.InvalidPartitionName, "Duplicate partition name for create (%s)", ch.Name)
	case !create && !exists:
		c.mu.RUnlock()
		return slurmerr.New(slurmerr.InvalidPartitionName, "Invalid partition name specified: %s", ch.Name)
	case exists:
		p = *cur
		if r := c.st.Parts[ch.Name]; r != nil {
			p.Nodes = r.Nodes // as named, not as dynamic nodes widened it
		} else {
			for _, q := range c.cfg.Partitions {
				if q.Name == ch.Name {
					p.Nodes = q.Nodes
				}
			}
		}
	default:
		// slurmctld's defaults for a partition slurm.conf does not name.
		p = partition.Partition{Name: ch.Name, MaxTime: partition.Infinite, MaxNodes: partition.Infinite,
			OverSubscribe: "NO", PreemptMode: partition.PreemptOff,
			DefMemPerCPU: c.cfg.Defaults.DefMemPerCPU, DefMemPerNode: c.cfg.Defaults.DefMemPerNode}
	}
	if ch.Nodes != nil {
		if strings.EqualFold(*ch.Nodes, "ALL") {
			p.AllNodes, p.Nodes = true, nil
		} else {
			names, err := hostlist.Expand(*ch.Nodes)
			var unknown []string
			for _, n := range names {
				if c.nodes[n] == nil {
					unknown = append(unknown, n)
				}
			}
			if err != nil || len(unknown) > 0 {
				c.mu.RUnlock()
				return slurmerr.New(slurmerr.InvalidNodeName, "Invalid node name specified: %s", *ch.Nodes)
			}
			p.AllNodes, p.NodeFeatures, p.Nodes = false, nil, names
		}
	}
	c.mu.RUnlock()
	set := func(dst *uint32, v *uint32) {
		if v != nil {
			*dst = *v
		}
	}
	if ch.State != nil {
		p.State = *ch.State
	}
	set(&p.MaxTime, ch.MaxTime)
	set(&p.DefaultTime, ch.DefaultTime)
	set(&p.MaxNodes, ch.MaxNodes)
	set(&p.MinNodes, ch.MinNodes)
	set(&p.PriorityTier, ch.PriorityTier)
	set(&p.PriorityJobFactor, ch.JobFactor)
	if ch.Default != nil {
		p.Default = *ch.Default
	}
	if ch.Hidden != nil {
		p.Hidden = *ch.Hidden
	}
	if ch.ExclusiveUser != nil {
		p.ExclusiveUser = *ch.ExclusiveUser
	}
	if ch.OverSubscribe != nil {
		p.OverSubscribe = strings.ToUpper(*ch.OverSubscribe)
	}
	if ch.GraceTime != nil {
		p.GraceTime = *ch.GraceTime
	}
	if ch.DefMemPerCPU != nil {
		p.DefMemPerCPU, p.DefMemPerNode = *ch.DefMemPerCPU, 0
	}
	if ch.DefMemPerNode != nil {
		p.DefMemPerNode, p.DefMemPerCPU = *ch.DefMemPerNode, 0
	}
	if ch.MaxMemPerNode != nil {
		p.MaxMemPerNode = *ch.MaxMemPerNode
	}
	if ch.QOS != nil {
		c.mu.RLock()
		_, known := c.st.Acct.QOS(*ch.QOS)
		c.mu.RUnlock()
		if *ch.QOS != "" && !known {
			return slurmerr.New(slurmerr.InvalidQOS, "")
		}
		p.QOS = *ch.QOS
	}
	if p.DefaultTime != 0 && p.MaxTime != partition.Infinite && p.DefaultTime > p.MaxTime {
		return slurmerr.New(slurmerr.InvalidTimeLimit, "DefaultTime exceeds MaxTime for partition %s", p.Name)
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpPartSet, PartSet: &ctlstate.PartSetCmd{Partition: p}}); err != nil {
		return err
	}
	c.logger.Info("partition set", "partition", p.Name, "create", create)
	c.Kick()
	return nil
}

// DeletePartition is scontrol delete PartitionName=: refused while a job
// that is not over is in it (partition in use, as slurmctld).
func (c *Controller) DeletePartition(ctx context.Context, who Identity, name string) error {
	if err := c.requireSuperUser(who, "DELETE_PARTITION"); err != nil {
		return err
	}
	c.mu.RLock()
	_, exists := c.parts[name]
	inUse := len(c.partitionsInUseLocked()[name]) > 0
	c.mu.RUnlock()
	switch {
	case !exists:
		return slurmerr.New(slurmerr.InvalidPartitionName, "Invalid partition name specified: %s", name)
	case inUse:
		return slurmerr.New(slurmerr.PartitionInUse, "Partition %s in use by job(s)", name)
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpPartDelete, PartDelete: &ctlstate.PartDeleteCmd{Name: name}}); err != nil {
		return err
	}
	c.logger.Info("partition deleted", "partition", name)
	return nil
}
