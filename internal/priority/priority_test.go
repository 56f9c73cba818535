package priority

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/job"
)

func TestFactors(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	cl := Cluster{Nodes: 10, CPUs: 80, MaxPartitionFactor: 4}
	c := &Config{WeightAge: 1000, WeightJobSize: 2000, WeightPartition: 400, MaxAge: 2 * time.Hour}
	j := &job.Job{SubmitTime: now.Add(-time.Hour), Req: job.Request{MinNodes: 5, NumTasks: 40, Nice: 50}}
	f := c.FactorsOf(j, 2, cl, now)
	want := Factors{Age: 0.5, JobSize: (0.5 + 0.5) / 2, Partition: 0.5, Nice: 50}
	if diff := cmp.Diff(want, f, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("factors (-want +got):\n%s", diff)
	}
	// 500 + 1000 + 200 - 50
	if p := c.Priority(f); p != 1650 {
		t.Errorf("priority %d, want 1650", p)
	}
	// Age stops at PriorityMaxAge; a future BeginTime accrues none yet.
	j.SubmitTime = now.Add(-10 * time.Hour)
	if f := c.FactorsOf(j, 2, cl, now); f.Age != 1 {
		t.Errorf("age factor past max age %v", f.Age)
	}
	j.Req.BeginTime = now.Add(time.Hour)
	if f := c.FactorsOf(j, 2, cl, now); f.Age != 0 {
		t.Errorf("age factor before BeginTime %v", f.Age)
	}
	// PriorityFavorSmall turns the size factor round.
	c.FavorSmall = true
	if f := c.FactorsOf(&job.Job{SubmitTime: now, Req: job.Request{}}, 0, cl, now); f.JobSize != 1-(0.1+1.0/80)/2 {
		t.Errorf("favor small: %v", f.JobSize)
	}
	// No weights (slurmctld's defaults): every job has priority 1; a large
	// nice cannot go below it.
	zero := &Config{}
	if p := zero.Priority(zero.FactorsOf(j, 2, cl, now)); p != 1 {
		t.Errorf("no weights: %d", p)
	}
	if p := c.Priority(Factors{Nice: 10000}); p != 1 {
		t.Errorf("nice below zero: %d", p)
	}
}

// TRES factors and their weights, with the figures real Slurm 22.05's
// sprio printed for the same jobs on 4 nodes of 8 CPUs, 16000 MB and 4
// GPUs (PriorityWeightJobSize=500, PriorityWeightTRES=CPU=2000,Mem=3000,
// GRES/gpu=4000,Node=1500).
func TestTRESFactors(t *testing.T) {
	w, err := ParseWeightTRES("CPU=2000,Mem=3000,GRES/gpu=4000,Node=1500")
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{WeightJobSize: 500, WeightTRES: w}
	cl := Cluster{Nodes: 4, CPUs: 32}
	part := job.TRES{CPUs: 32, MemMB: 64000, Nodes: 4, GPUs: 16}
	now := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		req      job.Request
		priority uint32
		tres     []float64
	}{
		// sbatch -N2 -n4 --mem=2000 --gres=gpu:2: cpu=250,mem=188,node=750,gres/gpu=1000
		{job.Request{MinNodes: 2, NumTasks: 4, MemPerNode: 2000, GPUsPerNode: 2}, 2343, []float64{250, 187.5, 750, 1000}},
		// sbatch -n1 (DefMemPerCPU=1000): cpu=62,mem=47,node=375
		{job.Request{NumTasks: 1, MemPerCPU: 1000}, 554, []float64{62.5, 46.875, 375, 0}},
		// sbatch -N3 -n3 --gres=gpu:4 --mem=8000: cpu=188,mem=1125,node=1125,gres/gpu=3000
		{job.Request{MinNodes: 3, NumTasks: 3, MemPerNode: 8000, GPUsPerNode: 4}, 5648, []float64{187.5, 1125, 1125, 3000}},
	} {
		j := &job.Job{SubmitTime: now, Req: tc.req}
		f := c.FactorsOf(j, 0, cl, now)
		f.TRES = c.TRESFactors(j.ReqTRES(), part)
		if got := c.Weigh(f).TRES; !cmp.Equal(got, tc.tres, cmpopts.EquateApprox(0, 1e-9)) {
			t.Errorf("%+v: weighted TRES %v, want %v", tc.req, got, tc.tres)
		}
		if p := c.Priority(f); p != tc.priority {
			t.Errorf("%+v: priority %d, want %d", tc.req, p, tc.priority)
		}
	}
	for _, bad := range []string{"CPU", "cpu=x", "energy=5", "cpu=1,CPU=2", "mem=-3"} {
		if _, err := ParseWeightTRES(bad); err == nil {
			t.Errorf("PriorityWeightTRES=%s accepted", bad)
		}
	}
}

func FuzzParseWeightTRES(f *testing.F) {
	f.Add("CPU=2000,Mem=3000,GRES/gpu=4000,Node=1500")
	f.Add("billing=1.5,cpu=0")
	f.Fuzz(func(t *testing.T, v string) {
		w, err := ParseWeightTRES(v)
		if err != nil {
			return
		}
		// Weights come back in Slurm's TRES order, each name once, each
		// weight a number.
		rank := map[string]int{"cpu": 1, "mem": 2, "node": 4, "billing": 5, "gres/gpu": 1000}
		for i, x := range w {
			if rank[x.Name] == 0 || x.Weight < 0 || x.Weight != x.Weight {
				t.Fatalf("%q: weight %+v", v, x)
			}
			if i > 0 && rank[w[i-1].Name] >= rank[x.Name] {
				t.Fatalf("%q: out of order %v", v, w)
			}
		}
	})
}
