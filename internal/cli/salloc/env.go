package salloc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/alloc"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
	steplayout "github.com/droverhq/drover/internal/step/layout"
)

// allocation is what the command's environment takes from the granted
// job: the part of slurmctld's resource_allocation_response_msg_t that
// env_array_for_job reads.
type allocation struct {
	JobID    uint32
	NodeList string   // as Slurm writes it ("n[1-2]")
	Nodes    []string // in allocation order
	CPUs     []int    // the job's CPUs on each of Nodes
	// Partition, Account, QOS and Reservation are the job's; Cluster is
	// ClusterName.
	Partition, Account, QOS, Reservation, Cluster string
	// MemPerCPU and MemPerNode are the job's memory request in MB, 0 when
	// not known.
	MemPerCPU, MemPerNode uint64
	SegmentSize           int
}

// allocationOf reads a running job's record (GET /job/{id}).
func allocationOf(id uint32, j readmodel.JobInfo) allocation {
	a := allocation{
		JobID: id, NodeList: j.Nodes,
		Partition: j.Partition, Account: j.Account, QOS: j.QOS,
		Reservation: j.Reservation, Cluster: j.Cluster,
		SegmentSize: int(int32(j.SegmentSize)),
	}
	nodes := slices.Clone(j.Alloc)
	slices.SortStableFunc(nodes, func(x, y readmodel.NodeAlloc) int { return cmp.Compare(x.Index, y.Index) })
	for _, n := range nodes {
		a.Nodes = append(a.Nodes, n.Name)
		a.CPUs = append(a.CPUs, n.CPUs)
	}
	if a.NodeList == "" {
		a.NodeList = j.AllocNodes
	}
	if len(a.Nodes) == 0 && a.NodeList != "" {
		// No per-node detail: the job's CPUs shared out evenly.
		names, _ := hostlist.Expand(a.NodeList)
		total := int(j.NumCPUs)
		for range names {
			a.CPUs = append(a.CPUs, total/max(len(names), 1))
		}
		a.Nodes = names
	}
	if m := j.MemPerCPU; m != readmodel.NoVal64 && m != readmodel.Infinite64 && m > 0 {
		a.MemPerCPU = m
	}
	if m := j.MemPerNode; m != readmodel.NoVal64 && m != readmodel.Infinite64 && m > 0 {
		a.MemPerNode = m
	}
	return a
}

// submission is where salloc was run: SLURM_SUBMIT_DIR and
// SLURM_SUBMIT_HOST.
type submission struct {
	Dir, Host string
}

// commandEnv builds the environment of the command salloc runs, the way
// salloc edits its own environment before it forks the command: the
// caller's environment, the variables option checking set (SLURM_HINT,
// SLURM_NTASKS_PER_NODE...), SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST, then
// set_env_from_opts (jobopts' AddOptionEnv), env_array_for_job (the job's
// id, name, nodes, CPUs, task layout, account, QOS...) and
// SLURM_CLUSTER_NAME, without SLURM_STEPMGR (a nested salloc's srun must
// not use the enclosing job's step manager).
//
// One difference: salloc overwrites OMPI_MCA_plm_slurm_args and
// PRTE_MCA_plm_slurm_args when the caller has them; Drover keeps the
// caller's, as sbatch does.
func commandEnv(base []string, o *jobopts.Options, a allocation, sub submission) ([]string, error) {
	env := jobopts.NewEnviron(base)
	for _, v := range o.EnvVars {
		env.Set(v.Name, v.Value)
	}
	env.Set("SLURM_SUBMIT_DIR", sub.Dir)
	env.Set("SLURM_SUBMIT_HOST", sub.Host)
	o.AddOptionEnv(env)
	if err := addJobEnv(env, o, a); err != nil {
		return nil, err
	}
	env.Set("SLURM_CLUSTER_NAME", a.Cluster)
	env.Unset("SLURM_STEPMGR")
	return env.List(), nil
}

