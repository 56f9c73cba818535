package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// grantRE reads the messages salloc prints around a command: the queueing
// lines when the job had to wait, the grant, and the relinquishing.
var grantRE = regexp.MustCompile(`^(salloc: Pending job allocation (\d+)\n` +
	`salloc: job \d+ queued and waiting for resources\nsalloc: job \d+ has been allocated resources\n)?` +
	`salloc: Granted job allocation (\d+)\nsalloc: Nodes (\S+) are ready for job\n`)

// granted returns the job id and node list salloc reported, or fails.
func granted(t *testing.T, stderr string) (id, nodes string) {
	t.Helper()
	m := grantRE.FindStringSubmatch(stderr)
	if m == nil || m[2] != "" && m[2] != m[3] {
		t.Fatalf("salloc's messages:\n%s", stderr)
	}
	return m[3], m[4]
}

// TestSalloc: salloc runs its command on this host with the allocation's
// environment and releases the allocation with the command's status; srun
// inside the command runs in the allocation; scancel revokes the
// allocation under a running command, which goes on unless
// --kill-command asks to signal it.
func TestSalloc(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	host, _ := os.Hostname()

	r := c.Run("", "salloc", "-N2", "-n4", "env")
	id, nodes := granted(t, r.Stderr)
	if r.Code != 0 || nodes != "n[1-2]" || !strings.HasSuffix(r.Stderr, "salloc: Relinquishing job allocation "+id+"\n") {
		t.Fatalf("salloc -N2 -n4 env: exit %d\nstderr:\n%s", r.Code, r.Stderr)
	}
	env := map[string]string{}
	for _, l := range lines(r.Stdout) {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	// -N2 -n4 on 4-CPU nodes holds 3 CPUs of n1 and 1 of n2, as in the
	// 22.05 capture of the same command.
	for k, want := range map[string]string{
		"SLURM_JOB_ID": id, "SLURM_JOBID": id, "SLURM_JOB_NAME": "interactive", "SLURM_JOB_NODELIST": "n[1-2]",
		"SLURM_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_JOB_CPUS_PER_NODE": "3,1",
		"SLURM_TASKS_PER_NODE": "3,1", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_JOB_PARTITION": "batch",
		"SLURM_CLUSTER_NAME": c.Name, "SLURM_SUBMIT_DIR": c.WorkDir, "SLURM_SUBMIT_HOST": host, "SLURM_CONF": c.Conf,
	} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	c.WaitState(id, "COMPLETED", 20*time.Second)

	// srun inside the command runs a step of the allocation, on the node
	// daemons (all on this machine); the command's status fails the job.
	r = c.Run("", "salloc", "-N1", "sh", "-c", "srun -l hostname; exit 3")
	id, _ = granted(t, r.Stderr)
	if r.Code != 3 || r.Stdout != "0: "+host+"\n" || !strings.HasSuffix(r.Stderr, "salloc: Relinquishing job allocation "+id+"\n") {
		t.Errorf("salloc with srun: exit %d\nstdout %q\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	j := c.WaitState(id, "FAILED", 20*time.Second)
	if code := j.ExitCode.Value.ReturnCode.Value.Number.Value; code != 3 {
		t.Errorf("job %s exit code %d, want 3", id, code)
	}

	// scancel under --kill-command: the command gets SIGTERM and salloc
	// exits 1, without relinquishing what is gone.
	s := c.startSalloc(t, "-N1", "-K", "sh", "-c", "touch started; exec sleep 300")
	c.WaitFile("started", 20*time.Second)
	id, _ = granted(t, s.stderr.String())
	c.MustRun("", "scancel", id)
	if code := s.wait(t, 20*time.Second); code != 1 {
		t.Errorf("salloc -K after scancel: exit %d\nstderr:\n%s", code, s.stderr.String())
	}
	if !strings.HasSuffix(s.stderr.String(), "salloc: Job allocation "+id+" has been revoked.\n") {
		t.Errorf("salloc -K after scancel:\n%s", s.stderr.String())
	}
	c.WaitState(id, "CANCELLED", 20*time.Second)

	// Without --kill-command the command goes on, as with Slurm's
	// default build, and salloc exits with its status.
	s = c.startSalloc(t, "-N1", "sh", "-c", "touch started2; while [ ! -e go ]; do sleep 0.1; done; echo survived")
	c.WaitFile("started2", 20*time.Second)
	id, _ = granted(t, s.stderr.String())
	c.MustRun("", "scancel", id)
	revoked := "salloc: Job allocation " + id + " has been revoked.\n"
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.stderr.String(), revoked) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "go"), nil, 0o644))
	if code := s.wait(t, 20*time.Second); code != 0 || s.stdout.String() != "survived\n" || !strings.HasSuffix(s.stderr.String(), revoked) {
		t.Errorf("salloc after scancel: exit %d\nstdout %q\nstderr:\n%s", code, s.stdout.String(), s.stderr.String())
	}
}

// sallocRun is a salloc started in the background.
type sallocRun struct {
	cmd            *exec.Cmd
	stdout, stderr *testutil.SyncBuffer
}

func (c *Cluster) startSalloc(t *testing.T, args ...string) *sallocRun {
	t.Helper()
	s := &sallocRun{cmd: exec.Command(filepath.Join(c.shimPath, "salloc"), args...), stdout: &testutil.SyncBuffer{}, stderr: &testutil.SyncBuffer{}}
	s.cmd.Dir = c.WorkDir
	s.cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, "PATH="+c.shimPath+":"+os.Getenv("PATH"))
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	must(t, s.cmd.Start())
	t.Cleanup(func() { s.cmd.Process.Kill() })
	return s
}

// wait waits for salloc's exit and returns its status.
func (s *sallocRun) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("salloc still runs after %v\nstderr:\n%s", timeout, s.stderr.String())
		return -1
	}
}
