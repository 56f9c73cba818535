package ctlstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
)

// variedFSM builds, through commands, a state with one of everything a
// snapshot must carry: plain, held (by user and admin), array and
// split-off array jobs; running jobs with allocations and GPUs; completed,
// failed, cancelled, completing, requeued and timed-out jobs; a purged
// one; drained, down and failed nodes; text that JSON escapes.
func variedFSM(t *testing.T) *State {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	s := New(100, false)
	run := func(c *Command) Result {
		t.Helper()
		res := s.Apply(c)
		if res.Err != nil {
			t.Fatalf("%s: %v", c.Op, res.Err)
		}
		return res
	}
	submit := func(sec int, hold job.Hold, edit func(r *job.Request)) job.ID {
		r := job.Request{
			Name: "job", Partition: "gpu", Argv: []string{"./run.sh", "--flag"}, Environment: []string{"A=1", "PATH=/bin"},
			WorkDir: "/home/alice", StdOut: "slurm-%j.out", UserID: 1000, GroupID: 1000, UserName: "alice", GroupName: "alice",
			MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 2, MemPerNode: 4000, TimeLimit: 60, Requeue: true,
			SubmitLine: "sbatch run.sh", SubmitHost: "login1",
		}
		if edit != nil {
			edit(&r)
		}
		return run(&Command{Op: OpSubmit, Time: at(sec), MinJobID: 100, Submit: &SubmitCmd{Req: r, ScriptKey: "script/" + r.Name, Hold: hold, Priority: BasePriority(s.SubmitSeq)}}).JobID
	}
	alloc := func(nodes ...string) job.Allocation {
		var a job.Allocation
		for i, n := range nodes {
			a.Nodes = append(a.Nodes, job.NodeAlloc{Node: n, CPUs: 2, MemMB: 4000, GPUs: []int{i, i + 1}, Tasks: 1})
		}
		return a
	}
	start := func(sec int, id job.ID, task uint32, a job.Allocation) {
		res := run(&Command{Op: OpStart, Time: at(sec), Start: &StartCmd{Starts: []StartEntry{{JobID: id, Task: task, Alloc: a}}}})
		if len(res.Started) != 1 {
			t.Fatalf("job %d task %d did not start", id, task)
		}
	}

	done := submit(1, job.NotHeld, func(r *job.Request) { r.Name = "done" })
	failed := submit(2, job.NotHeld, func(r *job.Request) { r.Name = `quote " <tag> & ünïcode` })
	running := submit(3, job.NotHeld, func(r *job.Request) {
		r.Name, r.GPUsPerNode, r.Gres, r.MinNodes, r.MaxNodes = "wide", 2, "gpu:a100:2", 2, 2
		r.NodeList, r.Exclude = []string{"n1", "n2"}, []string{"n4"}
	})
	arr := submit(4, job.NotHeld, func(r *job.Request) {
		r.Name, r.Array = "arr", job.ArraySpec{Expr: "0-6%2", Tasks: []uint32{0, 1, 2, 3, 4, 5, 6}, MaxRunning: 2}
	})
	submit(5, job.HeldUser, func(r *job.Request) { r.Name, r.Comment = "held-user", "line\nbreak\ttab" })
	submit(6, job.HeldAdmin, func(r *job.Request) { r.Name, r.BeginTime = "held-admin", at(3600) })
	later := submit(7, job.NotHeld, func(r *job.Request) { r.Name, r.BeginTime, r.Dependency = "later", at(7200), "afterok:100" })
	timedOut := submit(8, job.NotHeld, func(r *job.Request) { r.Name, r.TimeLimit = "short", 1 })
	gone := submit(9, job.NotHeld, func(r *job.Request) { r.Name = "purged" })
	// A submission that named a client request, and its retry.
	retried := &Command{Op: OpSubmit, Time: at(9), MinJobID: 100, Request: &ClientRequest{RequestKey: RequestKey{UID: 1000, ID: "req_1-A"}, UserMsg: "<noted>"}, Submit: &SubmitCmd{Req: job.Request{Name: "retried", Partition: "gpu", UserID: 1000, UserName: "alice"}, Hold: job.HeldUser}}
	first := run(retried)
	if res := run(retried); res.Repeated == nil || res.JobID != first.JobID {
		t.Fatalf("a retry made job %d, the first submission %d", res.JobID, first.JobID)
	}

	start(10, done, job.NoTask, alloc("n1"))
	start(10, failed, job.NoTask, alloc("n2"))
	start(10, running, job.NoTask, alloc("n1", "n2"))
	start(11, arr, 0, alloc("n3"))
	start(11, arr, 1, alloc("n3"))
	start(11, timedOut, job.NoTask, alloc("n3"))
	start(11, gone, job.NoTask, alloc("n4"))
	run(&Command{Op: OpEnd, Time: at(20), End: &EndCmd{JobID: done, State: job.Completed}})
	run(&Command{Op: OpEnd, Time: at(21), End: &EndCmd{JobID: failed, State: job.Failed, ExitCode: 2, Signal: 9}})
	run(&Command{Op: OpEnd, Time: at(22), End: &EndCmd{JobID: gone, State: job.Completed}})
	run(&Command{Op: OpCancel, Time: at(23), Cancel: &CancelCmd{JobIDs: []job.ID{arr}, UID: 1000, Tasks: []uint32{5}}})
	run(&Command{Op: OpSplit, Time: at(24), Split: &SplitCmd{JobID: arr, Tasks: []uint32{3}}})
	// Cancelled while running: completing until the processes are gone.
	run(&Command{Op: OpCancel, Time: at(25), Cancel: &CancelCmd{JobIDs: []job.ID{timedOut}, State: job.Timeout, Reason: job.ReasonTimeLimit}})
	limit, nice, name := uint32(90), int32(5), "renamed"
	run(&Command{Op: OpUpdate, Time: at(26), Update: &UpdateCmd{JobID: running, TimeLimit: &limit, Name: &name, Nice: &nice}})
	run(&Command{Op: OpRequeue, Time: at(27), Requeue: &RequeueCmd{JobID: failed, Hold: true, Reason: job.ReasonHeldAdmin}})
	drain, down := true, true
	run(&Command{Op: OpNodeSet, Time: at(28), NodeSet: &NodeSetCmd{Name: "n4", Drain: &drain, Reason: "maint <soon>", UID: 0}})
	run(&Command{Op: OpNodeSet, Time: at(29), NodeSet: &NodeSetCmd{Name: "n5", Down: &down, Reason: "power", UID: 0}})
	run(&Command{Op: OpNodeFail, Time: at(30), NodeFail: &NodeFailCmd{Name: "n6", Reason: "Not responding"}})
	run(&Command{Op: OpPurge, Time: at(400), Purge: &PurgeCmd{Before: at(100)}})
	run(&Command{Op: OpAcct, Time: at(401), Acct: &AcctCmd{Change: assoc.Change{
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "high", Priority: 100, Preempt: []string{"normal"}, PreemptMode: "REQUEUE", UsageFactor: 2, GraceTime: 60}},
		{Kind: assoc.KindAccount, Account: &assoc.Account{Name: "physics", Description: "the <physics> dept", Organization: "science"}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "physics", ParentAccount: "root", Shares: 10, QOS: []string{"high", "normal"}, DefaultQOS: "normal"}},
		{Kind: assoc.KindUser, User: &assoc.User{Name: "alice", DefaultAccount: "physics", AdminLevel: assoc.AdminOperator}},
		{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: "physics", User: "alice", Shares: 3, Priority: 7, PrioritySet: true}},
	}}})
	if s.Jobs[gone] != nil || s.Jobs[later] == nil {
		t.Fatalf("purge: job %d kept or job %d gone", gone, later)
	}
	if len(s.Jobs) < 10 || len(s.Nodes) != 3 {
		t.Fatalf("varied state has %d jobs and %d nodes", len(s.Jobs), len(s.Nodes))
	}
	return s
}

