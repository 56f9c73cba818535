package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestAccountingStory: an administrator sets up QOS and accounts with
// sacctmgr on a cluster that enforces associations and QOS. Jobs get their
// account and QOS from the association, what is not allowed is refused
// with Slurm's errors, sprio shows the QOS factor, sshare the account
// tree, and under preempt/qos a job of QOS high preempts (requeues) a
// running job of QOS scavenger.
func TestAccountingStory(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "AccountingStorageEnforce=associations,qos\n" +
		"PreemptType=preempt/qos\nPreemptMode=REQUEUE\n" +
		"PriorityType=priority/multifactor\nPriorityWeightQOS=1000\nPriorityWeightFairshare=100\n"})
	c.MustRun("", "sacctmgr", "-i", "add", "qos", "scavenger", "Priority=1")
	c.MustRun("", "sacctmgr", "-i", "add", "qos", "high", "Priority=100", "Preempt=scavenger")
	c.MustRun("", "sacctmgr", "-i", "add", "account", "physics", "Fairshare=3", "Description=physics", "Organization=science")
	c.MustRun("", "sacctmgr", "-i", "add", "account", "chem", "Fairshare=1")
	c.MustRun("", "sacctmgr", "-i", "add", "user", "root", "Account=physics", "QOS=normal,high,scavenger", "DefaultQOS=normal")

	// The default account and QOS of the user's association.
	plain := c.Submit("", "-A", "physics", "--wrap", "true")
	c.WaitState(plain, "COMPLETED", 30*time.Second)
	if j := c.Job(plain); j.Account.Or("") != "physics" || j.Qos.Or("") != "normal" {
		t.Errorf("job account %q QOS %q, want physics normal", j.Account.Or(""), j.Qos.Or(""))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--qos=nope"}, "sbatch: error: Batch job submission failed: Invalid qos specification\n"},
		{[]string{"-A", "chem"}, "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"},
		{[]string{"-A", "nosuch"}, "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n"},
	} {
		r := c.Run("", "sbatch", append(tc.args, "--wrap", "true")...)
		if r.Code != 1 || r.Stderr != tc.want {
			t.Errorf("sbatch %v: exit %d, stderr %q, want %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}

	// preempt/qos: a scavenger job holds both nodes; a high one takes them.
	scav := c.Submit("", "-A", "physics", "--qos=scavenger", "-N2", "--exclusive", "-o", "scav.out", "--open-mode=append",
		"--wrap", `trap 'echo got SIGTERM; exit 143' TERM; echo run ${SLURM_RESTART_COUNT:-0}; sleep 300 & wait`)
	c.WaitState(scav, "RUNNING", 20*time.Second)
	c.WaitFile("scav.out", 20*time.Second)
	// sprio's QOS column: 1000 × scavenger's 1 over high's 100.
	waiting := c.Submit("", "-A", "physics", "--qos=scavenger", "-N1", "--exclusive", "--wrap", "true")
	if out := c.MustRun("", "sprio", "-h", "-o", "%i %Q", "-j", waiting); strings.TrimSpace(out) != waiting+" 10" {
		t.Errorf("sprio QOS of a scavenger job: %q, want %q", out, waiting+" 10")
	}
	c.MustRun("", "scancel", waiting)
	normal := c.Submit("", "-A", "physics", "-N1", "--exclusive", "--wrap", "sleep 1")
	time.Sleep(2 * time.Second)
	if st := c.State(normal); st != "PENDING" {
		t.Errorf("a normal job, which may not preempt, is %s", st)
	}
	high := c.Submit("", "-A", "physics", "--qos=high", "-N1", "--exclusive", "--wrap", "sleep 2")
	c.WaitState(high, "RUNNING", 30*time.Second)
	if r := c.Job(scav).RestartCnt.Or(-1); r != 1 {
		t.Errorf("preempted scavenger job restart count %d, want 1", r)
	}

	// sshare: the account tree with root's own user, physics with its
	// user root, and chem.
	out := c.MustRun("", "sshare", "-a", "-n", "-o", "Account,User,RawShares")
	var got []string
	for _, l := range lines(out) {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{"root", "root root 1", "chem 1", "physics 3", "physics root 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sshare -a:\n%s\nwant rows %q", out, want)
	}
	c.MustRun("", "scancel", scav, normal, high)
}
