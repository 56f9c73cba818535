package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBackfillStory3 is story 3 of the brief: a 4-node training job waits
// for two nodes a running job holds; an evaluation job whose time limit
// fits in the gap runs at once on an idle node, a longer one does not, and
// the training job starts no later than its planned start.
func TestBackfillStory3(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, GPUs: 8, Extra: "SchedulerParameters=bf_interval=1,bf_resolution=1\n"})
	holder := c.Submit("", "-N2", "--exclusive", "-t", "3", "--wrap", "sleep 10")
	c.WaitState(holder, "RUNNING", 20*time.Second)
	train := c.Submit("", "-J", "train", "-N4", "--exclusive", "-t", "60", "-o", "train.out", "--wrap", "date +%s; sleep 1")
	short := c.Submit("", "-J", "evalshort", "--gres=gpu:1", "-t", "1", "--wrap", "sleep 2")
	long := c.Submit("", "-J", "evallong", "--gres=gpu:1", "-t", "10", "--wrap", "sleep 2")

	j := c.WaitState(short, "RUNNING", 20*time.Second)
	if st := c.State(train); st != "PENDING" {
		t.Fatalf("training job %s while the short eval job runs", st)
	}
	if n := j.Nodes.Or(""); n != "n3" && n != "n4" {
		t.Errorf("short eval job on %q, want an idle node", n)
	}
	if out := c.MustRun("", "scontrol", "show", "job", short); !strings.Contains(out, "Scheduler=Backfill") {
		t.Errorf("backfilled job's record:\n%s", out)
	}
	// The plan: the training job starts when the holder's time limit
	// ends, on all four nodes; the long eval job would overrun that and
	// waits behind it.
	tj := c.Job(train)
	planned := time.Unix(int64(tj.StartTime.Value.Number.Value), 0)
	holderEnd := time.Unix(int64(c.Job(holder).EndTime.Value.Number.Value), 0)
	if planned.IsZero() || planned.Before(holderEnd.Add(-2*time.Second)) || planned.After(holderEnd.Add(2*time.Second)) {
		t.Errorf("training job planned at %v, want the holder's end %v", planned, holderEnd)
	}
	got := c.MustRun("", "squeue", "--start", "-h", "-o", "%i %Y %r")
	want := train + " n[1-4] Resources\n" + long + " n1 Priority\n"
	if got != want {
		t.Errorf("squeue --start:\n%s\nwant:\n%s", got, want)
	}
	if st := c.State(long); st != "PENDING" {
		t.Errorf("long eval job %s: it would delay the training job", st)
	}

	// The holder ends early; the training job starts at once, and the
	// long eval job only after it.
	c.WaitState(train, "COMPLETED", 60*time.Second)
	started, err := strconv.ParseInt(strings.TrimSpace(c.ReadFile("train.out")), 10, 64)
	if err != nil || started > planned.Unix() {
		t.Errorf("training job started at %d (%v), after its planned start %d", started, err, planned.Unix())
	}
	c.WaitState(long, "COMPLETED", 30*time.Second)
	if lj := c.Job(long); lj.StartTime.Value.Number.Value < tj.SubmitTime.Value.Number.Value {
		t.Errorf("long eval job started before the training job was submitted")
	}
}
