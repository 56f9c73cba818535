package env

import (
	"slices"
	"strings"
)

// The tests build a step's tasks from its tasks per node as Slurm numbers
// them; the node daemon gets its task ids from srun instead.

// nodeTasks returns the tasks of one node of a step: ids are the global
// task ids the node runs, in SLURM_LOCALID order (see layoutOf). The GPU,
// CPU and topology fields are left for the caller.
func nodeTasks(nodeIndex int, nodeName string, ids []int) []Task {
	out := make([]Task, len(ids))
	for i, id := range ids {
		out[i] = Task{ID: id, Local: i, NodeIndex: nodeIndex, NodeName: nodeName, NodeTasks: slices.Clone(ids)}
	}
	return out
}

// layoutOf returns the global task ids of each node, given the step's tasks
// per node and its distribution, as Slurm's step layout numbers them:
// with a cyclic first level ("cyclic", "cyclic:block", "cyclic,pack") task
// ids go round the nodes, skipping full ones; otherwise (block, plane,
// arbitrary, unset) each node takes consecutive ids. Negative counts are
// taken as 0.
func layoutOf(tasksPerNode []int, distribution string) [][]int {
	out := make([][]int, len(tasksPerNode))
	first, _, _ := cutAny(strings.ToLower(distribution), ":,")
	id := 0
	if first == "cyclic" {
		for more := true; more; {
			more = false
			for n, want := range tasksPerNode {
				if len(out[n]) < want {
					out[n] = append(out[n], id)
					id++
					more = true
				}
			}
		}
		return out
	}
	for n, want := range tasksPerNode {
		for range max(want, 0) {
			out[n] = append(out[n], id)
			id++
		}
	}
	return out
}
