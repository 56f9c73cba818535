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
