package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestArrayTaskIDs: scontrol's hold, release, update, show and requeue,
// scancel and squeue -j take array task ids as Slurm writes them: one
// task (JOB_TASK), a list or range in brackets (JOB_[1-2]), a list of such
// ids.
func TestArrayTaskIDs(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 8})
	id := c.Submit("", "-H", "--array=1-5", "-t", "10", "--wrap", "sleep 300")
	states := func() string {
		return strings.TrimSpace(c.MustRun("", "squeue", "-h", "-r", "-j", id, "-o", "%i %t"))
	}
	c.MustRun("", "scontrol", "release", id+"_1")
	c.WaitRun(id+"_1 R\n", 20*time.Second, "squeue", "-h", "-j", id+"_1", "-o", "%i %t")
	c.MustRun("", "scontrol", "release", id+"_[2-3]")
	c.WaitRun(id+"_2 R\n"+id+"_3 R\n", 20*time.Second, "squeue", "-h", "-j", id+"_2,"+id+"_3", "-o", "%i %t")
	c.MustRun("", "scontrol", "update", "JobId="+id+"_4", "TimeLimit=5")
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", id+"_4")); f["TimeLimit"] != "00:05:00" || f["ArrayTaskId"] != "4" {
		t.Errorf("task 4 after update: TimeLimit=%s ArrayTaskId=%s", f["TimeLimit"], f["ArrayTaskId"])
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", id+"_5")); f["TimeLimit"] != "00:10:00" {
		t.Errorf("task 5 changed with task 4: TimeLimit=%s", f["TimeLimit"])
	}
	// A task held again (it was submitted held) stays pending and says
	// why.
	c.MustRun("", "scontrol", "hold", id+"_5")
	if got := c.MustRun("", "squeue", "-h", "-j", id+"_5", "-o", "%t %r"); got != "PD JobHeldUser\n" && got != "PD JobHeldAdmin\n" {
		t.Errorf("task 5 after hold: %q", got)
	}
	c.MustRun("", "scontrol", "requeue", id+"_1")
	c.WaitRun(id+"_1 PD\n", 20*time.Second, "squeue", "-h", "-j", id+"_1", "-o", "%i %t")
	c.MustRun("", "scancel", id+"_[4-5]")
	c.WaitRun("", 20*time.Second, "squeue", "-h", "-j", id+"_4,"+id+"_5", "-o", "%i %t")
	got := states()
	for _, want := range []string{id + "_1 ", id + "_2 R", id + "_3 R"} {
		if !strings.Contains(got, want) {
			t.Errorf("squeue -r -j %s:\n%s\nwant a line starting %q", id, got, want)
		}
	}
	c.MustRun("", "scancel", id)
}
