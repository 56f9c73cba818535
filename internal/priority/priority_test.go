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
