package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJobComp: JobCompType=jobcomp/filetxt writes one line for every run
// of a job that ends, in the words real Slurm's plugin writes.
func TestJobComp(t *testing.T) {
	t.Parallel()
	comp := filepath.Join(t.TempDir(), "jobcomp.txt")
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "JobCompType=jobcomp/filetxt\nJobCompLoc=" + comp + "\n"})
	ok := c.Submit("", "-J", "fine", "-t", "5", "--wrap", "true")
	c.WaitState(ok, "COMPLETED", 20*time.Second)
	bad := c.Submit("", "-J", "failing", "--wrap", "exit 3")
	c.WaitState(bad, "FAILED", 20*time.Second)
	held := c.Submit("", "--hold", "--wrap", "true")
	c.MustRun("", "scancel", held)
	arr := c.Submit("", "--array=1-2", "--wrap", "true")
	c.WaitState(arr+"_1", "COMPLETED", 20*time.Second)
	c.WaitState(arr+"_2", "COMPLETED", 20*time.Second)

	// A job's line is written as it ends, beside its state change: wait
	// for the five.
	var data []byte
	var lines []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if data, err = os.ReadFile(comp); err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) >= 5 || time.Now().After(deadline) {
			break
		}
	}
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Errorf("no line %q in:\n%s", prefix, data)
		return ""
	}
	if l := find("JobId=" + ok + " "); !strings.Contains(l, " UserId=root(0) GroupId=root(0) Name=fine JobState=COMPLETED Partition=batch TimeLimit=5 ") ||
		!strings.Contains(l, " NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir="+c.WorkDir+" ReservationName= Tres=cpu=1,mem=100M,node=1,billing=1 ") ||
		!strings.HasSuffix(l, " DerivedExitCode=0:0 ExitCode=0:0 ") {
		t.Errorf("completed job: %s", l)
	}
	if l := find("JobId=" + bad + " "); !strings.Contains(l, " JobState=FAILED ") || !strings.HasSuffix(l, " ExitCode=3:0 ") {
		t.Errorf("failed job: %s", l)
	}
	if l := find("JobId=" + held + " "); !strings.Contains(l, " JobState=CANCELLED ") || !strings.Contains(l, " NodeList=(null) NodeCnt=0 ProcCnt=0 ") {
		t.Errorf("job cancelled before it ran: %s", l)
	}
	if l := find("JobId=" + arr + " "); !strings.Contains(l, " ArrayJobId="+arr+" ArrayTaskId=") {
		t.Errorf("array task: %s", l)
	}
	if len(lines) != 5 {
		t.Errorf("%d lines, want 5:\n%s", len(lines), data)
	}
}
