package controller

import (
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
)

// priorityCluster is what multifactor's size and partition factors are
// relative to: the configured nodes, CPUs and partitions.
func priorityCluster(cfg *Config) priority.Cluster {
	var cl priority.Cluster
	for _, n := range cfg.Nodes {
		if !n.Future {
			cl.Nodes++
			cl.CPUs += int(n.CPUs)
		}
	}
	for _, p := range cfg.Partitions {
		cl.MaxPartitionFactor = max(cl.MaxPartitionFactor, p.PriorityJobFactor)
	}
	return cl
}

// priorityLocked is the priority a job shows and is scheduled by: under
// priority/multifactor the weighted factors at now (at its start for a job
// that started, frozen as slurmctld stops recomputing it), unless an
// operator fixed it; otherwise the priority it was given.
func (c *Controller) priorityLocked(j *job.Job, now time.Time) uint32 {
	pc := c.cfg.Priority
	if pc == nil || j.PrioritySet || j.Hold != job.NotHeld {
		return j.Priority
	}
	at := now
	if j.State != job.Pending {
		switch {
		case !j.StartTime.IsZero():
			at = j.StartTime
		case !j.EndTime.IsZero():
			at = j.EndTime
		}
	}
	var factor uint32
	if p := c.parts[j.Req.Partition]; p != nil {
		factor = p.PriorityJobFactor
	}
	return pc.Priority(pc.FactorsOf(j, factor, c.prioCluster, at))
}