// addJobEnv is env_array_for_job for salloc's job description, after
// salloc's own fix-up of the task count: --ntasks-per-node without
// --ntasks asks for that many tasks on every node of the allocation, and
// no fewer tasks than nodes.
func addJobEnv(env *jobopts.Environ, o *jobopts.Options, a allocation) error {
	itoa := strconv.Itoa
	set := env.Set
	tasks, tasksSet := 0, o.Ntasks.Set || o.NtasksPerNode.Set
	switch {
	case !tasksSet:
	case !o.Ntasks.Set:
		tasks = len(a.Nodes) * o.NtasksPerNode.Val
	default:
		tasks = max(o.Ntasks.Val, len(a.Nodes))
	}

	id := strconv.FormatUint(uint64(a.JobID), 10)
	set("SLURM_JOB_ID", id)
	set("SLURM_JOB_NAME", o.JobName.Val)
	set("SLURM_JOB_NUM_NODES", itoa(len(a.Nodes)))
	set("SLURM_JOB_NODELIST", a.NodeList)
	set("SLURM_JOB_PARTITION", a.Partition)
	if d := o.DistributionEnv(); d != "" {
		set("SLURM_DISTRIBUTION", d)
	}
	if o.Distribution == "plane" && o.PlaneSize.Set {
		set("SLURM_DIST_PLANESIZE", itoa(o.PlaneSize.Val))
	}
	set("SLURM_JOB_CPUS_PER_NODE", steplayout.TasksPerNodeString(a.CPUs))
	if o.ThreadsPerCore.Set {
		set("SLURM_THREADS_PER_CORE", itoa(o.ThreadsPerCore.Val))
	}
	// slurmctld reports the job's memory to salloc only when the user
	// asked for some (JOB_MEM_SET).
	switch {
	case o.MemPerCPU.Set:
		set("SLURM_MEM_PER_CPU", strconv.FormatUint(cmp.Or(a.MemPerCPU, o.MemPerCPU.Val), 10))
	case o.Mem.Set && cmp.Or(a.MemPerNode, o.Mem.Val) > 0:
		set("SLURM_MEM_PER_NODE", strconv.FormatUint(cmp.Or(a.MemPerNode, o.Mem.Val), 10))
	}
	set("SLURM_JOBID", id)
	set("SLURM_NNODES", itoa(len(a.Nodes)))
	set("SLURM_NODELIST", a.NodeList)

	lay, err := jobLayout(o, a, tasks, tasksSet)
	if err != nil {
		return err
	}
	if o.Distribution == "arbitrary" {
		set("SLURM_ARBITRARY_NODELIST", o.NodeList)
	}
	set("SLURM_TASKS_PER_NODE", lay.TasksPerNode())
	if a.Account != "" {
		set("SLURM_JOB_ACCOUNT", a.Account)
	}
	if a.QOS != "" {
		set("SLURM_JOB_QOS", a.QOS)
	}
	if a.Reservation != "" {
		set("SLURM_JOB_RESERVATION", a.Reservation)
	}
	if o.AcctgFreq != "" {
		set("SLURM_ACCTG_FREQ", o.AcctgFreq)
	}
	if o.Network != "" {
		set("SLURM_NETWORK", o.Network)
	}
	if o.Overcommit {
		set("SLURM_OVERCOMMIT", "1")
	}
	if tasksSet {
		set("SLURM_NTASKS", itoa(tasks))
		set("SLURM_NPROCS", itoa(tasks))
	}
	if o.CPUsPerTask.Set {
		set("SLURM_CPUS_PER_TASK", itoa(o.CPUsPerTask.Val))
	}
	if o.TRESPerTask != "" {
		set("SLURM_TRES_PER_TASK", o.TRESPerTask)
	}
	if o.NtasksPerNode.Set && o.NtasksPerNode.Val > 0 {
		set("SLURM_NTASKS_PER_NODE", itoa(o.NtasksPerNode.Val))
	}
	if a.SegmentSize > 0 {
		set("SLURM_JOB_SEGMENT_SIZE", itoa(a.SegmentSize))
	}
	return nil
}

