package controller

import (
	"strconv"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	steplayout "github.com/droverhq/drover/internal/step/layout"
)

// hetEnvLocked is what a heterogeneous job's batch script learns of its
// components, as slurmctld's _set_het_job_env writes it into the launch:
// per component n, SLURM_<NAME>_HET_GROUP_n and the older
// SLURM_<NAME>_PACK_GROUP_n, then SLURM_HET_SIZE and SLURM_PACK_SIZE.
func (c *Controller) hetEnvLocked(leader *job.Job) []string {
	if !leader.IsHetLeader() {
		return nil
	}
	var env []string
	set := func(name string, n int, value string) {
		env = append(env,
			name+"_PACK_GROUP_"+strconv.Itoa(n)+"="+value,
			name+"_HET_GROUP_"+strconv.Itoa(n)+"="+value)
	}
	n := 0
	for _, id := range leader.HetComponents() {
		comp := c.st.Jobs[id]
		if comp == nil {
			continue
		}
		r := &comp.Req
		if r.Account != "" {
			set("SLURM_JOB_ACCOUNT", n, r.Account)
		}
		var cpus, tasks []int
		if comp.Alloc != nil {
			for _, na := range comp.Alloc.Nodes {
				cpus = append(cpus, int(na.CPUs))
				tasks = append(tasks, int(na.Tasks))
			}
			set("SLURM_JOB_CPUS_PER_NODE", n, steplayout.TasksPerNodeString(cpus))
		}
		set("SLURM_JOB_ID", n, strconv.FormatUint(uint64(comp.ID), 10))
		set("SLURM_JOB_NAME", n, r.Name)
		set("SLURM_JOB_NODELIST", n, hostlist.Compress(comp.Alloc.NodeNames()))
		set("SLURM_JOB_NUM_NODES", n, strconv.Itoa(len(cpus)))
		set("SLURM_JOB_PARTITION", n, r.Partition)
		if r.QOS != "" {
			set("SLURM_JOB_QOS", n, r.QOS)
		}
		if r.Reservation != "" {
			set("SLURM_JOB_RESERVATION", n, r.Reservation)
		}
		switch {
		case r.MemPerCPU > 0:
			set("SLURM_MEM_PER_CPU", n, strconv.FormatUint(r.MemPerCPU, 10))
		case r.MemPerNode > 0:
			set("SLURM_MEM_PER_NODE", n, strconv.FormatUint(r.MemPerNode, 10))
		}
		if comp.Alloc != nil {
			set("SLURM_TASKS_PER_NODE", n, steplayout.TasksPerNodeString(tasks))
		}
		n++
	}
	size := strconv.Itoa(n)
	return append(env, "SLURM_PACK_SIZE="+size, "SLURM_HET_SIZE="+size)
}
