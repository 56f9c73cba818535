package e2e

import (
	"testing"
	"time"
)

// TestDependencies runs a chain of jobs through sbatch --dependency: a job
// waits (reason Dependency) until the job it names has ended as it asks,
// one whose condition can no longer hold says DependencyNeverSatisfied,
// squeue %E shows what is left as Slurm does, and a malformed dependency
// is refused at submission.
func TestDependencies(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	first := c.Submit("", "-o", "first.out", "--wrap", "sleep 2; echo first")
	second := c.Submit("", "-d", "afterok:"+first, "-o", "second.out", "--wrap", "cat first.out; echo second")
	never := c.Submit("", "--dependency=afternotok:"+first, "--wrap", "true")
	got := c.MustRun("", "squeue", "-h", "-j", second, "-o", "%i %T %r %E")
	if got != second+" PENDING Dependency afterok:"+first+"(unfulfilled)\n" {
		t.Errorf("squeue of the waiting job: %q", got)
	}
	c.WaitState(second, "COMPLETED", 30*time.Second)
	if out := c.ReadFile("second.out"); out != "first\nsecond\n" {
		t.Errorf("second job's output %q: it did not run after the first", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c.MustRun("", "squeue", "-h", "-j", never, "-o", "%T %r %E")
		if got == "PENDING DependencyNeverSatisfied afternotok:"+first+"(failed)\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("afternotok of a completed job: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := c.Run("", "sbatch", "-d", "foo:"+first, "--wrap", "true")
	if r.Code != 1 || r.Stderr != "sbatch: error: Batch job submission failed: Job dependency problem\n" {
		t.Errorf("dependency of an unknown type: %+v", r)
	}
	// As slurmctld 22.05: a job it does not know satisfies the condition.
	unknown := c.Submit("", "-d", "afterok:999999", "--wrap", "true")
	c.WaitState(unknown, "COMPLETED", 20*time.Second)
}
