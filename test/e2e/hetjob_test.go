package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHetJob: a heterogeneous job as Slurm 22.05 runs one (each line below
// was checked against it): components from "#SBATCH hetjob", consecutive
// ids shown ID+OFFSET, the batch script told of every component, srun on
// one component, on several in one rank space, or one command line part
// each, and accounting records per component.
func TestHetJob(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 3, CPUs: 4})
	script := "#!/bin/bash\n" +
		"#SBATCH -J lead -N1 -n2 --mem-per-cpu=100\n" +
		"#SBATCH hetjob\n" +
		"#SBATCH -J other -N2 -n3 --mem-per-cpu=150\n" +
		"echo $SLURM_JOB_ID $SLURM_HET_SIZE $SLURM_PACK_SIZE $SLURM_JOB_ID_HET_GROUP_1 $SLURM_JOB_NUM_NODES_HET_GROUP_1 $SLURM_NTASKS_HET_GROUP_1 $SLURM_MEM_PER_CPU_HET_GROUP_1 $SLURM_JOB_NAME_PACK_GROUP_1 > env.txt\n" +
		"squeue -h -j $SLURM_JOB_ID -o '%i %j %D %t' > squeue.txt\n" +
		"srun hostname | wc -l > srun0.txt\n" +
		"srun --het-group=1 printenv SLURM_JOB_ID SLURM_NTASKS SLURM_JOB_NUM_NODES | sort | uniq -c | awk '{print $1, $2}' > srun1.txt\n" +
		"srun --het-group=0,1 bash -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_ID $SLURM_JOB_NUM_NODES' | sort -n > srun01.txt\n" +
		"srun -n1 bash -c 'echo A $SLURM_PROCID $SLURM_NTASKS' : -n2 bash -c 'echo B $SLURM_PROCID $SLURM_NTASKS' | sort > srunab.txt\n" +
		"srun hostname : date : id > bad.txt 2>&1; echo rc=$? >> bad.txt\n"
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "het.sh"), []byte(script), 0o755))
	id := strings.TrimSpace(c.MustRun("", "sbatch", "--parsable", "het.sh"))
	n, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("sbatch --parsable: %q", id)
	}
	next := strconv.Itoa(n + 1)
	c.WaitState(id, "COMPLETED", 60*time.Second)
	c.WaitState(next, "COMPLETED", 10*time.Second)

	for file, want := range map[string]string{
		"env.txt":    id + " 2 2 " + next + " 2 3 150 other\n",
		"squeue.txt": id + "+0 lead 1 R\n" + id + "+1 other 2 R\n",
		"srun0.txt":  "2\n",
		// The leader's id, the component's size.
		"srun1.txt": "3 " + id + "\n3 2\n3 3\n",
		// One step id in both components, ranks 0-4 over 3 nodes.
		"srun01.txt": "0 5 2 3\n1 5 2 3\n2 5 2 3\n3 5 2 3\n4 5 2 3\n",
		"srunab.txt": "A 0 3\nB 1 3\nB 2 3\n",
		"bad.txt":    "srun: error: Attempt to run a job step with het group value of 2, but the job allocation has maximum value of 1\nrc=1\n",
	} {
		if got := c.ReadFile(file); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", file, got, want)
		}
	}
	// Accounting keeps each component, under its leader's id.
	want := id + "+0|lead|COMPLETED\n" + id + "+1|other|COMPLETED\n"
	c.WaitRun(want, 20*time.Second, "sacct", "-n", "-X", "-P", "-j", id, "-o", "JobID,JobName,State")
	if got := c.MustRun("", "sacct", "-n", "-X", "-P", "-j", id+"+1", "-o", "JobID,JobIDRaw"); got != id+"+1|"+next+"\n" {
		t.Errorf("sacct -j %s+1: %q", id, got)
	}
	if got := c.MustRun("", "sacct", "-n", "-P", "-j", next, "-o", "JobID"); !strings.HasPrefix(got, id+"+1\n"+id+"+1.1\n") {
		t.Errorf("sacct -j %s (the second component's own id):\n%s", next, got)
	}
}

// TestHetJobControl: a pending heterogeneous job is cancelled whole or
// not at all, requeued through its leader only; scancel of the leader
// ends every component. Messages and exit codes are Slurm 22.05's.
func TestHetJobControl(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	id := strings.TrimSpace(c.MustRun("", "sbatch", "--parsable", "-H", "--wrap", "sleep 300", ":", "-n2"))
	n, _ := strconv.Atoi(id)
	next := strconv.Itoa(n + 1)
	for _, target := range []string{id + "+1", next} {
		r := c.Run("", "scancel", target)
		if r.Code != 60 || r.Stderr != "scancel: error: Kill job error on job id "+target+": Operation not permitted on individual component of heterogeneous job\n" {
			t.Errorf("scancel %s: exit %d, %q", target, r.Code, r.Stderr)
		}
	}
	if r := c.Run("", "scontrol", "requeue", next); r.Code != 1 || r.Stderr != "Job not heterogeneous job leader for job "+next+"\n" {
		t.Errorf("scontrol requeue %s: exit %d, %q", next, r.Code, r.Stderr)
	}
	c.MustRun("", "scontrol", "release", id)
	c.WaitRun(id+"+0 R\n"+id+"+1 R\n", 20*time.Second, "squeue", "-h", "-j", id, "-o", "%i %t")
	// A running component may go alone.
	c.MustRun("", "scancel", id+"+1")
	c.WaitRun(id+"+0 R\n", 20*time.Second, "squeue", "-h", "-j", id, "-o", "%i %t")
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 20*time.Second)
	if st := c.State(next); st != "CANCELLED" {
		t.Errorf("second component: %s", st)
	}
}

// TestHetAllocation: salloc A : B makes a heterogeneous allocation; its
// command sees every component as salloc writes them (SLURM_JOB_ID the
// leader's, the rest per component), srun spans the components, and the
// allocation's end ends them all.
func TestHetAllocation(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 3, CPUs: 4})
	cmd := "echo $SLURM_JOB_ID $SLURM_HET_SIZE $SLURM_JOB_ID_HET_GROUP_1 $SLURM_JOB_NUM_NODES_HET_GROUP_1 ${SLURM_NNODES:-unset}; " +
		"srun --het-group=0,1 printenv SLURM_PROCID | sort -n | tr '\\n' ' '"
	r := c.Run("", "salloc", "-N1", "-n1", ":", "-N2", "-n2", "bash", "-c", cmd)
	id, _ := granted(t, r.Stderr)
	n, _ := strconv.Atoi(id)
	next := strconv.Itoa(n + 1)
	if want := id + " 2 " + next + " 2 unset\n0 1 2 "; r.Code != 0 || r.Stdout != want {
		t.Fatalf("salloc: exit %d, stdout %q, want %q\nstderr:\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
	c.WaitState(id, "COMPLETED", 20*time.Second)
	c.WaitState(next, "COMPLETED", 20*time.Second)

	// srun A : B outside a job makes its own heterogeneous allocation.
	r = c.Run("", "srun", "-n1", "bash", "-c", "echo A $SLURM_PROCID $SLURM_NTASKS", ":", "-n2", "bash", "-c", "echo B $SLURM_PROCID $SLURM_NTASKS")
	got := lines(r.Stdout)
	slices.Sort(got)
	if r.Code != 0 || strings.Join(got, ";") != "A 0 3;B 1 3;B 2 3" {
		t.Errorf("srun A : B: exit %d, %q\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if q := c.MustRun("", "squeue", "-h"); q != "" {
		t.Errorf("srun's allocation still queued:\n%s", q)
	}
}
