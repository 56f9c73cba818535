package e2e

import (
	"strings"
	"testing"
)

// TestJobSubmitPlugin runs the example job_submit plugin
// (examples/job-submit-limits) as slurm.conf's JobSubmitPlugins: it gives
// jobs without a time limit one hour and says so, refuses more than 8
// GPUs per node with its message, and refuses a user's time limit above
// two hours in scontrol update.
func TestJobSubmitPlugin(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, GPUs: 16, Extra: "JobSubmitPlugins=job-submit-limits\n"})

	r := c.Run("", "sbatch", "--parsable", "--hold", "--wrap", "true")
	if r.Code != 0 || r.Stderr != "sbatch: no time limit given: the job gets 60 minutes\n" {
		t.Fatalf("sbatch without -t: %+v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", id))["TimeLimit"]; got != "01:00:00" {
		t.Errorf("TimeLimit %q, want 01:00:00", got)
	}
	r = c.Run("", "sbatch", "--parsable", "-t", "5", "--hold", "--wrap", "true")
	if r.Code != 0 || r.Stderr != "" {
		t.Errorf("sbatch -t 5: %+v", r)
	}

	r = c.Run("", "sbatch", "-t", "5", "--gres=gpu:12", "--wrap", "true")
	want := "sbatch: error: at most 8 GPUs per node (asked for 12)\nsbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n"
	if r.Code != 1 || r.Stderr != want {
		t.Errorf("sbatch --gres=gpu:12: exit %d, stderr %q, want %q", r.Code, r.Stderr, want)
	}
	r = c.Run("", "srun", "-t", "5", "--gres=gpu:12", "true")
	want = "srun: error: at most 8 GPUs per node (asked for 12)\nsrun: error: Unable to allocate resources: Invalid generic resource (gres) specification\n"
	if r.Code != 1 || r.Stderr != want {
		t.Errorf("srun --gres=gpu:12: exit %d, stderr %q, want %q", r.Code, r.Stderr, want)
	}
	r = c.Run("", "srun", "printenv", "SLURM_JOB_ID")
	if r.Code != 0 || r.Stderr != "srun: no time limit given: the job gets 60 minutes\n" {
		t.Errorf("srun without -t: %+v", r)
	}

	// Updates go through the plugin's Modify: as root (the tests' user)
	// a long limit passes.
	c.MustRun("", "scontrol", "update", "JobId="+id, "TimeLimit=300")
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", id))["TimeLimit"]; got != "05:00:00" {
		t.Errorf("TimeLimit after update %q, want 05:00:00", got)
	}
	c.MustRun("", "scancel", id)
}
