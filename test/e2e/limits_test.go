package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestLimits: under AccountingStorageEnforce=limits, association and QOS
// limits set with sacctmgr hold jobs pending with Slurm's reasons, let
// them start once they fit, and refuse a submission over a submit limit
// with Slurm's error.
func TestLimits(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 8, Extra: "AccountingStorageEnforce=associations,limits,qos\n" +
		"PartitionName=billed Nodes=ALL TRESBillingWeights=CPU=2.0\nPartitionName=capped Nodes=ALL QOS=cap\n"})
	c.MustRun("", "sacctmgr", "-i", "add", "account", "lab")
	c.MustRun("", "sacctmgr", "-i", "add", "user", "root", "account=lab")
	reason := func(id, want string) {
		t.Helper()
		var got string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got = strings.TrimSpace(c.MustRun("", "squeue", "-h", "-j", id, "-o", "%T|%r")); got == want {
				return
			}
		}
		t.Errorf("job %s: %q, want %q", id, got, want)
	}

	// One running job a user under the QOS: the second waits.
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxJobsPU=1")
	if out := c.MustRun("", "sacctmgr", "-n", "-P", "show", "qos", "normal", "format=name,maxjobspu"); out != "normal|1\n" {
		t.Errorf("show qos: %q", out)
	}
	first := c.Submit("", "-A", "lab", "--wrap", "sleep 300")
	c.WaitState(first, "RUNNING", 20*time.Second)
	second := c.Submit("", "-A", "lab", "--wrap", "sleep 300")
	reason(second, "PENDING|QOSMaxJobsPerUserLimit")

	// At most two jobs in the system for the user's association: a
	// third is refused at submission.
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "MaxSubmitJobs=2")
	r := c.Run("", "sbatch", "-A", "lab", "--wrap", "true")
	if r.Code != 1 || r.Stderr != "sbatch: error: AssocMaxSubmitJobLimit\nsbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)\n" {
		t.Errorf("a third submission: %+v", r)
	}
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "MaxSubmitJobs=-1")

	// The QOS limit lifted, the account's CPUs hold the next: the
	// second starts (1 + 1 CPUs), a 4-CPU job waits for the account's
	// GrpTRES.
	c.MustRun("", "sacctmgr", "-i", "modify", "account", "lab", "set", "GrpTRES=cpu=3")
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxJobsPU=-1")
	c.WaitState(second, "RUNNING", 20*time.Second)
	wide := c.Submit("", "-A", "lab", "-c", "4", "--wrap", "sleep 300")
	reason(wide, "PENDING|AssocGrpCpuLimit")
	if out := c.MustRun("", "sacctmgr", "-n", "-P", "show", "assoc", "where", "account=lab", "format=account,user,grptres"); out != "lab||cpu=3\nlab|root|\n" {
		t.Errorf("show assoc: %q", out)
	}

	// A job asking more CPU-minutes than one job may have waits.
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "MaxTRESMinsPerJob=cpu=100")
	greedy := c.Submit("", "-A", "lab", "-c", "2", "-t", "60", "--wrap", "true")
	reason(greedy, "PENDING|AssocMaxCpuMinutesPerJobLimit")
	if out := c.MustRun("", "sacctmgr", "-n", "-P", "show", "assoc", "where", "account=lab", "user=root", "format=user,maxtresmins"); out != "root|cpu=100\n" {
		t.Errorf("show assoc MaxTRESMins: %q", out)
	}
	c.MustRun("", "scancel", greedy)
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "MaxTRESMinsPerJob=cpu=-1")

	// A time limit over the QOS's MaxWall waits for ever, with its reason.
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxWall=10")
	long := c.Submit("", "-A", "lab", "-t", "30", "--wrap", "true")
	reason(long, "PENDING|QOSMaxWallDurationPerJobLimit")
	// A job that asks no time limit gets the QOS's MaxWall, and runs.
	unasked := c.Submit("", "-A", "lab", "--wrap", "true")
	c.WaitState(unasked, "COMPLETED", 30*time.Second)
	if j := c.Job(unasked); j.TimeLimit.Value.Number.Value != 10 {
		t.Errorf("time limit of a job that asked none: %+v", j.TimeLimit)
	}
	// With DenyOnLimit the QOS refuses such a job at submission, naming
	// the limit, as Slurm 22.05 does.
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "Flags=DenyOnLimit")
	if r := c.Run("", "sbatch", "-A", "lab", "-t", "30", "--wrap", "true"); r.Code != 1 || r.Stderr != "sbatch: error: QOSMaxWallDurationPerJobLimit\n"+
		"sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)\n" {
		t.Errorf("a job over a DenyOnLimit QOS's MaxWall: %+v", r)
	}
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "Flags=-1")

	// A partition's TRESBillingWeights make a job's billing TRES, which
	// limits on billing count.
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "GrpTRES=billing=3")
	billed := c.Submit("", "-A", "lab", "-p", "billed", "-c", "2", "-t", "5", "--wrap", "true")
	reason(billed, "PENDING|AssocGrpBilling")
	c.MustRun("", "sacctmgr", "-i", "modify", "user", "root", "where", "account=lab", "set", "GrpTRES=billing=-1")
	c.MustRun("", "scancel", billed)
	if out := c.MustRun("", "scontrol", "show", "partition", "billed"); !strings.Contains(out, "TRESBillingWeights=CPU=2.0") {
		t.Errorf("scontrol show partition billed:\n%s", out)
	}

	// A partition's QOS caps its jobs over their own QOS.
	c.MustRun("", "sacctmgr", "-i", "add", "qos", "cap", "MaxTRESPerUser=cpu=1")
	capped := c.Submit("", "-A", "lab", "-p", "capped", "-c", "2", "-t", "5", "--wrap", "true")
	reason(capped, "PENDING|QOSMaxCpuPerUserLimit")
	if out := c.MustRun("", "scontrol", "show", "partition", "capped"); !strings.Contains(out, " QoS=cap\n") {
		t.Errorf("scontrol show partition capped:\n%s", out)
	}
	c.MustRun("", "scancel", capped)

	// Freed CPUs let the wide job start once the limits allow it.
	c.MustRun("", "scancel", first, second)
	c.MustRun("", "sacctmgr", "-i", "modify", "account", "lab", "set", "GrpTRES=cpu=-1")
	reason(wide, "PENDING|QOSMaxWallDurationPerJobLimit") // its time limit is the partition's
	c.MustRun("", "sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxWall=-1")
	c.WaitState(wide, "RUNNING", 20*time.Second)
	c.MustRun("", "scancel", wide, long)
}
