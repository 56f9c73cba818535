package job

import "testing"

func TestTRES(t *testing.T) {
	j := &Job{Req: Request{MinNodes: 2, NumTasks: 4, MemPerNode: 2000, GPUsPerNode: 2}}
	if got := j.ReqTRES(); got != (TRES{CPUs: 4, MemMB: 4000, Nodes: 2, GPUs: 4}) {
		t.Errorf("requested: %+v", got)
	}
	if got := j.ReqTRES().String(); got != "cpu=4,mem=4000M,node=2,billing=4,gres/gpu=4" {
		t.Errorf("string: %s", got)
	}
	j = &Job{Req: Request{CPUsPerTask: 8, MemPerCPU: 1500}}
	if got := j.ReqTRES(); got != (TRES{CPUs: 8, MemMB: 12000, Nodes: 1}) {
		t.Errorf("per CPU: %+v", got)
	}
	for in, want := range map[string]TRES{
		"cpu=32,mem=64000M,node=4,billing=32,gres/gpu=16": {CPUs: 32, MemMB: 64000, Nodes: 4, GPUs: 16},
		"cpu=2,mem=1G,node=1,gres/gpu:a100=2,energy=5":    {CPUs: 2, MemMB: 1024, Nodes: 1},
		"mem=2T":          {MemMB: 2 << 20},
		"mem=1024K,cpu=1": {CPUs: 1, MemMB: 1},
		"":                {},
	} {
		got, err := ParseTRES(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"cpu", "cpu=x", "mem=5Q", "node=-1", "=3", "gres/gpu=1.5"} {
		if _, err := ParseTRES(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseTRES(f *testing.F) {
	f.Add("cpu=32,mem=64000M,node=4,billing=32,gres/gpu=16")
	f.Add("mem=1.5G,cpu=1")
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTRES(s)
		if err != nil {
			return
		}
		// What Slurm's format writes back reads back the same.
		again, err := ParseTRES(tr.String())
		if err != nil || again != tr {
			t.Fatalf("%q -> %+v -> %q -> %+v %v", s, tr, tr.String(), again, err)
		}
	})
}

// A pending job's node count is what slurmctld shows before it runs:
// -n 20 on 8-CPU nodes is 3 nodes (as Slurm 22.05 shows it in squeue).
func TestExpectedNodes(t *testing.T) {
	for name, tc := range map[string]struct {
		req     Request
		planned []string
		maxCPUs uint32
		want    uint32
	}{
		"tasks over CPUs":             {Request{NumTasks: 20}, nil, 8, 3},
		"fits one node":               {Request{NumTasks: 8}, nil, 8, 1},
		"cpus per task":               {Request{NumTasks: 10, CPUsPerTask: 3}, nil, 8, 5},
		"cpus per task above a node":  {Request{NumTasks: 2, CPUsPerTask: 16}, nil, 8, 2},
		"tasks per node":              {Request{NumTasks: 9, TasksPerNode: 4}, nil, 8, 2},
		"never below the nodes asked": {Request{NumTasks: 2, MinNodes: 4}, nil, 8, 4},
		"named nodes":                 {Request{NumTasks: 1, NodeList: []string{"a", "b"}}, nil, 8, 2},
		"the plan wins":               {Request{NumTasks: 20}, []string{"a", "b", "c", "d"}, 8, 4},
		"no node known":               {Request{NumTasks: 20}, nil, 0, 1},
	} {
		j := &Job{State: Pending, Req: tc.req, SchedNodes: tc.planned}
		if got := j.ExpectedNodes(tc.maxCPUs); got != tc.want {
			t.Errorf("%s: %d nodes, want %d", name, got, tc.want)
		}
	}
	running := &Job{State: Running, Req: Request{NumTasks: 20}, Alloc: &Allocation{Nodes: []NodeAlloc{{Node: "a"}, {Node: "b"}}}}
	if got := running.ExpectedNodes(8); got != 2 {
		t.Errorf("running job: %d nodes, want the 2 it holds", got)
	}
}
