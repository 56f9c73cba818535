package layout

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/slurmerr"
)

// TestPlace checks layouts worked out by hand from Slurm's code; the
// comment on each says where the example or rule comes from.
func TestPlace(t *testing.T) {
	tests := map[string]struct {
		avail []NodeAvail
		req   Request
		// want is layoutOf's form: "n1:0,1 n2:2".
		want     string
		wantDist string
		wantCPT  int
		wantWarn []string
	}{
		// srun(1) -m block: "an allocation of three nodes each with two
		// cpus. A four-task block distribution request will distribute
		// those tasks to the nodes with tasks one and two on the first
		// node, task three on the second node, and task four on the third
		// node."
		"man block": {
			avail: alloc(2, 2, 2), req: req().n(4).m("block").Build(),
			want: "n1:0,1 n2:2 n3:3", wantDist: "block", wantCPT: 1,
		},
		// srun(1) -m cyclic: "tasks one and four on the first node, task
		// two on the second node, and task three on the third node."
		"man cyclic": {
			avail: alloc(2, 2, 2), req: req().n(4).m("cyclic").Build(),
			want: "n1:0,3 n2:1 n3:2", wantDist: "cyclic", wantCPT: 1,
		},
		// srun(1): block is the default when tasks exceed nodes.
		"default block": {
			avail: alloc(2, 2, 2), req: req().n(4).Build(),
			want: "n1:0,1 n2:2 n3:3", wantDist: "block", wantCPT: 1,
		},
		// srun(1): cyclic is the default when tasks do not exceed the
		// nodes (launch.c picks it against the step's minimum node count).
		"default cyclic": {
			avail: alloc(5, 1, 1, 1), req: req().n(2).Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
		},
		"pack flag alone keeps the default base": {
			avail: alloc(2, 2, 2), req: req().n(3).m("nopack").Build(),
			want: "n1:0 n2:1 n3:2", wantDist: "cyclic,nopack", wantCPT: 1,
		},
		// dist_plane.html figure 2: srun -N 4-4 -n 21 -m plane=4.
		"plane=4 on four nodes": {
			avail: alloc(8, 8, 8, 8), req: req().N(4, 4).n(21).m("plane=4").Build(),
			want:     "n1:0,1,2,3,16,17,18,19 n2:4,5,6,7,20 n3:8,9,10,11 n4:12,13,14,15",
			wantDist: "plane", wantCPT: 1,
		},
		// dist_plane.html figure 3: srun -N 4-4 -n 21 -m plane=2.
		"plane=2 on four nodes": {
			avail: alloc(8, 8, 8, 8), req: req().N(4, 4).n(21).m("plane=2").Build(),
			want:     "n1:0,1,8,9,16,17 n2:2,3,10,11,18,19 n3:4,5,12,13,20 n4:6,7,14,15",
			wantDist: "plane", wantCPT: 1,
		},
		// dist_plane.html figure 1: srun -N 1-1 -n 21 -m plane=4, all on
		// the one node.
		"plane=4 on one node": {
			avail: alloc(32), req: req().N(1, 1).n(21).m("plane=4").Build(),
			want:     "n1:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
			wantDist: "plane", wantCPT: 1,
		},
		// _task_layout_plane gives every node one task in its first round,
		// so plane=1 oversubscribes the small node from the second round.
		"plane=1 oversubscribes": {
			avail: alloc(4, 1), req: req().n(4).m("plane=1").Build(),
			want: "n1:0,2 n2:1,3", wantDist: "plane", wantCPT: 1,
		},
		// srun(1) -m arbitrary: tasks "laid out on the nodes in the order
		// of the file" (SLURM_HOSTFILE n1,n2,n1,n3); -n and -N follow it.
		"arbitrary": {
			avail: alloc(2, 2, 2), req: req().arb("n1", "n2", "n1", "n3").Build(),
			want: "n1:0,2 n2:1 n3:3", wantDist: "arbitrary", wantCPT: 1,
		},
		"arbitrary ignores -n and -N from the environment": {
			avail: alloc(2, 2, 2, 2), req: req().N(4).envN().n(8).envn().arb("n2", "n2").Build(),
			want: "n2:0,1", wantDist: "arbitrary", wantCPT: 1,
		},
		// srun(1) EXAMPLES: in an allocation of four nodes "srun -lN2 -r2
		// hostname" runs on the third and fourth, "srun -lN2" on the first
		// two.
		"man relative 2": {
			avail: alloc(1, 1, 1, 1), req: req().N(2).rel(2).Build(),
			want: "n3:0 n4:1", wantDist: "cyclic", wantCPT: 1,
		},
		"man no relative": {
			avail: alloc(1, 1, 1, 1), req: req().N(2).Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
		},
		"relative 0": {
			avail: alloc(1, 1, 1, 1), req: req().N(2).rel(0).Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
		},
		// Without -n a step runs one task per node (_opt_verify), over
		// the whole allocation without -N (_set_min_node_count).
		"no -n, no -N": {
			avail: alloc(5, 1, 1, 1), req: req().Build(),
			want: "n1:0 n2:1 n3:2 n4:3", wantDist: "cyclic", wantCPT: 1,
		},
		"-N without -n": {
			avail: alloc(8, 8, 8), req: req().N(2).Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
		},
		"--ntasks-per-node without -n": {
			avail: alloc(8, 8), req: req().N(2).perNode(3).Build(),
			want: "n1:0,1,2 n2:3,4,5", wantDist: "block", wantCPT: 1,
		},
		// -c without -n: as many tasks as -c slices of the job's CPUs, at
		// least one per node (_set_ntasks). The job's 5,1,1,1 CPUs cannot
		// hold 4 tasks of 2 CPUs, so slurmctld's cpus_per_task is 0 and
		// the layout counts one CPU per task.
		"-c without -n on uneven nodes": {
			avail: alloc(5, 1, 1, 1), req: req().c(2).Build(),
			want: "n1:0 n2:1 n3:2 n4:3", wantDist: "cyclic", wantCPT: 0,
		},
		"-c divides the slots": {
			avail: alloc(8, 8), req: req().n(4).c(4).Build(),
			want: "n1:0,1 n2:2,3", wantDist: "block", wantCPT: 4,
		},
		// _pick_step_nodes_cpus: nodes with at least the average CPUs
		// first, then the smaller ones that make up the count.
		"uneven job, two nodes": {
			avail: alloc(5, 1, 1, 1), req: req().N(2).n(4).Build(),
			want: "n1:0,1,2 n2:3", wantDist: "block", wantCPT: 1,
		},
		"average first": {
			avail: alloc(1, 1, 6, 1), req: req().N(2).n(6).Build(),
			want: "n1:0 n3:1,2,3,4,5", wantDist: "block", wantCPT: 1,
		},
		// -N larger than -n is lowered to -n with a warning (_opt_verify).
		"-N above -n": {
			avail: alloc(8, 8, 8, 8), req: req().N(3).n(2).Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
			wantWarn: []string{"Warning: can't run 2 processes on 3 nodes, setting nnodes to 2"},
		},
		"-N from the environment above -n": {
			avail: alloc(8, 8, 8, 8), req: req().N(4).envN().n(1).Build(),
			want: "n1:0", wantDist: "cyclic", wantCPT: 1,
			wantWarn: []string{"Warning: can't run 1 processes on 4 nodes, setting nnodes to 1"},
		},
		"--ntasks-per-node not matching -n/-N is dropped": {
			avail: alloc(8, 8), req: req().N(2).n(4).perNode(3).Build(),
			want: "n1:0,1 n2:2,3", wantDist: "block", wantCPT: 1,
			wantWarn: []string{"Warning: can't honor --ntasks-per-node set to 3 which doesn't match the requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node."},
		},
		// --ntasks-per-node caps each node's slots; once all are taken
		// the block layout deals the rest round robin, past the 1-CPU node.
		"--ntasks-per-node caps the slots": {
			avail: alloc(8, 1), req: req().n(4).perNode(1).Build(),
			want: "n1:0,1 n2:2,3", wantDist: "block", wantCPT: 1,
		},
		// -w nodes count toward -N and the rest come from the allocation in
		// order.
		"-w": {
			avail: alloc(8, 8, 8, 8), req: req().w("n3").n(2).Build(),
			want: "n3:0,1", wantDist: "block", wantCPT: 1,
		},
		"-w with a larger -N": {
			avail: alloc(8, 8, 8, 8), req: req().w("n3").N(2).n(2).Build(),
			want: "n1:0 n3:1", wantDist: "cyclic", wantCPT: 1,
		},
		"-w beyond -N max": {
			avail: alloc(8, 8, 8, 8), req: req().w("n3", "n1", "n2").N(2).n(2).Build(),
			want: "n1:0 n3:1", wantDist: "cyclic", wantCPT: 1,
			wantWarn: []string{"error: Required nodelist includes more nodes than permitted by max-node count (3 > 2). Eliminating nodes from the nodelist."},
		},
		"-w beyond -n": {
			avail: alloc(8, 8, 8, 8), req: req().w("n4", "n2", "n3").n(2).Build(),
			want: "n2:0 n3:1", wantDist: "cyclic", wantCPT: 1,
			wantWarn: []string{"Warning: can't run 2 processes on 3 nodes, setting nnodes to 2"},
		},
		// -x becomes a node list of the first nodes left
		// (job_step_create_allocation).
		"-x": {
			avail: alloc(8, 8, 8, 8), req: req().x("n1").n(2).Build(),
			want: "n2:0 n3:1", wantDist: "cyclic", wantCPT: 1,
		},
		"-x with -w": {
			avail: alloc(8, 8, 8, 8), req: req().x("n2").w("n4").N(2).n(4).Build(),
			want: "n1:0,1 n4:2,3", wantDist: "block", wantCPT: 1,
		},
		// ",Pack" with -N from the environment: srun lowers the minimum
		// to 1 and slurmctld's homogeneous job fits the step on one node.
		"pack": {
			avail: alloc(8, 8, 8, 8), req: req().N(4).envN().n(4).m("block,pack").Build(),
			want: "n1:0,1,2,3", wantDist: "block,pack", wantCPT: 1,
		},
		"pack over nodes fills in order": {
			avail: alloc(3, 3, 3), req: req().N(3).n(7).m("block,pack").Build(),
			want: "n1:0,1,2 n2:3,4,5 n3:6", wantDist: "block,pack", wantCPT: 1,
		},
		"no pack spreads": {
			avail: alloc(3, 3, 3), req: req().N(3).n(7).m("block").Build(),
			want: "n1:0,1,2 n2:3,4 n3:5,6", wantDist: "block", wantCPT: 1,
		},
		"socket and core parts are kept": {
			avail: alloc(2, 2), req: req().n(4).m("cyclic:*:*").Build(),
			want: "n1:0,2 n2:1,3", wantDist: "cyclic:cyclic:cyclic", wantCPT: 1,
		},
		// -O: no CPU checks, block oversubscribes round robin.
		"overcommit": {
			avail: alloc(8, 8, 8, 8), req: req().n(33).O().Build(),
			want:     "n1:0,1,2,3,4,5,6,7,8 n2:9,10,11,12,13,14,15,16 n3:17,18,19,20,21,22,23,24 n4:25,26,27,28,29,30,31,32",
			wantDist: "block", wantCPT: 0,
		},
		// Another step holds n1: slurmctld takes idle nodes first.
		"idle nodes first": {
			avail: busy(alloc(4, 8, 8), 0, 4), req: req().n(2).exact().Build(),
			want: "n2:0 n3:1", wantDist: "cyclic", wantCPT: 1,
		},
		"--exact may share a busy node": {
			avail: busy(alloc(4, 8), 0, 4), req: req().N(2).n(2).exact().Build(),
			want: "n1:0 n2:1", wantDist: "cyclic", wantCPT: 1,
		},
		"whole nodes skip a busy node": {
			avail: busy(alloc(4, 8, 8), 0, 4), req: req().N(2).n(2).Build(),
			want: "n2:0 n3:1", wantDist: "cyclic", wantCPT: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			lay, err := Place(tc.avail, tc.req)
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			type result struct {
				Layout   string
				Dist     string
				CPT      int
				Warnings []string
			}
			want := result{tc.want, tc.wantDist, tc.wantCPT, tc.wantWarn}
			got := result{layoutOf(lay), lay.Dist.String(), lay.CPUsPerTask, lay.Warnings}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Place mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlaceErrors covers every refusal, with srun's wording and Slurm's
// error number where slurmctld refuses.
func TestPlaceErrors(t *testing.T) {
	tests := map[string]struct {
		avail []NodeAvail
		req   Request
		want  Error
	}{
		"negative -n": {
			avail: alloc(8), req: req().n(-1).Build(),
			want: Error{Lines: []string{`Invalid numeric value "-1" for --ntasks.`}},
		},
		"negative -c": {
			avail: alloc(8), req: req().c(-2).Build(),
			want: Error{Lines: []string{`Invalid numeric value "-2" for --cpus-per-task.`}},
		},
		"negative --ntasks-per-node": {
			avail: alloc(8), req: req().perNode(-1).Build(),
			want: Error{Lines: []string{`Invalid numeric value "-1" for --ntasks-per-node.`}},
		},
		"negative -r": {
			avail: alloc(8), req: req().rel(-3).Build(),
			want: Error{Lines: []string{`Invalid numeric value "-3" for --relative.`}},
		},
		"-N max below min": {
			avail: alloc(8, 8, 8), req: req().N(3, 2).Build(),
			want: Error{Lines: []string{"Maximum node count 2 is less than minimum node count 3"}},
		},
		"negative -N": {
			avail: alloc(8, 8, 8), req: req().N(-2).Build(),
			want: Error{Lines: []string{"invalid number of nodes (-N -2-0)"}},
		},
		"-r with -w and -x": {
			avail: alloc(8, 8), req: req().rel(1).w("n2").Build(),
			want: Error{Lines: []string{"-r,--relative not allowed with -w,--nodelist or -x,--exclude."}},
		},
		"-r with -x": {
			avail: alloc(8, 8), req: req().rel(0).x("n2").Build(),
			want: Error{Lines: []string{"-r,--relative not allowed with -w,--nodelist or -x,--exclude."}},
		},
		"-r past the allocation with -N": {
			avail: alloc(8, 8, 8, 8), req: req().N(2).rel(3).Build(),
			want: Error{Lines: []string{"--relative and --nodes option incompatible with count of allocated nodes (3+2>4)"}},
		},
		// Inside a batch job SLURM_JOB_NUM_NODES is -N: -r needs an
		// explicit -N.
		"-r past the allocation with SLURM_JOB_NUM_NODES": {
			avail: alloc(8, 8, 8, 8), req: req().N(4).envN().rel(1).Build(),
			want: Error{Lines: []string{"--relative and SLURM_JOB_NUM_NODES option incompatible with count of allocated nodes (1+4>4)"}},
		},
		"-x and -w name the same node": {
			avail: alloc(8, 8), req: req().x("n2").w("n2").Build(),
			want: Error{Lines: []string{"Requested node n2 is also in the excluded list.", "Job not submitted."}},
		},
		"-x everything": {
			avail: alloc(8, 8), req: req().x("n1", "n2").Build(),
			want: Error{Lines: []string{"Hostlist is empty!  Can't run job."}},
		},
		"-N beyond the allocation": {
			avail: alloc(8, 8, 8, 8), req: req().N(5).Build(),
			want: Error{Lines: []string{"Only allocated 4 nodes asked for 5"}},
		},
		"-N beyond what -x leaves": {
			avail: alloc(8, 8, 8, 8), req: req().N(4).x("n1").Build(),
			want: Error{Lines: []string{"Only allocated 3 nodes asked for 4", "Are required nodes explicitly excluded?"}},
		},
		"arbitrary list shorter than -n": {
			avail: alloc(8, 8), req: req().n(3).arb("n1", "n2").Build(),
			want: Error{Lines: []string{"You asked for 3 tasks but hostlist specified 2 nodes"}},
		},
		"arbitrary without a list": {
			avail: alloc(8, 8), req: req().arb().Build(),
			want: Error{Lines: []string{"invalid number of tasks (-n 0)"}},
		},
		"empty allocation": {
			avail: nil, req: req().Build(),
			want: Error{Lines: []string{"No nodes in allocation, can't run job"}},
		},
		"-w outside the allocation": {
			avail: alloc(8, 8, 8, 8), req: req().w("n9").Build(),
			want: Error{Code: slurmerr.RequestedNodeConfigUnavailable, Lines: []string{"Requested node configuration is not available"}},
		},
		// Homogeneous job: 33 CPUs need 5 of the 8-CPU nodes, 4 allowed.
		"more tasks than CPUs": {
			avail: alloc(8, 8, 8, 8), req: req().n(33).Build(),
			want: Error{Code: slurmerr.TooManyRequestedCPUs, Lines: []string{"More processors requested than permitted"}},
		},
		"more tasks than CPUs on one node": {
			avail: alloc(8, 8, 8, 8), req: req().N(1).n(9).Build(),
			want: Error{Code: slurmerr.TooManyRequestedCPUs, Lines: []string{"More processors requested than permitted"}},
		},
		// Uneven job: _pick_step_nodes_cpus finds no 4 nodes with 9 CPUs.
		"more tasks than CPUs on uneven nodes": {
			avail: alloc(5, 1, 1, 1), req: req().n(9).Build(),
			want: Error{Code: slurmerr.TooManyRequestedCPUs, Lines: []string{"More processors requested than permitted"}},
		},
		"-c times -n beyond the CPUs": {
			avail: alloc(8, 8), req: req().n(5).c(4).Build(),
			want: Error{Code: slurmerr.TooManyRequestedCPUs, Lines: []string{"More processors requested than permitted"}},
		},
		// The -w node is all the step may have and it is too small.
		"-w node too small": {
			avail: alloc(4, 2), req: req().w("n2").n(3).Build(),
			want: Error{Code: slurmerr.RequestedNodeConfigUnavailable, Lines: []string{"Requested node configuration is not available"}},
		},
		"-r at the end of the allocation": {
			avail: alloc(8, 8, 8, 8), req: req().N(1).n(1).rel(4).Build(),
			want: Error{Lines: []string{"--relative and --nodes option incompatible with count of allocated nodes (4+1>4)"}},
		},
		// Other steps hold what is missing: the step waits.
		"nodes busy": {
			avail: busy(alloc(0, 8), 0, 8), req: req().N(2).Build(),
			want: Error{Code: slurmerr.NodesBusy, Lines: []string{"Requested nodes are busy"}},
		},
		"whole node busy": {
			avail: busy(alloc(4, 8), 0, 4), req: req().N(2).n(2).Build(),
			want: Error{Code: slurmerr.NodesBusy, Lines: []string{"Requested nodes are busy"}},
		},
		"-w node busy": {
			avail: busy(alloc(0, 8), 0, 8), req: req().w("n1").Build(),
			want: Error{Code: slurmerr.NodesBusy, Lines: []string{"Requested nodes are busy"}},
		},
		"CPUs busy": {
			avail: busy(alloc(2, 2), 0, 6), req: req().N(2).n(6).exact().Build(),
			want: Error{Code: slurmerr.NodesBusy, Lines: []string{"Requested nodes are busy"}},
		},
		// --exact: each node must hold its tasks' CPUs (_pick_step_cores).
		"--exact node too small": {
			avail: alloc(8, 1), req: req().n(4).perNode(1).exact().Build(),
			want: Error{Code: slurmerr.TooManyRequestedCPUs, Lines: []string{"More processors requested than permitted"}},
		},
		"--exact CPUs held by another step": {
			avail: busy(alloc(8, 1), 1, 1), req: req().n(4).perNode(1).exact().Build(),
			want: Error{Code: slurmerr.NodesBusy, Lines: []string{"Requested nodes are busy"}},
		},
		"more tasks than MaxTasksPerNode": {
			avail: alloc(8, 8), req: req().n(1025).O().Build(),
			want: Error{Code: CodeBadTaskCount, Lines: []string{"Task count specification invalid"}},
		},
		"plane without a size": {
			avail: alloc(8), req: Request{Relative: -1, Dist: Distribution{Kind: PlaneDist, Set: true}},
			want: Error{Code: CodeBadDist, Lines: []string{"Task distribution specification invalid"}},
		},
		"unknown socket part": {
			avail: alloc(8), req: Request{Relative: -1, Dist: Distribution{Kind: BlockDist, Socket: "sideways", Set: true}},
			want: Error{Code: CodeBadDist, Lines: []string{"Task distribution specification invalid"}},
		},
		"repeated node": {
			avail: append(alloc(8), alloc(4)...), req: req().Build(),
			want: Error{Code: slurmerr.Unspecified, Lines: []string{`invalid allocation node "n1" (4 CPUs, 0 busy)`}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			lay, err := Place(tc.avail, tc.req)
			if err == nil {
				t.Fatalf("Place = %s, want error %v", layoutOf(lay), tc.want.Error())
			}
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Place error %T %v, want *Error", err, err)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("Place error mismatch (-want +got):\n%s", diff)
			}
			if tc.want.Code != 0 {
				if c := slurmerr.CodeOf(err); c != tc.want.Code {
					t.Errorf("slurmerr.CodeOf = %d, want %d", c, tc.want.Code)
				}
				if !errors.Is(err, slurmerr.Sentinel(tc.want.Code)) {
					t.Errorf("errors.Is(err, Sentinel(%d)) = false", tc.want.Code)
				}
			}
		})
	}
}

// TestLayoutAccessors checks NumTasks, Counts, TasksPerNode and NodeOf on
// the 22.05 capture's -N4 -n8 step.
func TestLayoutAccessors(t *testing.T) {
	lay, err := Place(alloc(5, 1, 1, 1), req().N(4).n(8).Build())
	if err != nil {
		t.Fatal(err)
	}
	type ids struct{ Node, Local int }
	var got []ids
	for task := range 9 {
		n, l := lay.NodeOf(task)
		got = append(got, ids{n, l})
	}
	want := []ids{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 0}, {2, 0}, {3, 0}, {-1, -1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeOf mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{5, 1, 1, 1}, lay.Counts()); diff != "" {
		t.Errorf("Counts mismatch (-want +got):\n%s", diff)
	}
	if lay.NumTasks() != 8 || lay.TasksPerNode() != "5,1(x3)" {
		t.Errorf("NumTasks, TasksPerNode = %d, %q; want 8, \"5,1(x3)\"", lay.NumTasks(), lay.TasksPerNode())
	}
}
