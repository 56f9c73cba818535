// Package layout decides where the tasks of a job step (srun) go inside
// the job's allocation, exactly as Slurm does: srun's option handling
// (src/srun/libsrun/opt.c, srun_job.c, launch.c), slurmctld's choice of the
// step's nodes (_pick_step_nodes in src/slurmctld/step_mgr.c) and the task
// layout (src/common/slurm_step_layout.c). It is pure: no I/O, no clock.
package layout

import (
	"slices"

	"github.com/droverhq/drover/internal/slurmerr"
)

// MaxTasksPerNode is slurm.conf's MaxTasksPerNode default: step_create
// refuses more tasks than this many per step node (ESLURM_BAD_TASK_COUNT).
const MaxTasksPerNode = 512

// NodeAvail is one node of the job's allocation as the step sees it.
type NodeAvail struct {
	Name string
	CPUs int // CPUs of the job's allocation on this node that the step may use
	// Busy is how many CPUs of the job's allocation on this node the job's
	// other running steps hold (not counted in CPUs); 0 with --overlap,
	// where slurmctld ignores them. A node with Busy CPUs is not idle
	// (slurmctld takes idle nodes first), takes no step that wants whole
	// nodes (no --exact: SSF_WHOLE), and makes slurmctld answer "busy"
	// (the step waits) where it would otherwise refuse.
	Busy int
}

// Layout is the result.
type Layout struct {
	Nodes []string // the step's nodes, in allocation order (arbitrary: its list's nodes in Slurm's host order)
	Tasks [][]int  // for each of Nodes, the global task ids (SLURM_PROCID) placed there, ascending
	// Dist is the distribution srun exports as SLURM_DISTRIBUTION
	// (Dist.String()): the requested one, with the node part filled in
	// when none was given.
	Dist Distribution
	// CPUsPerTask is the step's cpus_per_task as slurmctld derives it
	// (_calc_cpus_per_task): -c, or 1, or 0 where the job's nodes cannot
	// hold every task at that count or with -O; the layout then counts one
	// CPU per task.
	CPUsPerTask int
	// Warnings are the notices srun prints while adjusting the request,
	// each after "srun: " ("Warning: can't run 2 processes on 4 nodes,
	// setting nnodes to 2").
	Warnings []string
}

// NumTasks is the step's task count (SLURM_STEP_NUM_TASKS).
func (l Layout) NumTasks() int {
	n := 0
	for _, t := range l.Tasks {
		n += len(t)
	}
	return n
}

// Counts is the number of tasks on each of Nodes.
func (l Layout) Counts() []int {
	c := make([]int, len(l.Tasks))
	for i, t := range l.Tasks {
		c[i] = len(t)
	}
	return c
}

// TasksPerNode is SLURM_STEP_TASKS_PER_NODE (and the step's
// SLURM_TASKS_PER_NODE): TasksPerNodeString(l.Counts()).
func (l Layout) TasksPerNode() string { return TasksPerNodeString(l.Counts()) }

// NodeOf returns the index in Nodes of the node running task (its
// SLURM_NODEID) and the task's SLURM_LOCALID there, or -1, -1 for a task
// the layout does not have.
func (l Layout) NodeOf(task int) (node, local int) {
	for i, t := range l.Tasks {
		if j, ok := slices.BinarySearch(t, task); ok {
			return i, j
		}
	}
	return -1, -1
}

// TaskSpec is what the layout needs once the step's nodes are known
// (slurm_step_layout_req_t).
type TaskSpec struct {
	Tasks int
	// CPUsPerTask divides each node's CPUs into task slots; 0 means 1.
	CPUsPerTask int
	// TasksPerNode caps a node's task slots at TasksPerNode×CPUsPerTask
	// (slurmctld passes --ntasks-per-node in plane_size; Slurm compares
	// slots with CPUs there, and Drover keeps that). 0: no cap. Not used
	// by the plane distribution.
	TasksPerNode int
	Dist         Distribution
	// Arbitrary lists the node of each task for ArbitraryDist.
	Arbitrary []string
}

// Distribute lays ts.Tasks out over nodes, in their order, as
// slurm_step_layout_create does: block (the default), cyclic (any
// "cyclic:..." distribution), plane or arbitrary. The sbatch and salloc
// environments use it directly for SLURM_TASKS_PER_NODE over the job's
// CPUs. Node CPUs of 0 count as one task slot.
//
// Block hands each node one task per round while it has free slots and,
// once no node has, one per round to every node; the tasks then go to the
// nodes in order, a block per node (5,1,1,1 for 8 tasks over nodes of
// 5,1,1,1 CPUs). With ",Pack" it gives every node one task, then fills the
// nodes in order, then spreads what is left. Cyclic deals tasks round robin
// to nodes with free slots, oversubscribing evenly once all are full.
// Plane gives every node one task, then up to PlaneSize-1 more per node and
// PlaneSize per node in later rounds, and numbers the tasks in blocks of
// PlaneSize round robin. Arbitrary puts each task on its listed node.
func Distribute(nodes []NodeAvail, ts TaskSpec) (Layout, error) {
	if len(nodes) == 0 || ts.Tasks < 0 {
		return Layout{}, ctldError(slurmerr.Unspecified)
	}
	if !ts.Dist.valid() {
		return Layout{}, ctldError(CodeBadDist)
	}
	cpt := max(ts.CPUsPerTask, 1)
	cpus := make([]int, len(nodes))
	for i, n := range nodes {
		if n.CPUs < 0 {
			return Layout{}, ctldError(slurmerr.Unspecified)
		}
		cpus[i] = n.CPUs / cpt
		if cpus[i] == 0 {
			cpus[i] = 1
		}
		if ts.TasksPerNode > 0 && ts.Dist.Kind != PlaneDist && cpus[i] > ts.TasksPerNode*cpt {
			cpus[i] = ts.TasksPerNode * cpt
		}
	}
	var tids [][]int
	switch ts.Dist.Kind {
	case CyclicDist:
		tids = layoutCyclic(cpus, ts.Tasks)
	case ArbitraryDist:
		var err error
		if tids, err = layoutArbitrary(nodes, ts.Tasks, ts.Arbitrary); err != nil {
			return Layout{}, err
		}
	case PlaneDist:
		tids = layoutPlane(cpus, ts.Tasks, ts.Dist.PlaneSize)
	default:
		tids = layoutBlock(cpus, ts.Tasks, ts.Dist.Pack == Pack)
	}
	l := Layout{Nodes: make([]string, len(nodes)), Tasks: tids, Dist: ts.Dist}
	for i, n := range nodes {
		l.Nodes[i] = n.Name
	}
	return l, nil
}