// fsmDiff compares two states field by field, listing order included;
// how many commands each applied is not state. Accounting models compare
// by their JSON, which holds all of them.
func fsmDiff(want, got *State) string {
	sameModel := cmp.Comparer(func(a, b *assoc.Model) bool {
		ja, errA := json.Marshal(a)
		jb, errB := json.Marshal(b)
		return errA == nil && errB == nil && bytes.Equal(ja, jb)
	})
	// touched, tally and the request index are scratch state, remade as
	// they are needed.
	return cmp.Diff(want, got, cmp.AllowUnexported(State{}), cmpopts.IgnoreFields(State{}, "applied", "touched", "tally", "stats", "requestIdx"), sameModel)
}

func snapshotBytes(t testing.TB, s *State) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Snapshot(&buf); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	orig := variedFSM(t)
	data := snapshotBytes(t, orig)
	got := New(1, false)
	if err := got.Restore(bytes.NewReader(data)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if diff := fsmDiff(orig, got); diff != "" {
		t.Errorf("restored state (-original +restored):\n%s", diff)
	}
	if again := snapshotBytes(t, got); !bytes.Equal(again, data) {
		t.Errorf("the restored state snapshots differently:\n%s\nwant\n%s", again, data)
	}

	// The stream is the document json.Marshal writes, so a version 1
	// store's snapshot restores, and the stream reads back as one.
	legacy, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	fromLegacy := New(1, false)
	if err := fromLegacy.Restore(bytes.NewReader(legacy)); err != nil {
		t.Fatalf("restore json.Marshal's snapshot: %v", err)
	}
	if diff := fsmDiff(orig, fromLegacy); diff != "" {
		t.Errorf("state restored from json.Marshal's snapshot (-original +restored):\n%s", diff)
	}
	unmarshalled := New(1, false)
	if err := json.Unmarshal(data, unmarshalled); err != nil {
		t.Fatalf("json.Unmarshal of the stream: %v", err)
	}
	unmarshalled.order = slices.Sorted(maps.Keys(unmarshalled.Jobs))
	if diff := fsmDiff(orig, unmarshalled); diff != "" {
		t.Errorf("json.Unmarshal of the stream (-original +unmarshalled):\n%s", diff)
	}
}

