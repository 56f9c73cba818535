package e2e

import (
	"context"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
)

// TestSreport: sreport's four reports over yesterday, from records of
// that day written into the cluster's store (a report counts whole past
// hours, so today's jobs cannot show yet): two accounts' jobs, a node
// down for an hour, a job that waited an hour.
func TestSreport(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	ctx := context.Background()
	store, err := acctdb.Open(ctx, acctdb.Config{Kind: acctdb.SQLite, Path: filepath.Join(c.Dir, "state", acctdb.Embedded)})
	must(t, err)
	defer store.Close()
	// The controller records the cluster's size once it runs; the
	// size before that is this test's.
	var since time.Time
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cpus, s, ok, err := store.ClusterSize(ctx, c.Name)
		must(t, err)
		if ok {
			if cpus != 8 {
				t.Fatalf("cluster size %d, want 8", cpus)
			}
			since = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the controller did not record the cluster's size")
		}
	}
	y, m, d := time.Now().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.Local).AddDate(0, 0, -1)
	at := func(h float64) time.Time { return day.Add(time.Duration(h * float64(time.Hour))) }
	nobody, err := user.Lookup("nobody")
	must(t, err)
	job := func(id uint32, acct, who string, cpus uint32, elig, start, end float64) acctdb.Job {
		return acctdb.Job{Cluster: c.Name, JobID: 900000 + id, ArrayTaskID: acctdb.NoTask, Account: acct, User: who, AllocCPUs: cpus, ReqCPUs: cpus,
			Submit: at(elig), Eligible: at(elig), Start: at(start), End: at(end), State: "COMPLETED", KilledBy: -1}
	}
	must(t, store.Put(ctx, acctdb.Batch{
		Jobs: []acctdb.Job{
			job(1, "phys", "root", 4, 10, 10, 12),            // 480 CPU-minutes
			job(2, "chem", nobody.Username, 2, 11, 11, 11.5), // 60
			job(3, "phys", "root", 4, 14, 15, 15.5),          // 120, after waiting an hour: 240 planned
		},
		Events: []acctdb.Event{
			{Cluster: c.Name, Start: day.AddDate(0, 0, -1), End: since, State: acctdb.ClusterEvent, CPUs: 8},
			{Cluster: c.Name, Node: "n2", Start: at(13), End: at(14), State: "DOWN", CPUs: 4},
		},
	}))
	period := day.Format("2006-01-02T15:04:05") + " - " + day.Add(24*time.Hour-time.Second).Format("2006-01-02T15:04:05")
	banner := func(title, unit string) string {
		line := strings.Repeat("-", 80) + "\n"
		return line + title + "\n" + unit + "\n" + line
	}
	check := func(want string, args ...string) {
		t.Helper()
		if got := c.MustRun("", "sreport", args...); got != want {
			t.Errorf("sreport %s:\n%s\nwant:\n%s", strings.Join(args, " "), got, want)
		}
	}
	check(banner("Cluster Utilization "+period, "Usage reported in CPU Minutes")+
		"Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported\n"+c.Name+"|660|240|0|10380|240|11520\n",
		"-P", "cluster", "utilization")
	check(c.Name+"|5.73%|2.08%|0.00%|90.10%|2.08%|100.00%|\n", "-n", "-p", "-t", "percent", "cluster", "Utilization")
	check(banner("Cluster Utilization "+period, "Usage reported in CPU Hours")+"  Cluster Allocate     Down \n--------- -------- -------- \n"+fit9(c.Name)+"       11        4 \n",
		"-t", "hours", "cluster", "utilization", "format=Cluster,Allocated,Down")
	proper := func(u string) string {
		pu, _ := user.Lookup(u)
		name, _, _ := strings.Cut(pu.Name, ",")
		return name
	}
	// root's own association (root under root) is there, unused.
	check(c.Name+"|root|||660|0\n"+c.Name+"|root|root|"+proper("root")+"|0|0\n"+c.Name+"|chem|||60|0\n"+c.Name+"|chem|"+nobody.Username+"|"+proper(nobody.Username)+"|60|0\n"+
		c.Name+"|phys|||600|0\n"+c.Name+"|phys|root|"+proper("root")+"|600|0\n",
		"-n", "-P", "cluster", "AccountUtilizationByUser")
	check(banner("Top 10 Users "+period+" (86400 secs)", "Usage reported in CPU Minutes")+
		"Cluster|Login|Proper Name|Account|Used|Energy\n"+c.Name+"|root|"+proper("root")+"|phys|600|0\n"+
		c.Name+"|"+nobody.Username+"|"+proper(nobody.Username)+"|chem|60|0\n",
		"-P", "user", "TopUsage")
	check(c.Name+"|root|"+proper("root")+"|phys|600|0\n", "-n", "-P", "user", "top", "TopCount=1")
	check(banner("Job Sizes "+period+" (86400 secs)", "Time reported in Minutes")+
		"Cluster|Account|0-1 CPUs|2-3 CPUs|>= 4 CPUs|% of cluster\n"+c.Name+"|chem|0|60|0|9.09%\n"+c.Name+"|phys|0|0|600|90.91%\n",
		"-P", "job", "SizesByAccount", "Grouping=2,4")
	check(c.Name+"|chem|0|1|0|33.33%\n"+c.Name+"|phys|0|0|2|66.67%\n", "-n", "-P", "job", "sizes", "grouping=2,4", "PrintJobCount")
	// A node drained and resumed leaves its period out of service in
	// the store, with its CPUs.
	c.MustRun("", "scontrol", "update", "nodename=n1", "state=drain", "reason=maintenance")
	c.MustRun("", "scontrol", "update", "nodename=n1", "state=resume")
	var got []acctdb.ClusterUsage
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		got, err = store.Usage(ctx, acctdb.UsageQuery{Clusters: []string{c.Name}, Start: since.Add(-time.Second), End: time.Now().Add(time.Hour)})
		must(t, err)
		if len(got) == 1 && got[0].Down > 0 {
			break
		}
	}
	if len(got) != 1 || got[0].Down <= 0 || got[0].Down > 4*60 {
		t.Errorf("a drained node's time: %+v", got)
	}
	// Mistakes, as sreport reports them.
	if r := c.Run("", "sreport", "cluster", "bogus"); r.Code != 1 || !strings.HasPrefix(r.Stderr, "Not valid report bogus\n") {
		t.Errorf("an unknown report: %+v", r)
	}
	if r := c.Run("", "sreport", "-t", "fortnights", "cluster", "utilization"); r.Code != 1 || r.Stderr != "unknown time format fortnights\n" {
		t.Errorf("an unknown unit: %+v", r)
	}
}

// fit9 right-aligns a cluster name in sreport's 9 columns.
func fit9(s string) string {
	if len(s) > 9 {
		return s[:8] + "+"
	}
	return strings.Repeat(" ", 9-len(s)) + s
}
