package jobcomp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// Lines as real Slurm 22.05's jobcomp/filetxt wrote them for the same jobs
// (captured on ../shared/real-slurm with DefMemPerCPU=1000).
func TestLineMatchesSlurm(t *testing.T) {
	time.Local = time.UTC
	at := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	base := job.Request{UserName: "root", GroupName: "root", Name: "wrap", Partition: "gpu", TimeLimit: job.Infinite,
		WorkDir: "/tmp", Account: "root", QOS: "normal", NumTasks: 1, MemPerCPU: 1000}
	one := func(n string) *job.Allocation {
		return &job.Allocation{Nodes: []job.NodeAlloc{{Node: n, CPUs: 1, MemMB: 1000, Tasks: 1}}}
	}
	failing := base
	failing.Name = "failing"
	for _, c := range []struct {
		j    job.Job
		want string
	}{
		{job.Job{ID: 12, Req: failing, State: job.Failed, ArrayTaskID: job.NoTask, Alloc: one("n1"), ExitCode: 3,
			SubmitTime: at("2026-12-01T20:00:10"), EligibleTime: at("2026-12-01T20:00:10"), StartTime: at("2026-12-01T20:00:11"), EndTime: at("2026-12-01T20:00:11")},
			"JobId=12 UserId=root(0) GroupId=root(0) Name=failing JobState=FAILED Partition=gpu TimeLimit=UNLIMITED StartTime=2026-12-01T20:00:11 EndTime=2026-12-01T20:00:11 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account=root QOS=normal WcKey= Cluster=refcluster SubmitTime=2026-12-01T20:00:10 EligibleTime=2026-12-01T20:00:10 DerivedExitCode=0:0 ExitCode=3:0 \n"},
		{job.Job{ID: 14, Req: base, State: job.Completed, ArrayJobID: 11, ArrayTaskID: 1, Alloc: one("n1"),
			SubmitTime: at("2026-12-01T20:00:10"), EligibleTime: at("2026-12-01T20:00:10"), StartTime: at("2026-12-01T20:00:11"), EndTime: at("2026-12-01T20:00:11")},
			"JobId=14 UserId=root(0) GroupId=root(0) Name=wrap JobState=COMPLETED Partition=gpu TimeLimit=UNLIMITED StartTime=2026-12-01T20:00:11 EndTime=2026-12-01T20:00:11 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account=root QOS=normal WcKey= Cluster=refcluster SubmitTime=2026-12-01T20:00:10 EligibleTime=2026-12-01T20:00:10 ArrayJobId=11 ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=0:0 \n"},
		// Cancelled before it ran: no nodes, started when it ended.
		{job.Job{ID: 9, Req: base, State: job.Cancelled, ArrayTaskID: job.NoTask,
			SubmitTime: at("2026-12-01T19:59:46"), EligibleTime: at("2026-12-01T20:01:47"), EndTime: at("2026-12-01T20:00:10")},
			"JobId=9 UserId=root(0) GroupId=root(0) Name=wrap JobState=CANCELLED Partition=gpu TimeLimit=UNLIMITED StartTime=2026-12-01T20:00:10 EndTime=2026-12-01T20:00:10 NodeList=(null) NodeCnt=0 ProcCnt=0 WorkDir=/tmp ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account=root QOS=normal WcKey= Cluster=refcluster SubmitTime=2026-12-01T19:59:46 EligibleTime=2026-12-01T20:01:47 DerivedExitCode=0:0 ExitCode=0:0 \n"},
	} {
		if got := Line(&c.j, "refcluster"); got != c.want {
			t.Errorf("job %d:\n got %q\nwant %q", c.j.ID, got, c.want)
		}
	}
	// A node-failure run: the requested TRES, the allocated CPUs.
	excl := base
	excl.MinNodes, excl.NumTasks, excl.Exclusive, excl.TimeLimit = 2, 0, true, 10
	j := job.Job{ID: 4, Req: excl, State: job.NodeFail, ArrayTaskID: job.NoTask,
		Alloc: &job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 8, MemMB: 16000}, {Node: "n2", CPUs: 8, MemMB: 16000}}}}
	if got := Line(&j, "c"); !strings.Contains(got, " JobState=NODE_FAIL Partition=gpu TimeLimit=10 StartTime=Unknown EndTime=Unknown NodeList=n[1-2] NodeCnt=2 ProcCnt=16 ") ||
		!strings.Contains(got, " Tres=cpu=2,mem=2000M,node=2,billing=2 ") {
		t.Errorf("node failure line: %s", got)
	}
}

func TestWriter(t *testing.T) {
	if w, err := New("jobcomp/none", "", "c"); w != nil || err != nil {
		t.Errorf("jobcomp/none: %v %v", w, err)
	}
	if _, err := New("jobcomp/elasticsearch", "", "c"); err == nil || err.Error() != "JobCompType=jobcomp/elasticsearch: not supported (jobcomp/none or jobcomp/filetxt)" {
		t.Errorf("unknown plugin: %v", err)
	}
	if w, _ := New("jobcomp/filetxt", "", "c"); w.path != DefaultLoc {
		t.Errorf("default location %s", w.path)
	}
	var none *Writer
	if err := none.Record([]job.Job{{ID: 1}}); err != nil {
		t.Error(err)
	}
	path := filepath.Join(t.TempDir(), "jobcomp.txt")
	w, _ := New("jobcomp/filetxt", path, "c")
	for id := job.ID(1); id <= 3; id++ {
		if err := w.Record([]job.Job{{ID: id, State: job.Completed, ArrayTaskID: job.NoTask}}); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], "JobId=3 ") {
		t.Errorf("appended lines: %q", data)
	}
	bad, _ := New("jobcomp/filetxt", filepath.Join(t.TempDir(), "missing", "x.txt"), "c")
	if err := bad.Record([]job.Job{{ID: 1}}); err == nil || !strings.HasPrefix(err.Error(), "job completion log: ") {
		t.Errorf("unwritable log: %v", err)
	}
}
