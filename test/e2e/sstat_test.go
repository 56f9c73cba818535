package e2e

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSstat: a running step's usage, live from its two nodes, in sstat's
// columns; the batch step with -a; pids with -i; Slurm's messages for a
// step that does not run, a job that does not exist, and a user who does
// not own the job; and the usage the nodes saw kept in the step's record.
func TestSstat(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2})
	// Three tasks on two nodes, each holding 40 MB and busy on a CPU.
	task := `python3 -c "
import time
a = bytearray(40 << 20)
t = time.time()
while time.time() - t < 120: pass
"`
	id := c.Submit("", "-N2", "-n3", "--wrap", "srun "+task)
	c.WaitState(id, "RUNNING", 30*time.Second)
	var fields []string
	for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		out := c.MustRun("", "sstat", "-n", "-P", "--noconvert", "-o", "JobID,NTasks,Nodelist,MaxRSS,MinCPU,MaxVMSize,MaxDiskRead", "-j", id)
		fields = strings.Split(strings.TrimSpace(out), "|")
		if len(fields) == 7 && fields[1] == "3" && atLeast(fields[3], 40<<20) && fields[4] >= "00:00:01" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sstat of the running step: %q", out)
		}
	}
	if fields[0] != id+".0" || fields[2] != "n[1-2]" || !atLeast(fields[5], 40<<20) || !atLeast(fields[6], 1) {
		t.Errorf("sstat line: %q", fields)
	}
	// The default columns, converted units.
	out := c.MustRun("", "sstat", "-j", id)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "JobID         MaxVMSize  MaxVMSizeNode") || !strings.HasPrefix(lines[2], id+".0 ") ||
		!strings.Contains(lines[2], "K ") {
		t.Errorf("sstat -j %s:\n%s", id, out)
	}
	t.Logf("sstat -j %s:\n%s", id, out)
	// -a adds the batch step; -i lists each node's processes.
	if out := c.MustRun("", "sstat", "-a", "-n", "-P", "-o", "JobID,NTasks,Nodelist", "-j", id); out != id+".batch|1|n1\n"+id+".0|3|n[1-2]\n" {
		t.Errorf("sstat -a:\n%s", out)
	}
	pids := c.MustRun("", "sstat", "-i", "-n", "-P", "-j", id)
	pl := strings.Split(strings.TrimSpace(pids), "\n")
	if len(pl) != 2 || !strings.HasPrefix(pl[0], id+".0|n1|") || !strings.HasPrefix(pl[1], id+".0|n2|") {
		t.Errorf("sstat -i:\n%s", pids)
	}
	for _, l := range pl {
		for _, p := range strings.Split(l[strings.LastIndex(l, "|")+1:], ",") {
			if cmd, err := os.ReadFile("/proc/" + p + "/cmdline"); err != nil || !strings.Contains(string(cmd), "python3") {
				t.Errorf("sstat -i lists pid %s, which is not a task (%q, %v)", p, cmd, err)
			}
		}
	}
	// Messages, exit 0, as Slurm's sstat.
	if r := c.Run("", "sstat", "-j", id+".7"); r.Code != 0 || r.Stderr != "sstat: error: StepId="+id+".7 not found running.\n" {
		t.Errorf("a step that does not run: %+v", r)
	}
	if r := c.Run("", "sstat", "-j", "999999"); r.Code != 0 || r.Stderr != "sstat: error: couldn't get steps for job 999999\n" {
		t.Errorf("an unknown job: %+v", r)
	}
	if r := c.Run("", "sstat"); r.Code != 1 || r.Stderr != "sstat: error: You didn't give me any jobs to stat.\n" {
		t.Errorf("no job: %+v", r)
	}
	if r := c.Run("", "sstat", "-j", "abc"); r.Code != 1 || r.Stderr != "sstat: fatal: Bad job/step specified: abc\n" {
		t.Errorf("a bad job: %+v", r)
	}
	// Another user may not look at the job.
	if nobody, err := user.Lookup("nobody"); err == nil {
		must(t, os.Chmod(binDir, 0o755))
		if r := c.runAs(nobody, "sstat", "-n", "-P", "-j", id+".0"); r.Stdout != "" || !strings.Contains(r.Stderr, "Access/permission denied") {
			t.Errorf("sstat as nobody: %+v", r)
		}
	}
	// What the nodes measured stays in the step's record.
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 30*time.Second)
	var rec string
	fields = nil
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		rec = c.MustRun("", "sacct", "-n", "-P", "--noconvert", "-o", "JobID,MaxRSS,MaxVMSize,NTasks,MaxRSSNode,MaxRSSTask,MinCPUNode,TRESUsageInMaxNode", "-j", id+".0")
		if fields = strings.Split(strings.TrimSpace(rec), "|"); len(fields) == 8 && fields[1] != "" {
			break
		}
	}
	// The step's three tasks ran on two nodes: which node and task had
	// the largest resident set comes from Drover's step usage request.
	if len(fields) != 8 || !atLeast(fields[1], 40<<20) || !atLeast(fields[2], 40<<20) || fields[3] != "3" ||
		(fields[4] != "n1" && fields[4] != "n2") || (fields[5] != "0" && fields[5] != "1" && fields[5] != "2") ||
		fields[6] == "" || !strings.HasPrefix(fields[7], "cpu=n") {
		t.Errorf("the step's record: %q", rec)
	}
}

// atLeast says a byte count printed in full is at least n.
func atLeast(s string, n int64) bool {
	v, err := strconv.ParseInt(s, 10, 64)
	return err == nil && v >= n
}
