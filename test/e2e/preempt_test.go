package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPreemption: an evaluation job in a scavenger partition (PriorityTier
// 1, PreemptMode=REQUEUE) holds both nodes; a training job in a
// higher-tier partition preempts it: the eval job gets SIGTERM, is
// requeued with its restart count up, and runs again after the training
// job. A job of a CANCEL partition ends PREEMPTED.
func TestPreemption(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n" +
		"PartitionName=scav Nodes=n[1-2] PriorityTier=1 PreemptMode=REQUEUE GraceTime=1 MaxTime=INFINITE State=UP\n" +
		"PartitionName=scancel Nodes=n[1-2] PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP\n" +
		"PartitionName=prod Nodes=n[1-2] PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP\n"})
	eval := c.Submit("", "-p", "scav", "-N2", "--exclusive", "-o", "eval.out", "--open-mode=append",
		"--wrap", `trap 'echo got SIGTERM; exit 143' TERM; echo run ${SLURM_RESTART_COUNT:-0}; sleep 300 & wait`)
	c.WaitState(eval, "RUNNING", 20*time.Second)
	c.WaitFile("eval.out", 20*time.Second)
	train := c.Submit("", "-p", "prod", "-N1", "--exclusive", "--wrap", "sleep 2")
	c.WaitState(train, "RUNNING", 30*time.Second)
	j := c.Job(eval)
	if st := c.State(eval); st != "PENDING" && st != "RUNNING" {
		t.Errorf("preempted eval job: %s", st)
	}
	if r := j.RestartCnt.Or(-1); r != 1 {
		t.Errorf("preempted eval job restart count %d, want 1", r)
	}
	c.WaitState(train, "COMPLETED", 30*time.Second)
	c.WaitState(eval, "RUNNING", 30*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.ReadFile("eval.out"), "run 1") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if out := c.ReadFile("eval.out"); out != "run 0\ngot SIGTERM\nrun 1\n" {
		t.Errorf("eval job's output:\n%s", out)
	}
	c.MustRun("", "scancel", eval)

	// CANCEL mode: the preempted job ends PREEMPTED.
	c.WaitState(eval, "CANCELLED", 20*time.Second)
	victim := c.Submit("", "-p", "scancel", "-N2", "--exclusive", "--wrap", "sleep 300")
	c.WaitState(victim, "RUNNING", 20*time.Second)
	train2 := c.Submit("", "-p", "prod", "-N2", "--exclusive", "--wrap", "true")
	c.WaitState(victim, "PREEMPTED", 30*time.Second)
	c.WaitState(train2, "COMPLETED", 30*time.Second)
}
