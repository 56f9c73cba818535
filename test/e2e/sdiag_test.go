package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSdiag: the real sdiag against a controller that has run a couple of
// jobs and cancelled one: the counters of those jobs, the scheduler's
// sections with the cycles it ran, the RPCs it served, and the same
// counters in --json; then sdiag -r as root, after which the counters
// and the RPC table count from the reset, and sdiag -r as an ordinary
// user, which is refused.
func TestSdiag(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 1})
	done := []string{c.Submit("", "--wrap", "true"), c.Submit("", "--wrap", "true")}
	c.WaitDone(done...)
	held := c.Submit("", "--hold", "--wrap", "true")
	c.MustRun("", "scancel", held)
	c.WaitState(held, "CANCELLED", 20*time.Second)

	out := c.MustRun("", "sdiag")
	t.Logf("sdiag:\n%s", out)
	num := func(label string) int {
		t.Helper()
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(label) + `\s*(\d+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sdiag has no %q line:\n%s", label, out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := num("Jobs submitted:"); n != 3 {
		t.Errorf("Jobs submitted: %d, want 3", n)
	}
	if n := num("Jobs completed:"); n != 2 {
		t.Errorf("Jobs completed: %d, want 2", n)
	}
	if n := num("Jobs canceled:"); n != 1 {
		t.Errorf("Jobs canceled: %d, want 1", n)
	}
	if n := num("Jobs started:"); n < 2 {
		t.Errorf("Jobs started: %d, want at least 2", n)
	}
	if n := num("Jobs pending:") + num("Jobs running:"); n != 0 {
		t.Errorf("%d jobs pending or running after all ended", n)
	}
	if n := num("Total cycles:"); n < 1 {
		t.Errorf("the main scheduler ran %d cycles", n)
	}
	for _, want := range []string{
		"*******************************************************\nsdiag output at ",
		"\nMain schedule statistics (microseconds):\n\tLast cycle:   ",
		"\nMain scheduler exit:\n\tEnd of job queue:",
		"\nBackfilling stats\n\tTotal backfilled jobs (since last slurm start): ",
		"\nBackfill exit\n\tEnd of job queue:",
		"\nRemote Procedure Call statistics by message type\n",
		"\tREQUEST_SUBMIT_BATCH_JOB                ( 4003) count:3 ",
		"\nRemote Procedure Call statistics by user\n",
		"\nPending RPC statistics\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sdiag lacks %q", want)
		}
	}

	var doc struct {
		Statistics struct {
			JobsSubmitted int `json:"jobs_submitted"`
		}
		Meta struct{ Command []string }
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "sdiag", "--json")), &doc); err != nil {
		t.Fatalf("sdiag --json: %v", err)
	}
	if doc.Statistics.JobsSubmitted != 3 || len(doc.Meta.Command) != 1 || doc.Meta.Command[0] != "sdiag" {
		t.Errorf("sdiag --json: %+v", doc)
	}
	if got := c.MustRun("", "sdiag", "-V"); got != "slurm 25.11.0\n" {
		t.Errorf("sdiag -V: %q", got)
	}
	if n := num("Server thread count:"); n < 1 {
		t.Errorf("Server thread count: %d, want at least the one serving sdiag", n)
	}
	if n := num("Mean depth cycle:"); n < 1 {
		t.Errorf("Mean depth cycle: %d, want the jobs the cycles looked at", n)
	}

	// sdiag -r as root: the counters and the RPC table start again from
	// the reset, which "Data since" names; an ordinary user's is refused
	// as slurmctld refuses it and changes nothing.
	if r := c.Run("", "sdiag", "-r"); r.Code != 0 || r.Stdout != "Reset scheduling statistics\n" || r.Stderr != "" {
		t.Fatalf("sdiag -r: %+v", r)
	}
	out = c.MustRun("", "sdiag")
	t.Logf("sdiag after the reset:\n%s", out)
	if n := num("Jobs submitted:"); n != 0 {
		t.Errorf("Jobs submitted after the reset: %d, want 0", n)
	}
	since := regexp.MustCompile(`(?m)^sdiag output at .*\((\d+)\)\nData since .*\((\d+)\)$`).FindStringSubmatch(out)
	if since == nil || atoi(t, since[1]) < atoi(t, since[2]) || time.Since(time.Unix(atoi(t, since[2]), 0)) > time.Minute {
		t.Errorf("after the reset, want \"Data since\" the reset's time:\n%s", out)
	}
	c.WaitDone(c.Submit("", "--wrap", "true"))
	out = c.MustRun("", "sdiag")
	if n := num("Jobs submitted:"); n != 1 {
		t.Errorf("Jobs submitted since the reset: %d, want 1", n)
	}
	if n := num("Jobs completed:"); n != 1 {
		t.Errorf("Jobs completed since the reset: %d, want 1", n)
	}
	if !strings.Contains(out, "\tREQUEST_SUBMIT_BATCH_JOB                ( 4003) count:1 ") {
		t.Errorf("the RPC table since the reset lacks one REQUEST_SUBMIT_BATCH_JOB:\n%s", out)
	}
	if !regexp.MustCompile(`\nRemote Procedure Call statistics by user\n\troot +\(       0\) count:\d+ +ave_time:\d+ +total_time:\d+\n`).MatchString(out) {
		t.Errorf("the RPCs by user lack root's:\n%s", out)
	}
	nobody := nobodyUser(c)
	if r := c.runAs(nobody, "sdiag", "-r"); r.Code != 255 || r.Stdout != "" || r.Stderr != "slurm_reset_statistics: Access/permission denied\n" {
		t.Errorf("sdiag -r as nobody: %+v", r)
	}
	out = c.MustRun("", "sdiag")
	if n := num("Jobs submitted:"); n != 1 {
		t.Errorf("Jobs submitted after a refused reset: %d, want 1", n)
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
