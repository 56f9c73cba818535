package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// checkpointScript counts to 40, saving the count after each step, and
// resumes from the saved count when it starts again.
const checkpointScript = `#!/bin/bash
#SBATCH --open-mode=append
i=$(cat ckpt 2>/dev/null || echo 0)
echo "run restart=${SLURM_RESTART_COUNT:-0} node=$SLURMD_NODENAME from=$i"
while [ "$i" -lt 40 ]; do
	i=$((i+1)); echo "$i" > ckpt.tmp && mv ckpt.tmp ckpt
	sleep 0.1
done
echo "done at $i"
`

// TestNodeFailureRequeueResumes is story 4 of the brief: the node under a
// running job dies; the node goes DOWN after SlurmdTimeout, the job is
// requeued under its id and finishes on the healthy node, resuming from its
// checkpoint instead of from scratch. A job that may not be requeued ends
// NODE_FAIL. The node is given work again only after it registers.
func TestNodeFailureRequeueResumes(t *testing.T) {
	t.Parallel()
	comp := filepath.Join(t.TempDir(), "jobcomp.txt")
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "JobCompType=jobcomp/filetxt\nJobCompLoc=" + comp + "\n"})
	// The job starts on n1 (n2 drained meanwhile) and may run anywhere.
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=hold")
	id := c.Submit(checkpointScript, "-o", "train.out")
	c.WaitState(id, "RUNNING", 20*time.Second)
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=RESUME")
	noRequeue := c.Submit("", "--no-requeue", "-w", "n1", "--wrap", "sleep 300")
	c.WaitState(id, "RUNNING", 20*time.Second)
	c.WaitState(noRequeue, "RUNNING", 20*time.Second)
	waitCheckpoint(t, c, 5)

	// n1 dies: its daemon and every process on it.
	c.KillNode("n1")
	killNodeProcesses(c, "n1")
	saved := readCheckpoint(t, c)

	j := c.WaitState(id, "COMPLETED", 60*time.Second)
	if n := j.Nodes.Or(""); n != "n2" {
		t.Errorf("requeued job finished on %q, want n2", n)
	}
	if r := j.RestartCnt.Or(-1); r != 1 {
		t.Errorf("restart count %d, want 1", r)
	}
	out := c.ReadFile("train.out")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || lines[0] != "run restart=0 node=n1 from=0" || lines[len(lines)-1] != "done at 40" {
		t.Fatalf("output:\n%s", out)
	}
	var resumedFrom int
	for _, l := range lines[1:] {
		if rest, ok := strings.CutPrefix(l, "run restart=1 node=n2 from="); ok {
			resumedFrom, _ = strconv.Atoi(rest)
		}
	}
	if resumedFrom < saved || resumedFrom == 0 {
		t.Errorf("second run resumed from %d, want the checkpoint (%d or later); output:\n%s", resumedFrom, saved, out)
	}
	if st := c.State(noRequeue); st != "NODE_FAIL" {
		t.Errorf("job with --no-requeue: %s, want NODE_FAIL", st)
	}
	// The job completion log keeps the run that was lost, NODE_FAIL on
	// n1, and the one that finished on n2; the other job's run ended
	// NODE_FAIL for good.
	data, err := os.ReadFile(comp)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Fields(l)
		if len(f) > 10 {
			runs = append(runs, f[0]+" "+f[4]+" "+f[9])
		}
	}
	want := []string{"JobId=" + id + " JobState=NODE_FAIL NodeList=n1", "JobId=" + noRequeue + " JobState=NODE_FAIL NodeList=n1", "JobId=" + id + " JobState=COMPLETED NodeList=n2"}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("job completion log:\n%s\nwant:\n%s\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"), data)
	}
	sinfo := c.MustRun("", "sinfo", "-h", "-n", "n1", "-o", "%T %E")
	if sinfo != "down* Not responding\n" {
		t.Errorf("sinfo of the dead node: %q", sinfo)
	}

	// The node comes back and registers (ReturnToService=2): it takes
	// work again.
	c.StartNode("n1")
	c.WaitNodesUp()
	again := c.Submit("", "-w", "n1", "--wrap", "true")
	c.WaitState(again, "COMPLETED", 20*time.Second)
}

func checkpointPath(c *Cluster) string { return filepath.Join(c.WorkDir, "ckpt") }

func readCheckpoint(t *testing.T, c *Cluster) int {
	t.Helper()
	data, err := os.ReadFile(checkpointPath(c))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func waitCheckpoint(t *testing.T, c *Cluster, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for readCheckpoint(t, c) < n {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint never reached %d", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killNodeProcesses ends the job processes a node daemon started, as the
// machine's death would: every cluster process of the node's jobs.
func killNodeProcesses(c *Cluster, node string) {
	testutil.KillJobProcesses(c.Conf, "SLURMD_NODENAME="+node)
}
