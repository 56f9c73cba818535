package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSnakemake runs a small workflow with Debian's Snakemake and its
// built-in Slurm executor (`snakemake --slurm`), a real client as it
// is: it submits each rule with sbatch, runs it inside the job with
// srun, and follows the jobs with sacct. Every rule's job must be seen
// through sacct and the workflow must finish.
func TestSnakemake(t *testing.T) {
	t.Parallel()
	snakemake, err := exec.LookPath("snakemake")
	if err != nil {
		t.Skip("snakemake is not installed (Debian's snakemake package)")
	}
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2})
	wf := filepath.Join(c.WorkDir, "wf")
	must(t, os.MkdirAll(wf, 0o755))
	must(t, os.WriteFile(filepath.Join(wf, "Snakefile"), []byte(`rule all:
    input: "c.txt"

rule a:
    output: "a.txt"
    shell: "echo a > {output}"

rule b:
    output: "b.txt"
    shell: "echo b > {output}"

rule c:
    input: "a.txt", "b.txt"
    output: "c.txt"
    shell: "cat {input} > {output}"
`), 0o644))
	cmd := exec.Command(snakemake, "--slurm", "--jobs", "2", "--default-resources", "slurm_account=root", "slurm_partition=batch",
		"--latency-wait", "10", "--max-status-checks-per-second", "10", "--verbose",
		"--directory", wf, "--snakefile", filepath.Join(wf, "Snakefile"))
	cmd.Dir = wf
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, "PATH="+c.shimPath+":"+os.Getenv("PATH"), "USER=root", "HOME="+wf)
	done := make(chan Result, 1)
	go func() { done <- runCmd(t, cmd) }()
	var r Result
	select {
	case r = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("snakemake did not finish in 5 minutes")
	}
	if r.Code != 0 {
		t.Fatalf("snakemake: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := c.ReadFile(filepath.Join(wf, "c.txt")); got != "a\nb\n" {
		t.Errorf("c.txt: %q", got)
	}
	// Three rules, three jobs, each seen through sacct.
	out := c.MustRun("", "sacct", "-X", "-n", "-P", "-o", "State", "-S", "now-1hour")
	if n := strings.Count(out, "COMPLETED"); n != 3 || strings.TrimSpace(strings.ReplaceAll(out, "COMPLETED", "")) != "" {
		t.Errorf("sacct after the workflow:\n%s", out)
	}
	// The executor followed its jobs through sacct, never falling back
	// to scontrol (which it does when sacct fails).
	log := r.Stdout + r.Stderr
	if !strings.Contains(log, "The sacct output is:") || strings.Contains(log, "The scontrol output is:") {
		t.Errorf("snakemake did not follow its jobs through sacct:\n%s", log)
	}
}
