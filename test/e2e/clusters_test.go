package e2e

import (
	"strings"
	"testing"
)

// TestClustersOption: -M/--clusters on sbatch, srun and salloc, with the
// outputs and messages of Slurm 22.05's commands: the local cluster (in
// any case, in a list, or "all") works, and sbatch names it; names the
// accounting does not know are reported, and a list of nothing but those
// fails.
func TestClustersOption(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	r := c.Run("", "sbatch", "-M", c.Name, "-H", "--wrap", "true")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Submitted batch job ") || !strings.HasSuffix(r.Stdout, " on cluster "+c.Name+"\n") {
		t.Errorf("sbatch -M %s: %+v", c.Name, r)
	}
	r = c.Run("", "sbatch", "--parsable", "--clusters=all", "-H", "--wrap", "true")
	if id, cl, ok := strings.Cut(strings.TrimSpace(r.Stdout), ";"); r.Code != 0 || !ok || cl != c.Name || id == "" {
		t.Errorf("sbatch --parsable --clusters=all: %+v", r)
	}
	r = c.Run("", "sbatch", "-M", "other,"+strings.ToUpper(c.Name), "-H", "--wrap", "true")
	if r.Code != 0 || r.Stderr != "sbatch: error: No cluster 'other' known by database.\n" || !strings.HasSuffix(r.Stdout, " on cluster "+c.Name+"\n") {
		t.Errorf("sbatch -M other,%s: %+v", strings.ToUpper(c.Name), r)
	}
	unknown := "sbatch: error: No cluster 'nosuch' known by database.\n" +
		"sbatch: error: 'nosuch' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters.\n"
	if r = c.Run("", "sbatch", "-M", "nosuch", "--wrap", "true"); r.Code != 1 || r.Stderr != unknown {
		t.Errorf("sbatch -M nosuch: %+v", r)
	}
	if r = c.Run("", "srun", "-M", c.Name, "echo", "hi"); r.Code != 0 || r.Stdout != "hi\n" {
		t.Errorf("srun -M %s: %+v", c.Name, r)
	}
	if r = c.Run("", "srun", "-M", "nosuch", "true"); r.Code != 1 || r.Stderr != strings.ReplaceAll(unknown, "sbatch:", "srun:") {
		t.Errorf("srun -M nosuch: %+v", r)
	}
	if r = c.Run("", "salloc", "-M", "nosuch", "true"); r.Code != 1 || r.Stderr != strings.ReplaceAll(unknown, "sbatch:", "salloc:") {
		t.Errorf("salloc -M nosuch: %+v", r)
	}
	c.MustRun("", "scancel", "-u", "root")
}
