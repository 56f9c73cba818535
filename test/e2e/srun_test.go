package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSrunInBatch: srun inside an sbatch job runs one task per slot the job
// asked for, on the job's nodes, each with its own SLURM_PROCID, LOCALID
// and NODEID; a step with -N/-n of its own and a cyclic one follow Slurm's
// layouts; steps are numbered 0, 1, 2.
func TestSrunInBatch(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	_, out := c.RunJob("steps", "-N2", "-n4", "--wrap", strings.Join([]string{
		`srun -l sh -c 'echo $SLURM_STEP_ID $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURMD_NODENAME $SLURM_NTASKS $SLURM_STEP_TASKS_PER_NODE'`,
		`srun -N2 -n3 -l sh -c 'echo $SLURM_PROCID $SLURMD_NODENAME'`,
		`srun -n4 -m cyclic -l sh -c 'echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_DISTRIBUTION'`,
	}, "\n"))
	got := lines(out)
	slices.Sort(got)
	// The job holds 3 CPUs of n1 and 1 of n2, as Slurm allocates -N2 -n4
	// (the salloc capture shows SLURM_JOB_CPUS_PER_NODE=3,1).
	want := []string{
		"0: 0 0 0 0 n1 4 3,1", "0: 0 n1", "0: 0 n1 cyclic",
		"1: 0 1 1 0 n1 4 3,1", "1: 1 n1", "1: 1 n2 cyclic",
		"2: 0 2 2 0 n1 4 3,1", "2: 2 n2", "2: 2 n1 cyclic",
		"3: 0 3 0 1 n2 4 3,1", "3: 3 n1 cyclic",
	}
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps' output:\n%s\nwant (sorted):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSrunAlone: srun outside a job gets an allocation, runs the step in
// it, and releases it; the job is COMPLETED. A task's failure is reported
// as srun reports it, and srun exits with the highest exit code; a task
// killed by a signal gives 128 + the signal; a missing command is
// slurmstepd's execve error and exit code 2.
func TestSrunAlone(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	r := c.Run("", "srun", "-N2", "-n2", "-l", "-J", "probe", "printenv", "SLURM_PROCID")
	if r.Code != 0 || r.Stdout != "0: 0\n1: 1\n" && r.Stdout != "1: 1\n0: 0\n" {
		t.Fatalf("srun -N2 -n2: exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	out := c.MustRun("", "squeue", "-h", "-t", "all", "-o", "%j %T %D")
	if !strings.Contains(out, "probe COMPLETED 2") {
		t.Errorf("the allocation after srun:\n%s", out)
	}

	r = c.Run("", "srun", "-n3", `sh`, `-c`, `exit $((SLURM_PROCID + 1))`)
	if r.Code != 3 || !strings.Contains(r.Stderr, "srun: error: n1: tasks 0-2: Exited with exit code") && !strings.Contains(r.Stderr, "task 2: Exited with exit code 3") {
		t.Errorf("failing tasks: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = c.Run("", "srun", "-n1", "sh", "-c", "kill -KILL $$")
	if r.Code != 137 || r.Stderr != "srun: error: n1: task 0: Killed\n" {
		t.Errorf("killed task: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = c.Run("", "srun", "-n1", "drover-no-such-command")
	if r.Code != 2 || r.Stderr != "slurmstepd: error: execve(): drover-no-such-command: No such file or directory\n"+
		"srun: error: n1: task 0: Exited with exit code 2\n" {
		t.Errorf("missing command: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// Standard input reaches task 0 only.
	r = c.Run("hello\n", "srun", "-n2", "-l", "cat")
	if r.Code != 0 || r.Stdout != "0: hello\n" {
		t.Errorf("stdin: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("hello\n", "srun", "-n2", "-l", "-i", "all", "cat")
	if got := lines(r.Stdout); r.Code != 0 || len(got) != 2 || !slices.Contains(got, "0: hello") || !slices.Contains(got, "1: hello") {
		t.Errorf("stdin to all: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	// --cpu-bind=cores gives each task its own CPU of the step's, and the
	// tasks see how many the step holds on their node.
	r = c.Run("", "srun", "-N1", "-n2", "-l", "--cpu-bind=cores", "sh", "-c", `echo $SLURM_CPUS_ON_NODE; grep Cpus_allowed_list /proc/self/status`)
	got := lines(r.Stdout)
	slices.Sort(got)
	if want := "0: 2|0: Cpus_allowed_list:\t0|1: 2|1: Cpus_allowed_list:\t1"; r.Code != 0 || strings.Join(got, "|") != want {
		t.Errorf("--cpu-bind=cores: exit %d, stdout %q, want %q; stderr %q", r.Code, strings.Join(got, "|"), want, r.Stderr)
	}
	r = c.Run("", "srun", "--pty", "true")
	if r.Code != 1 || r.Stderr != "srun: error: --pty is not supported by Drover\n" {
		t.Errorf("--pty: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestSrunStreams: a task's output reaches srun as it is produced, not at
// its end; a signal given to srun reaches the tasks; squeue -s and
// scontrol show the running step; scancel JOB.STEP ends it.
func TestSrunStreams(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	cmd := exec.Command(filepath.Join(c.shimPath, "srun"), "-N2", "-n2", "-l", "-J", "stream", "sh", "-c",
		`trap 'echo got USR1; exit 7' USR1; echo started; while :; do sleep 0.1; done`)
	cmd.Dir = c.WorkDir
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	lineCh := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lineCh <- sc.Text()
		}
		close(lineCh)
	}()
	read := func(n int) []string {
		var got []string
		for len(got) < n {
			select {
			case l, ok := <-lineCh:
				if !ok {
					t.Fatalf("srun's output ended after %q; stderr %q", got, stderr.String())
				}
				got = append(got, l)
			case <-time.After(20 * time.Second):
				t.Fatalf("waited for output; got %q; stderr %q", got, stderr.String())
			}
		}
		slices.Sort(got)
		return got
	}
	if got := read(2); strings.Join(got, "|") != "0: started|1: started" {
		t.Fatalf("first output %q", got)
	}
	steps := c.MustRun("", "squeue", "-s", "-h", "-o", "%i %j %N %A")
	if !strings.Contains(steps, ".0 stream n[1-2] 2") {
		t.Errorf("squeue -s:\n%s", steps)
	}
	id := strings.Fields(steps)[0]
	show := c.MustRun("", "scontrol", "show", "step", id)
	if !strings.Contains(show, "StepId="+id+" ") || !strings.Contains(show, "Nodes=2 CPUs=2 Tasks=2 Name=stream") {
		t.Errorf("scontrol show step:\n%s", show)
	}
	must(t, cmd.Process.Signal(syscall.SIGUSR1))
	if got := read(2); strings.Join(got, "|") != "0: got USR1|1: got USR1" {
		t.Fatalf("after SIGUSR1: %q", got)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Errorf("srun exit: %v; stderr %q", err, stderr.String())
	}

	// scancel JOB.STEP ends a step of a batch job; the job goes on.
	job := c.Submit("", "-N1", "-n1", "-o", "cancel.out", "--wrap", "srun -J victim sleep 300; echo step rc=$?; sleep 1")
	var stepID string
	deadline := time.Now().Add(20 * time.Second)
	for stepID == "" && time.Now().Before(deadline) {
		for _, l := range lines(c.MustRun("", "squeue", "-s", "-h", "-o", "%i %j")) {
			if f := strings.Fields(l); len(f) == 2 && f[1] == "victim" {
				stepID = f[0]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if stepID == "" {
		t.Fatalf("the step never showed")
	}
	c.MustRun("", "scancel", stepID)
	c.WaitState(job, "COMPLETED", 30*time.Second)
	if out := c.ReadFile("cancel.out"); !strings.Contains(out, "step rc=") || strings.Contains(out, "step rc=0") {
		t.Errorf("batch output after scancel of its step:\n%s", out)
	}
}

// TestSrunConcurrentSteps: two steps of one job at once, each with the
// CPUs it needs (--exact, and --exclusive, which implies it inside a
// job); a third that needs CPUs the others hold waits for them, as
// srun's "step creation temporarily disabled" says.
func TestSrunConcurrentSteps(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	_, out := c.RunJob("concurrent", "-N1", "-n2", "-c2", "--wrap", strings.Join([]string{
		`srun --exclusive -n1 -c2 sh -c 'touch a.up; sleep 5; echo a' &`,
		`while [ ! -e a.up ]; do sleep 0.05; done`,
		`srun --exact -n1 -c2 sh -c 'touch b.up; sleep 5; echo b' 2>b.err &`,
		`while [ ! -e b.up ]; do sleep 0.05; done`,
		`srun --exact -n1 -c2 echo c 2>c.err`,
		`wait`,
	}, "\n"))
	got := lines(out)
	if len(got) != 3 || got[2] != "c" {
		t.Errorf("concurrent steps' output %q, want a and b, then c", got)
	}
	if e := c.ReadFile("c.err"); !strings.Contains(e, "step creation temporarily disabled, retrying (Requested nodes are busy)") {
		t.Errorf("the third step's messages: %q", e)
	}
	if e := c.ReadFile("b.err"); e != "" {
		t.Errorf("the second step waited (the --exclusive one took every CPU?): %q", e)
	}
}

// TestSrunGPUBind: --gpus-per-task gives each task GPUs of its own (Slurm
// implies per_task:N), --gpu-bind=map_gpu and none divide the step's GPUs
// as asked, verbose prints slurmstepd's line, a mapped GPU outside the
// step falls back to its first with slurmstepd's error, and a malformed
// value is refused before anything is allocated.
func TestSrunGPUBind(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4, GPUs: 4})
	show := `echo $CUDA_VISIBLE_DEVICES`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-N1", "-n2", "--gpus-per-task=2"}, "0: 0,1|1: 2,3"},
		{[]string{"-N2", "-n4", "--gpus-per-task=1"}, "0: 0|1: 1|2: 2|3: 0"},
		{[]string{"-N1", "-n2", "--gpus-per-task=2", "--gpu-bind=none"}, "0: 0,1,2,3|1: 0,1,2,3"},
		{[]string{"-N1", "-n3", "--gres=gpu:4", "--gpu-bind=map_gpu:3,1"}, "0: 3|1: 1|2: 3"},
		{[]string{"-N1", "-n2", "--gres=gpu:4", "--gpu-bind=mask_gpu:0x6"}, "0: 1,2|1: 1,2"},
		{[]string{"-N1", "-n2", "--gres=gpu:4", "--gpu-bind=single:1"}, "0: 0|1: 1"},
	} {
		args := append(append([]string{}, tc.args...), "-l", "sh", "-c", show)
		r := c.Run("", "srun", args...)
		got := lines(r.Stdout)
		slices.Sort(got)
		if r.Code != 0 || strings.Join(got, "|") != tc.want {
			t.Errorf("srun %s: exit %d, tasks see %q, want %q; stderr %q", strings.Join(tc.args, " "), r.Code, strings.Join(got, "|"), tc.want, r.Stderr)
		}
	}
	r := c.Run("", "srun", "-N1", "-n1", "--gres=gpu:2", "--gpu-bind=verbose,map_gpu:1", "-l", "sh", "-c", show)
	if r.Code != 0 || r.Stdout != "0: 1\n" || r.Stderr != "0: gpu-bind: usable_gres=0x2; bit_alloc=0x3; local_inx=0; global_list=1; local_list=1\n" {
		t.Errorf("verbose map_gpu: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "srun", "-N1", "-n1", "--gres=gpu:2", "--gpu-bind=map_gpu:3", "sh", "-c", show)
	if r.Code != 0 || r.Stdout != "0\n" || !strings.HasPrefix(r.Stderr, "slurmstepd: error: Bind request gres/gpu:map_gpu:3 does not specify any devices within the allocation for task 0.") {
		t.Errorf("map_gpu outside the step: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "srun", "--gpu-bind=nearest", "true")
	if r.Code == 0 || r.Stderr != "srun: error: Invalid --gpu-bind argument: nearest\n" {
		t.Errorf("--gpu-bind=nearest: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if out := c.MustRun("", "squeue", "-h", "-t", "all", "-o", "%i"); strings.Count(out, "\n") != 8 {
		t.Errorf("jobs after the runs (the refused one must not be among them):\n%s", out)
	}
}

// TestSrunOutputChoice: -o and -e with a task id show that task's stream
// only, none shows nothing, and a file pattern takes stderr too when -e
// is not given, as srun does.
func TestSrunOutputChoice(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	both := `echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2`
	r := c.Run("", "srun", "-n4", "-o", "2", "-l", "sh", "-c", both)
	if r.Code != 0 || r.Stdout != "2: out 2\n" || r.Stderr != "2: err 2\n" {
		t.Errorf("-o 2: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "srun", "-n3", "-o", "none", "-e", "1", "sh", "-c", both)
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "err 1\n" {
		t.Errorf("-o none -e 1: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "srun", "-n2", "-o", "both-%t.txt", "sh", "-c", both)
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Errorf("-o file: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for i := range 2 {
		if got, want := c.ReadFile("both-"+string(rune('0'+i))+".txt"), "out N\nerr N\n"; got != strings.ReplaceAll(want, "N", string(rune('0'+i))) {
			t.Errorf("both-%d.txt = %q", i, got)
		}
	}
}

// TestSrunStepMemory: inside a job of 1000 MB, a step asking for more is
// refused with Slurm's error, one asking for less sees its request in
// SLURM_MEM_PER_NODE and, where the node has the memory cgroup, is held
// to it; a step without --mem has the job's.
func TestSrunStepMemory(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	limit := `echo $SLURM_MEM_PER_NODE; p=$(grep ':memory:' /proc/self/cgroup | cut -d: -f3); ` +
		`if [ -n "$p" ] && [ -r /sys/fs/cgroup/memory$p/memory.limit_in_bytes ]; then cat /sys/fs/cgroup/memory$p/memory.limit_in_bytes; else echo unlimited; fi`
	script := strings.Join([]string{
		`srun -n1 --mem=2000 true; echo "rc=$?"`,
		`srun -n1 --mem=300 sh -c '` + limit + `'`,
		`srun -n1 sh -c '` + limit + `'`,
	}, "\n")
	id := c.Submit("", "-n1", "--mem=1000", "-o", "mem.out", "-e", "mem.err", "--wrap", script)
	c.WaitState(id, "COMPLETED", 20*time.Second)
	out, errOut := lines(c.ReadFile("mem.out")), c.ReadFile("mem.err")
	if len(out) != 5 || out[0] != "rc=1" || out[1] != "300" || out[3] != "1000" {
		t.Fatalf("job output %q, stderr %q", out, errOut)
	}
	if out[2] != "unlimited" && (out[2] != "314572800" || out[4] != "1048576000") {
		t.Errorf("step memory limits %s and %s, want 300 MB and the job's 1000 MB", out[2], out[4])
	}
	if want := "srun: error: Unable to create step for job " + id + ": Memory required by task is not available\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