// numberInBlocks gives each node counts[i] consecutive task ids, in node
// order.
func numberInBlocks(counts []int) [][]int {
	tids := make([][]int, len(counts))
	id := 0
	for i, c := range counts {
		tids[i] = make([]int, c)
		for j := range c {
			tids[i][j] = id
			id++
		}
	}
	return tids
}

// layoutBlock is _task_layout_block.
func layoutBlock(cpus []int, tasks int, pack bool) [][]int {
	counts := make([]int, len(cpus))
	placed := 0
	if pack {
		for i := 0; i < len(cpus) && placed < tasks; i++ {
			if counts[i] < cpus[i] {
				counts[i]++
				placed++
			}
		}
		for i := 0; i < len(cpus) && placed < tasks; i++ {
			for counts[i] < cpus[i] && placed < tasks {
				counts[i]++
				placed++
			}
		}
		for placed < tasks {
			for i := 0; i < len(cpus) && placed < tasks; i++ {
				counts[i]++
				placed++
			}
		}
		return numberInBlocks(counts)
	}
	// A cyclic pass decides how many tasks each node gets, so that
	// heterogeneous nodes fill evenly; the ids then go out in blocks.
	over := false
	for j := 0; placed < tasks; j++ {
		room := false
		for i := 0; i < len(cpus) && placed < tasks; i++ {
			if j < cpus[i] || over {
				counts[i]++
				placed++
				if j+1 < cpus[i] {
					room = true
				}
			}
		}
		if !room {
			over = true
		}
	}
	return numberInBlocks(counts)
}

// layoutCyclic is _task_layout_cyclic.
func layoutCyclic(cpus []int, tasks int) [][]int {
	tids := make([][]int, len(cpus))
	for i := range tids {
		tids[i] = []int{}
	}
	total := 0
	for _, c := range cpus {
		total += c
	}
	over, maxOver := false, 0
	if total < tasks {
		over = true
		maxOver = (tasks - total + len(cpus) - 1) / len(cpus)
	}
	id := 0
	for j := 0; id < tasks; j++ {
		room := false
		for i := 0; i < len(cpus) && id < tasks; i++ {
			if j < cpus[i] || (over && j < cpus[i]+maxOver) {
				tids[i] = append(tids[i], id)
				id++
				if j+1 < cpus[i] {
					room = true
				}
			}
		}
		if !room {
			over = true
		}
	}
	return tids
}

// layoutPlane is _task_layout_plane. Its first round gives every node one
// task before the plane blocks, and a plane size of 1 therefore
// oversubscribes from the second round on, as in Slurm.
func layoutPlane(cpus []int, tasks, plane int) [][]int {
	counts := make([]int, len(cpus))
	placed := 0
	over := false
	for j := 0; placed < tasks; j++ {
		room := false
		if j == 0 {
			for i := 0; i < len(cpus) && placed < tasks; i++ {
				placed++
				counts[i]++
			}
		}
		for i := 0; i < len(cpus) && placed < tasks; i++ {
			start := 0
			if j == 0 {
				start = 1
			}
			for k := start; k < plane && placed < tasks; k++ {
				// Nothing changes for this node once it is full and
				// not oversubscribing, so the rest of the block is
				// skipped (Slurm spins through it).
				if cpus[i]-counts[i] == 0 && !over {
					break
				}
				placed++
				counts[i]++
				if cpus[i]-(counts[i]+1) >= 0 {
					room = true
				}
			}
		}
		if !room {
			over = true
		}
	}
	tids := make([][]int, len(cpus))
	for i, c := range counts {
		tids[i] = make([]int, 0, c)
	}
	id := 0
	for id < tasks {
		for i := 0; i < len(cpus) && id < tasks; i++ {
			for k := 0; k < plane && len(tids[i]) < counts[i] && id < tasks; k++ {
				tids[i] = append(tids[i], id)
				id++
			}
		}
	}
	return tids
}

// layoutArbitrary is _task_layout_hostfile: task t runs on list[t].
func layoutArbitrary(nodes []NodeAvail, tasks int, list []string) ([][]int, error) {
	if len(list) != tasks {
		// "Asked for %u tasks have %d in the nodelist" (slurmctld's log).
		return nil, ctldError(slurmerr.Unspecified)
	}
	tids := make([][]int, len(nodes))
	placed := 0
	for i, n := range nodes {
		tids[i] = []int{}
		for t, name := range list {
			if name == n.Name {
				tids[i] = append(tids[i], t)
				placed++
			}
		}
	}
	if placed != tasks {
		// "Asked for %u tasks but placed %d. Check your nodelist".
		return nil, ctldError(slurmerr.Unspecified)
	}
	return tids, nil
}
