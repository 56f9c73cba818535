package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func envOf(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestBatchOutputAndEnvironment(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	script := "#!/bin/bash\n#SBATCH -J envjob\n#SBATCH -n 2\necho hello from $SLURMD_NODENAME\necho oops >&2\nenv | sort\n"
	out := c.MustRun(script, "sbatch")
	m := regexp.MustCompile(`^Submitted batch job (\d+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("sbatch printed %q", out)
	}
	id := m[1]
	c.WaitState(id, "COMPLETED", 20*time.Second)
	text := c.ReadFile("slurm-" + id + ".out")
	if !strings.HasPrefix(text, "hello from n1\noops\n") {
		t.Errorf("output starts %q", text[:min(len(text), 40)])
	}
	env := envOf(text)
	want := map[string]string{
		"SLURM_JOB_ID": id, "SLURM_JOBID": id, "SLURM_JOB_NAME": "envjob",
		"SLURM_JOB_NODELIST": "n1", "SLURM_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1",
		"SLURM_NTASKS": "2", "SLURM_NPROCS": "2", "SLURM_TASKS_PER_NODE": "2", "SLURM_CPUS_ON_NODE": "2",
		"SLURM_JOB_CPUS_PER_NODE": "2", "SLURM_JOB_PARTITION": "batch", "SLURM_SUBMIT_DIR": c.WorkDir,
		"SLURM_JOB_USER": "root", "SLURM_JOB_UID": "0", "SLURM_JOB_GID": "0", "SLURM_CLUSTER_NAME": c.Name,
		"SLURMD_NODENAME": "n1", "SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_GTIDS": "0",
		"SLURM_TOPOLOGY_ADDR": "n1", "SLURM_PRIO_PROCESS": "0", "ENVIRONMENT": "BATCH",
		"SLURM_MEM_PER_CPU": "100", "SLURM_STEP_ID": "-5",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	if env["SLURM_TASK_PID"] == "" || env["SLURM_SUBMIT_HOST"] == "" {
		t.Errorf("SLURM_TASK_PID=%q SLURM_SUBMIT_HOST=%q, want both set", env["SLURM_TASK_PID"], env["SLURM_SUBMIT_HOST"])
	}
	// The submitted environment reaches the job (--export=ALL); the
	// propagated limits and umask are applied, not passed on.
	if env["PATH"] == "" {
		t.Errorf("PATH not exported to the job")
	}
	for k := range env {
		if strings.HasPrefix(k, "SLURM_RLIMIT_") || k == "SLURM_UMASK" {
			t.Errorf("%s reached the job's environment", k)
		}
	}
}

func TestLimitsPropagate(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	sh := exec.Command("sh", "-c", "ulimit -S -n 77; ulimit -S -c 0; umask 027; exec sbatch --parsable -o lim.out --wrap 'ulimit -n; ulimit -c; umask'")
	sh.Dir = c.WorkDir
	sh.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, "PATH="+c.shimPath+":"+os.Getenv("PATH"))
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("sbatch: %v", err)
	}
	id := strings.TrimSpace(string(out))
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("lim.out"); got != "77\n0\n0027\n" {
		t.Errorf("limits in the job: %q, want nofile 77, core 0, umask 0027", got)
	}
}

func TestScriptFromFileIsCopiedAtSubmit(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	path := filepath.Join(c.WorkDir, "job.sh")
	must(t, os.WriteFile(path, []byte("#!/bin/sh\nsleep 1\necho from-file \"$@\"\n"), 0o644))
	id := c.Submit("", "-o", "file-%j.txt", path, "a1", "b2")
	// Callers delete the script as soon as sbatch returns.
	must(t, os.Remove(path))
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("file-" + id + ".txt"); got != "from-file a1 b2\n" {
		t.Errorf("output %q", got)
	}
}

func TestArrayJob(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	id := c.Submit("", "--array=0-3%2", "--wrap", "echo task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID count $SLURM_ARRAY_TASK_COUNT")
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < 4; i++ {
		path := filepath.Join(c.WorkDir, fmt.Sprintf("slurm-%s_%d.out", id, i))
		for {
			data, err := os.ReadFile(path)
			if err == nil && len(data) > 0 {
				want := fmt.Sprintf("task %d of %s count 4\n", i, id)
				if string(data) != want {
					t.Errorf("%s: %q, want %q", path, data, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never written", path)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestCancelRunningJob(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "--wrap", "trap 'echo got TERM; exit 143' TERM; sleep 300 & wait")
	c.WaitState(id, "RUNNING", 20*time.Second)
	c.MustRun("", "scancel", id)
	j := c.WaitState(id, "CANCELLED", 20*time.Second)
	if j.ExitCode.Value.Signal.Value.ID.Value.Number.Value != 0 && len(j.ExitCode.Value.Status) == 0 {
		t.Errorf("no exit status recorded")
	}
	// Cancelling a finished job prints nothing and succeeds, as Slurm does.
	r := c.Run("", "scancel", id)
	if r.Code != 0 || r.Stdout != "" {
		t.Errorf("scancel of a finished job: %+v", r)
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	failed := c.Submit("", "--wrap", "exit 3")
	killed := c.Submit("", "--wrap", "kill -9 $$")
	c.WaitState(failed, "FAILED", 20*time.Second)
	c.WaitState(killed, "FAILED", 20*time.Second)
	for id, want := range map[string]string{failed: "ExitCode=3:0", killed: "ExitCode=0:9"} {
		out := c.MustRun("", "scontrol", "show", "job", id)
		if !strings.Contains(out, want) {
			t.Errorf("scontrol show job %s lacks %s:\n%s", id, want, out)
		}
	}
}

func TestSharingAndExclusive(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	a := c.Submit("", "-n", "2", "--wrap", "sleep 300")
	b := c.Submit("", "-n", "2", "--wrap", "sleep 300")
	c.WaitState(a, "RUNNING", 20*time.Second)
	c.WaitState(b, "RUNNING", 20*time.Second)
	// A third job does not fit next to them; an exclusive one waits too.
	d := c.Submit("", "-n", "1", "--wrap", "sleep 1")
	e := c.Submit("", "--exclusive", "--wrap", "echo alone")
	time.Sleep(1500 * time.Millisecond)
	if s := c.State(d); s != "PENDING" {
		t.Errorf("job %s: %s, want PENDING", d, s)
	}
	out := c.MustRun("", "squeue", "-h", "-o", "%i %t %r", "-j", e)
	if out != e+" PD Priority\n" && out != e+" PD Resources\n" {
		t.Errorf("squeue for the exclusive job: %q", out)
	}
	c.MustRun("", "scancel", a, b)
	c.WaitState(d, "COMPLETED", 20*time.Second)
	j := c.WaitState(e, "COMPLETED", 20*time.Second)
	if j.Cpus.Value.Number.Value != 4 {
		t.Errorf("exclusive job got %d CPUs, want the whole node (4)", j.Cpus.Value.Number.Value)
	}
}

func TestGPUAllocation(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, GPUs: 8, NVML: nvmlAvailable()})
	a := c.Submit("", "--gres=gpu:2", "-o", "a.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS $SLURM_GPUS_ON_NODE; sleep 2")
	b := c.Submit("", "--gpus=3", "-o", "b.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_GPUS_ON_NODE")
	c.WaitState(a, "COMPLETED", 20*time.Second)
	c.WaitState(b, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("a.out"); got != "0,1 0,1 2\n" {
		t.Errorf("job a: %q", got)
	}
	// With NVML's topology the three GPUs are an NVLinked quad's, not
	// the lowest free ones.
	wantB := "2,3,4 3\n"
	if nvmlAvailable() {
		wantB = "4,5,6 3\n"
	}
	if got := c.ReadFile("b.out"); got != wantB {
		t.Errorf("job b: %q, want %q", got, wantB)
	}
	// More GPUs per node than any node has is refused at submit.
	r := c.Run("", "sbatch", "--gres=gpu:9", "--wrap", "true")
	if r.Code != 1 || r.Stderr != "sbatch: error: Batch job submission failed: Requested node configuration is not available\n" {
		t.Errorf("sbatch --gres=gpu:9: %+v", r)
	}
}

func nvmlAvailable() bool {
	_, err := os.Stat(filepath.Join(binDir, "drover-gres-nvml"))
	return err == nil
}

func TestDrainNode(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	c.MustRun("", "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=maintenance")
	out := c.MustRun("", "sinfo", "-h", "-N", "-o", "%N %t")
	if !strings.Contains(out, "n1 drain") {
		t.Errorf("sinfo after drain:\n%s", out)
	}
	id := c.Submit("", "-w", "n1", "--wrap", "true")
	time.Sleep(1500 * time.Millisecond)
	if s := c.State(id); s != "PENDING" {
		t.Errorf("job on drained node: %s", s)
	}
	other := c.Submit("", "--wrap", "hostname")
	j := c.WaitState(other, "COMPLETED", 20*time.Second)
	if j.Nodes.Value != "n2" {
		t.Errorf("job ran on %s, want n2", j.Nodes.Value)
	}
	c.MustRun("", "scontrol", "update", "NodeName=n1", "State=RESUME")
	c.WaitState(id, "COMPLETED", 20*time.Second)
}

func TestTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a time limit takes a minute")
	}
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "-t", "1", "--wrap", "sleep 600")
	c.WaitState(id, "RUNNING", 20*time.Second)
	j := c.WaitState(id, "TIMEOUT", 90*time.Second)
	if j.StateReason.Value != "TimeLimit" {
		t.Errorf("reason %q", j.StateReason.Value)
	}
}

// TestJobRunsAsItsUser submits for another user (sbatch --uid, allowed to
// root) and checks the script's identity and the output file's owner.
func TestJobRunsAsItsUser(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	// The test's folders must be reachable by nobody.
	for _, d := range []string{filepath.Dir(c.Dir), c.Dir, c.WorkDir} {
		must(t, os.Chmod(d, 0o755))
	}
	dir := filepath.Join(c.WorkDir, "nobody")
	must(t, os.MkdirAll(dir, 0o777))
	must(t, os.Chmod(dir, 0o777))
	id := c.Submit("", "--uid=nobody", "-D", dir, "-o", "out-%u.txt", "--wrap", "id -u; id -g; touch made-by-job")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	out := filepath.Join(dir, "out-nobody.txt")
	st, err := os.Stat(out)
	must(t, err)
	uid := st.Sys().(*syscall.Stat_t).Uid
	if got := strings.TrimSpace(c.ReadFile(out)); !strings.HasPrefix(got, fmt.Sprint(uid)+"\n") || uid == 0 {
		t.Errorf("job printed %q, output owned by uid %d; want the job to run as nobody and own its output", got, uid)
	}
	if st, err := os.Stat(filepath.Join(dir, "made-by-job")); err != nil || st.Sys().(*syscall.Stat_t).Uid != uid {
		t.Errorf("file made by the job: %v", err)
	}
	// The user cannot write where only root may: the job fails instead of
	// root creating the file for it.
	locked := filepath.Join(c.WorkDir, "locked")
	must(t, os.MkdirAll(locked, 0o755))
	bad := c.Submit("", "--uid=nobody", "-D", dir, "-o", filepath.Join(locked, "x.out"), "--wrap", "true")
	c.WaitState(bad, "FAILED", 20*time.Second)
	if _, err := os.Stat(filepath.Join(locked, "x.out")); err == nil {
		t.Errorf("output created in a folder the user cannot write to")
	}
}

// TestCancelRacesLaunch cancels jobs the instant they are RUNNING, which is
// committed before the launch reaches the node: none of them may keep
// running.
func TestCancelRacesLaunch(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	var ids []string
	for i := 0; i < 5; i++ {
		id := c.Submit("", "--wrap", "sleep 300")
		ids = append(ids, id)
	}
	for _, id := range ids {
		c.WaitState(id, "RUNNING", 20*time.Second)
		c.MustRun("", "scancel", id)
	}
	for _, id := range ids {
		c.WaitState(id, "CANCELLED", 20*time.Second)
	}
}

// TestWarningSignal: --signal=B:USR1@58 reaches the batch script about
// two seconds into a one-minute job, as a checkpointing script expects;
// without B: srun's tasks get it instead (here srun's own allocation),
// and a script that saves its state and exits on it ends COMPLETED.
func TestWarningSignal(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	trap := `trap 'echo checkpoint on USR1; exit 0' USR1; echo started; sleep 50 & wait`
	_, out := c.RunJob("warnb", "-t", "1", "--signal=B:USR1@58", "--wrap", trap)
	if out != "started\ncheckpoint on USR1\n" {
		t.Errorf("batch script with --signal=B:USR1@58 wrote %q", out)
	}
	r := c.Run("", "srun", "-t", "1", "--signal=USR1@58", "bash", "-c", trap)
	if r.Code != 0 || r.Stdout != "started\ncheckpoint on USR1\n" {
		t.Errorf("srun --signal=USR1@58: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRequeueFromSignalHandler: a job that requeues itself from its
// --signal handler (the checkpoint pattern of submitit and Lightning) runs
// again, and its output holds no error from the requeue.
func TestRequeueFromSignalHandler(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	script := `#!/bin/bash
#SBATCH --open-mode=append
run=${SLURM_RESTART_COUNT:-0}
echo "run $run"
if [ "$run" = 0 ]; then
	trap 'echo "checkpoint"; scontrol requeue $SLURM_JOB_ID; exit 0' USR1
	sleep 50 & wait
fi
echo "done $run"
`
	id := c.Submit(script, "-t", "1", "--signal=B:USR1@58", "-o", "rq.out", "--requeue")
	c.WaitOutput("rq.out", "run 0\ncheckpoint\nrun 1\ndone 1\n", 40*time.Second)
	j := c.WaitState(id, "COMPLETED", 20*time.Second)
	if j.RestartCnt.Value != 1 {
		t.Errorf("restarts %d, want 1", j.RestartCnt.Value)
	}
}