// jobLayout lays the job's tasks out over its CPUs as env_array_for_job
// does for SLURM_TASKS_PER_NODE: the tasks asked for, or as many as the
// CPUs hold at --cpus-per-task each, with the job's distribution.
func jobLayout(o *jobopts.Options, a allocation, tasks int, tasksSet bool) (steplayout.Layout, error) {
	cpt := 0
	if o.CPUsPerTask.Set {
		cpt = o.CPUsPerTask.Val
	}
	if !tasksSet {
		for _, c := range a.CPUs {
			if cpt > 1 {
				c /= cpt
			}
			tasks += c
		}
	}
	nodes := make([]steplayout.NodeAvail, len(a.Nodes))
	for i, n := range a.Nodes {
		nodes[i] = steplayout.NodeAvail{Name: n, CPUs: a.CPUs[i]}
	}
	ts := steplayout.TaskSpec{Tasks: tasks, CPUsPerTask: cpt}
	dist := o.Distribution
	if dist == "plane" && o.PlaneSize.Set {
		dist += "=" + strconv.Itoa(o.PlaneSize.Val)
	}
	switch {
	case dist == "" && o.DistPack != "":
		dist = o.DistPack
	case o.DistPack != "":
		dist += "," + o.DistPack
	}
	if dist != "" {
		d, err := steplayout.ParseDistribution(dist)
		if err != nil {
			return steplayout.Layout{}, err
		}
		ts.Dist = d
	}
	if ts.Dist.Kind == steplayout.ArbitraryDist {
		names, err := hostlist.Expand(o.NodeList)
		if err != nil {
			return steplayout.Layout{}, err
		}
		ts.Arbitrary = names
	}
	return steplayout.Distribute(nodes, ts)
}

// shellOf is the login shell of uid in passwd, the password file's text
// (uid_to_shell); "" when the user has no entry there.
func shellOf(passwd string, uid uint32) string {
	want := strconv.FormatUint(uint64(uid), 10)
	for line := range strings.SplitSeq(passwd, "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 7 && f[2] == want {
			return f[6]
		}
	}
	return ""
}

// hetEnv is the command's environment for a heterogeneous allocation, as
// salloc writes it (env_array_for_job once per component): every job
// variable as SLURM_<NAME>_HET_GROUP_n and SLURM_<NAME>_PACK_GROUP_n,
// SLURM_JOB_ID alone kept plain (the leader's), then SLURM_HET_SIZE and
// SLURM_PACK_SIZE.
func (s *session) hetEnv(ctx context.Context, leaderEnv []string, comps []*jobopts.Options, sub submission) ([]string, error) {
	env := jobopts.NewEnviron(leaderEnv)
	shared := map[string]bool{"SLURM_SUBMIT_DIR": true, "SLURM_SUBMIT_HOST": true, "SLURM_CLUSTER_NAME": true, "SLURM_JOB_ID": true}
	for k, o := range comps {
		id := s.id + uint32(k)
		g, err := alloc.Lookup(ctx, s.env, id)
		if err != nil {
			return nil, fmt.Errorf("component %d (job %d): %w", k, id, err)
		}
		vars, err := commandEnv(nil, o, allocationOf(id, readmodel.FromV0044JobInfo(&g)), sub)
		if err != nil {
			return nil, err
		}
		n := strconv.Itoa(k)
		for _, kv := range vars {
			name, v, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(name, "SLURM_") || (shared[name] && name != "SLURM_JOB_ID") {
				continue
			}
			if !shared[name] {
				env.Unset(name)
			}
			env.Set(name+"_PACK_GROUP_"+n, v)
			env.Set(name+"_HET_GROUP_"+n, v)
		}
	}
	size := strconv.Itoa(len(comps))
	env.Set("SLURM_PACK_SIZE", size)
	env.Set("SLURM_HET_SIZE", size)
	return env.List(), nil
}