func TestSnapshotEmpty(t *testing.T) {
	orig := New(7, false)
	got := New(1, false)
	if err := got.Restore(bytes.NewReader(snapshotBytes(t, orig))); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if diff := fsmDiff(orig, got); diff != "" {
		t.Errorf("restored state (-original +restored):\n%s", diff)
	}
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct {
	limit int
}

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errDiskFull
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestSnapshotWriteError(t *testing.T) {
	s := variedFSM(t)
	size := len(snapshotBytes(t, s))
	for _, limit := range []int{0, 1, size / 2, size - 1} {
		if err := s.Snapshot(&failingWriter{limit: limit}); !errors.Is(err, errDiskFull) {
			t.Errorf("snapshot to a writer failing after %d of %d bytes: %v, want the write error", limit, size, err)
		}
	}
}

func TestRestoreRejects(t *testing.T) {
	tests := map[string]string{
		"empty":            "",
		"not an object":    "[]",
		"null":             "null",
		"truncated":        `{"next_job_id":5,"jobs":{"5":{"ID":5}`,
		"trailing data":    `{"next_job_id":5} {}`,
		"bad job id":       `{"jobs":{"x":{}}}`,
		"job id too large": `{"jobs":{"4294967296":{}}}`,
		"job not object":   `{"jobs":{"5":7}}`,
		"jobs not object":  `{"jobs":[]}`,
		"bad scalar":       `{"next_job_id":"five"}`,
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			s := variedFSM(t)
			before := snapshotBytes(t, s)
			if err := s.Restore(strings.NewReader(data)); err == nil {
				t.Fatalf("restore(%q) succeeded", data)
			}
			if !bytes.Equal(snapshotBytes(t, s), before) {
				t.Errorf("a failed restore changed the state")
			}
		})
	}
}

// FuzzRestore feeds restore arbitrary snapshots. It must not panic, and a
// state it accepts must snapshot and restore to itself, byte for byte.
func FuzzRestore(f *testing.F) {
	var buf bytes.Buffer
	if err := variedFSM(&testing.T{}).Snapshot(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"next_job_id":3,"jobs":{"1":{"ID":1},"2":null},"nodes":{"n1":null},"unknown":[1,{"a":2}]}`))
	f.Add([]byte(`{"jobs":null,"nodes":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"submit_requests":[null,{"uid":1,"id":"a","job_id":3,"time":"2026-03-01T12:00:00Z"},{"uid":1,"id":"a","user_msg":"m","job_id":4,"held":true,"time":"2026-03-01T12:00:00Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(1, false)
		if err := s.Restore(bytes.NewReader(data)); err != nil {
			return
		}
		if !slices.IsSorted(s.order) || len(s.order) != len(s.Jobs) {
			t.Fatalf("listing order %v does not match %d jobs", s.order, len(s.Jobs))
		}
		first := snapshotBytes(t, s)
		again := New(1, false)
		if err := again.Restore(bytes.NewReader(first)); err != nil {
			t.Fatalf("restore of its own snapshot: %v\n%s", err, first)
		}
		if diff := fsmDiff(s, again); diff != "" {
			t.Fatalf("restore of its own snapshot (-first +again):\n%s", diff)
		}
		if second := snapshotBytes(t, again); !bytes.Equal(first, second) {
			t.Fatalf("snapshot not stable:\n%s\n%s", first, second)
		}
	})
}

// TestSnapshotCoversEveryField fails when the fsm gains a member that
// json.Marshal would save and the streamed snapshot does not write.
func TestSnapshotCoversEveryField(t *testing.T) {
	orig := variedFSM(t)
	members := func(b []byte) []string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	legacy, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := members(snapshotBytes(t, orig)), members(legacy); !slices.Equal(got, want) {
		t.Errorf("snapshot members %v, json.Marshal saves %v", got, want)
	}
}
