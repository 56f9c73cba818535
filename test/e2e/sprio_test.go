package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestSprio: multifactor priorities and their factors, laid out as real
// Slurm's sprio lays them out (checked against Slurm 22.05 with the same
// weights: 2 exclusive nodes of 4 -> job size 562, partition 500).
func TestSprio(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, Extra: "PriorityWeightAge=1000\nPriorityWeightJobSize=2000\nPriorityWeightPartition=500\nPriorityMaxAge=1-0\n"})
	hold := c.Submit("", "-N4", "--exclusive", "--wrap", "sleep 60")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	pair := c.Submit("", "-N2", "--exclusive", "--wrap", "true")
	nice := c.Submit("", "--nice=100", "--wrap", "true")
	c.Submit("", "--hold", "--wrap", "true")
	want := "          JOBID PARTITION   PRIORITY       SITE        AGE    JOBSIZE  PARTITION\n" +
		"              " + pair + " batch           1062          0          0        562        500\n" +
		"              " + nice + " batch            681          0          0        281        500\n"
	if got := c.MustRun("", "sprio"); got != want {
		t.Errorf("sprio:\n%s\nwant:\n%s", got, want)
	}
	if got := c.MustRun("", "sprio", "-w"); got != "          JOBID PARTITION   PRIORITY       SITE        AGE    JOBSIZE  PARTITION\n        Weights                               1       1000       2000        500\n" {
		t.Errorf("sprio -w:\n%q", got)
	}
	long := c.MustRun("", "sprio", "-l", "-j", nice)
	if !strings.HasPrefix(long, "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n") ||
		!strings.Contains(long, " batch         root        681          0          0          0          0        281        500          0         100") {
		t.Errorf("sprio -l:\n%s", long)
	}
	// The age factor moves with the clock: only its first digits are fixed.
	if got := c.MustRun("", "sprio", "-n", "-h", "-j", pair); !strings.HasPrefix(got, "              "+pair+" batch     0.00000024 0.0000") || !strings.HasSuffix(got, "  0.2812500  1.0000000 \n") {
		t.Errorf("sprio -n:\n%q", got)
	}
	if got := c.MustRun("", "sprio", "-o", "%i|%Y|%J|%N", "-h", "-u", "root"); !strings.Contains(got, nice+"|681|281|100\n") {
		t.Errorf("sprio -o:\n%s", got)
	}
	if got := c.MustRun("", "sprio", "-j", "999"); !strings.HasSuffix(got, "Unable to find jobs matching user/id(s) specified\n") {
		t.Errorf("unknown job: %q", got)
	}
	if r := c.Run("", "sprio", "-o", "%Z"); r.Code != 1 || r.Stderr != "sprio: error: Invalid job format specification: Z\n" {
		t.Errorf("bad format: %+v", r)
	}
	// scontrol top: the nice job takes the pair's place at the head, by
	// trading nice values with it.
	if got := c.MustRun("", "scontrol", "top", nice); got != "" {
		t.Errorf("scontrol top printed %q", got)
	}
	if got := c.MustRun("", "squeue", "-h", "-t", "PD", "-j", pair+","+nice, "-o", "%i %Q %y", "-S", "-p"); got != nice+" 1062 -281\n"+pair+" 681 381\n" {
		t.Errorf("after scontrol top:\n%s", got)
	}
	if r := c.Run("", "scontrol", "top", "999"); r.Code != 1 || r.Stderr != "slurm_top_job error: Invalid job id specified\n" {
		t.Errorf("top of an unknown job: %+v", r)
	}
	c.MustRun("", "scancel", hold)
}

// TestSprioTRES: PriorityWeightTRES adds each TRES's share of the
// partition, weighted, to the priority, and sprio shows it in Slurm's
// TRES column (the figures follow the formula checked against Slurm
// 22.05: see internal/priority's TestTRESFactors).
func TestSprioTRES(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, CPUs: 8, GPUs: 4,
		Extra: "PriorityWeightJobSize=500\nPriorityWeightTRES=CPU=2000,Mem=3000,GRES/gpu=4000,Node=1500\n"})
	hold := c.Submit("", "-N4", "--exclusive", "--wrap", "sleep 60")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	a := c.Submit("", "-N2", "-n4", "--mem=2000", "--gres=gpu:2", "--wrap", "true")
	b := c.Submit("", "-n1", "--mem=1000", "--wrap", "true")
	d := c.Submit("", "-N3", "-n3", "--gres=gpu:4", "--mem=8000", "--wrap", "true")
	want := "          JOBID PARTITION   PRIORITY       SITE    JOBSIZE                 TRES\n" +
		"              " + a + " batch           2531          0        156 cpu=250,mem=375,node\n" +
		"              " + b + " batch            601          0         70 cpu=62,mem=94,node=3\n" +
		"              " + d + " batch           6773          0        210 cpu=188,mem=2250,nod\n"
	if got := c.MustRun("", "sprio"); got != want {
		t.Errorf("sprio:\n%s\nwant:\n%s", got, want)
	}
	if got := c.MustRun("", "sprio", "-h", "-o", "%i %60T %60t", "-j", a); !strings.Contains(got, " cpu=250,mem=375,node=750,gres/gpu=1000 ") ||
		!strings.Contains(got, " cpu=0.12,mem=0.12,node=0.50,gres/gpu=0.25 ") {
		t.Errorf("sprio TRES columns: %q", got)
	}
	if got := c.MustRun("", "sprio", "-w", "-o", "%.15i %T"); got != "          JOBID TRES\n        Weights CPU=2000,Mem=3000,GRES/gpu=4000,Node=1500\n" {
		t.Errorf("sprio -w: %q", got)
	}
	// The controller schedules by the same priority.
	if got := c.MustRun("", "squeue", "-h", "-t", "PD", "-o", "%i %Q", "-S", "-p"); got != d+" 6773\n"+a+" 2531\n"+b+" 601\n" {
		t.Errorf("squeue priorities:\n%s", got)
	}
	c.MustRun("", "scancel", hold)
}
