package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// TestSshare: the fair-share tree as sshare prints it (layout checked
// against Slurm 22.05's sshare): the root account and the association of
// the user who ran a job. Usage itself is brought up to date every
// PriorityCalcPeriod, which the controller tests drive with their clock.
func TestSshare(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "PriorityWeightFairshare=1000\n"})
	id := c.Submit("", "--wrap", "true")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	want := "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n" +
		"-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n" +
		"root                                          0.000000           0      1.000000            \n" +
		" root                      root          1    1.000000           0      0.000000   1.000000 \n"
	if got := c.MustRun("", "sshare"); got != want {
		t.Errorf("sshare:\n%s\nwant:\n%s", got, want)
	}
	if got := c.MustRun("", "sshare", "-P", "-U"); got != "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n root|root|1|1.000000|0|0.000000|1.000000\n" {
		t.Errorf("sshare -P -U:\n%q", got)
	}
	if got := c.MustRun("", "sshare", "-n", "-u", "nobody"); got != "root                                          0.000000           0      1.000000            \n" {
		t.Errorf("sshare -u nobody:\n%q", got)
	}
	// -o as Slurm 22.05's sshare reads it: names or their prefixes, a
	// %width (negative: left aligned; titles cut, values cut with '+').
	want = "Account                    User      FairShare LevelFS      RawS     ID \n" +
		"-------------------- ---------- -------------- ------------ ---- ------ \n" +
		"root                                                                  1 \n" +
		" root                      root       1.000000 inf             1      2 \n"
	if got := c.MustRun("", "sshare", "-o", "acc,use,fairs%14,Lev%-12,RawS%4,ID"); got != want {
		t.Errorf("sshare -o:\n%s\nwant:\n%s", got, want)
	}
	if got := c.MustRun("", "sshare", "-P", "-o", "Account%20,User"); got != "Account|User\nroot|\n root|root\n" {
		t.Errorf("sshare -P -o:\n%q", got)
	}
	if got := c.MustRun("", "sshare", "-l"); !strings.HasPrefix(got, "Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    TRESRunMins \n") {
		t.Errorf("sshare -l:\n%s", got)
	}
	if r := c.Run("", "sshare", "-o", "Account, User"); r.Code != 1 || r.Stderr != "sshare: error: Invalid field requested: \" user\"\n" {
		t.Errorf("bad field: %+v", r)
	}
	// --json: the v0.0.44 shares answer, in the schema's member order,
	// with the associations sshare would show and this command's meta.
	out := c.MustRun("", "sshare", "--json")
	var doc struct {
		Shares struct {
			Shares []struct {
				Name, Parent string
				Type         []string
			}
		}
		Meta struct {
			Command []string
			Client  struct{ User string }
		}
		Errors []any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.HasPrefix(out, "{\n  \"shares\": {\n    \"shares\": [") {
		t.Fatalf("sshare --json: %v\n%s", err, out)
	}
	if len(doc.Shares.Shares) != 2 || doc.Shares.Shares[1].Name != "root" || doc.Shares.Shares[1].Parent != "root" ||
		strings.Join(doc.Meta.Command, " ") != "sshare" || doc.Meta.Client.User != "root" || doc.Errors == nil {
		t.Errorf("sshare --json:\n%s", out)
	}
	if r := c.Run("", "sshare", "--yaml"); r.Code != 1 || r.Stderr != "sshare: error: YAML output is not supported\n" {
		t.Errorf("sshare --yaml: %+v", r)
	}
	// A running job's TRES-minutes left to its time limit (10 min of one
	// CPU and 100 MB), over every TRES the cluster tracks.
	running := c.Submit("", "-t", "10", "--wrap", "sleep 60")
	c.WaitState(running, "RUNNING", 20*time.Second)
	got := c.MustRun("", "sshare", "-n", "-U", "-o", "TRESRunMins%90,GrpTRESRaw%90,GrpTRESMins")
	if !regexp.MustCompile(`^ +cpu=(9|10),mem=(9[0-9][0-9]|1000),energy=0,node=(9|10),billing=(9|10),fs/disk=0,vmem=0,pages=0 +cpu=[0-9]+,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0 {32}\n$`).MatchString(got) {
		t.Errorf("sshare TRES columns:\n%q", got)
	}
	c.MustRun("", "scancel", running)

	// GET /shares filters by user and by account, as slurmrestd does.
	names := func(p v0044.SlurmV0044GetSharesParams) string {
		res, err := c.Client().SlurmV0044GetShares(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range res.(*v0044.V0044OpenapiSharesResp).Shares.Shares {
			out = append(out, s.Parent.Or("")+"/"+s.Name.Or(""))
		}
		return strings.Join(out, " ")
	}
	if got := names(v0044.SlurmV0044GetSharesParams{Users: v0044.NewOptString("nobody")}); got != "/root" {
		t.Errorf("users=nobody: %s", got)
	}
	if got := names(v0044.SlurmV0044GetSharesParams{Users: v0044.NewOptString("root,nobody")}); got != "/root root/root" {
		t.Errorf("users=root,nobody: %s", got)
	}
	if got := names(v0044.SlurmV0044GetSharesParams{Accounts: v0044.NewOptString("other")}); got != "" {
		t.Errorf("accounts=other: %s", got)
	}
}
