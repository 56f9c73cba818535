package ctlstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

// submitting is a submit command at t for uid, naming the client request
// id unless it is empty; kind "het" makes a two-component heterogeneous
// job, "array" an array of four tasks, "held" a held job.
func submitting(t time.Time, uid uint32, id, kind, scriptKey string) *Command {
	sub := func(name string) *SubmitCmd {
		return &SubmitCmd{Req: job.Request{Name: name, Partition: "gpu", UserID: uid, UserName: fmt.Sprint("u", uid)}, ScriptKey: scriptKey, Priority: 10}
	}
	c := &Command{Op: OpSubmit, Time: t, Submit: sub("plain")}
	switch kind {
	case "het":
		c.Submit, c.Het = nil, []*SubmitCmd{sub("h0"), sub("h1")}
		c.Het[1].ScriptKey = ""
	case "array":
		c.Submit.Req.Array = job.ArraySpec{Expr: "0-3", Tasks: []uint32{0, 1, 2, 3}}
	case "held":
		c.Submit.Hold = job.HeldUser
	}
	if id != "" {
		c.Request = &ClientRequest{RequestKey: RequestKey{UID: uid, ID: id}, UserMsg: "msg " + scriptKey}
	}
	return c
}

// TestRequestAppliedOnce: a submission repeating a client request its
// submitter made within RequestTTL makes no job and answers the first's;
// another user's request of the same id, one without an id, or one past
// the bound is a submission of its own.
func TestRequestAppliedOnce(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type want struct {
		// jobs is how many the state holds after both.
		jobs     int
		repeated bool
		held     bool
		// unreferenced are the retry's script keys, stored for no job.
		unreferenced []string
	}
	tests := map[string]struct {
		first, retry *Command
		want         want
	}{
		"same id twice": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "", "k2"),
			want:  want{jobs: 1, repeated: true, unreferenced: []string{"k2"}},
		},
		"heterogeneous job": {
			first: submitting(t0, 1000, "req-1", "het", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "het", "k2"),
			want:  want{jobs: 2, repeated: true, unreferenced: []string{"k2"}},
		},
		"array": {
			first: submitting(t0, 1000, "req-1", "array", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "array", "k2"),
			want:  want{jobs: 1, repeated: true, unreferenced: []string{"k2"}},
		},
		"held job": {
			first: submitting(t0, 1000, "req-1", "held", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "held", "k2"),
			want:  want{jobs: 1, repeated: true, held: true, unreferenced: []string{"k2"}},
		},
		"allocation after batch job": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "", ""),
			want:  want{jobs: 1, repeated: true},
		},
		"just within the bound": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(RequestTTL-time.Nanosecond), 1000, "req-1", "", "k2"),
			want:  want{jobs: 1, repeated: true, unreferenced: []string{"k2"}},
		},
		"at the bound": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(RequestTTL), 1000, "req-1", "", "k2"),
			want:  want{jobs: 2},
		},
		"another user, same id": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1001, "req-1", "", "k2"),
			want:  want{jobs: 2},
		},
		"same user, another id": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-2", "", "k2"),
			want:  want{jobs: 2},
		},
		"no id the first time": {
			first: submitting(t0, 1000, "", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "req-1", "", "k2"),
			want:  want{jobs: 2},
		},
		"no id the second time": {
			first: submitting(t0, 1000, "req-1", "", "k1"),
			retry: submitting(t0.Add(time.Minute), 1000, "", "", "k2"),
			want:  want{jobs: 2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := New(1, false)
			first := s.Apply(tc.first)
			if first.Err != nil || first.Repeated != nil {
				t.Fatalf("first submission: %+v", first)
			}
			counted := s.Counters.Submitted
			res := s.Apply(tc.retry)
			if res.Err != nil {
				t.Fatalf("second submission: %v", res.Err)
			}
			got := want{jobs: len(s.Jobs), repeated: res.Repeated != nil, unreferenced: res.Unreferenced}
			if res.Repeated != nil {
				got.held = res.Repeated.Held
				if res.JobID != first.JobID || res.Repeated.JobID != first.JobID {
					t.Errorf("the retry answered job %d (repeated %d), the first submission %d", res.JobID, res.Repeated.JobID, first.JobID)
				}
				if res.Repeated.UserMsg != tc.first.Request.UserMsg {
					t.Errorf("the retry's answer tells the user %q, the first's %q", res.Repeated.UserMsg, tc.first.Request.UserMsg)
				}
			} else if res.JobID == first.JobID {
				t.Errorf("a submission of its own answered the first's job %d", res.JobID)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.want.repeated && s.Counters.Submitted != counted {
				t.Errorf("the retry counted %d submissions", s.Counters.Submitted-counted)
			}
		})
	}
}

// TestRequestRepeatedOverSubmitLimit: the retry of a submission that
// reached a submit limit answers its job; it does not count as one more
// (the apply asks for the request before it checks the limits).
func TestRequestRepeatedOverSubmitLimit(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := New(1, false)
	if res := s.Apply(&Command{Op: OpAcct, Time: t0, Acct: &AcctCmd{Change: assoc.Change{
		{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "capped", Limits: assoc.Limits{GrpSubmitJobs: assoc.Count(1)}}},
	}}}); res.Err != nil {
		t.Fatal(res.Err)
	}
	capped := func(c *Command) *Command {
		c.Submit.Req.QOS, c.Submit.Limits = "capped", true
		return c
	}
	first := s.Apply(capped(submitting(t0, 1000, "req-1", "", "k1")))
	if first.Err != nil {
		t.Fatalf("first submission: %v", first.Err)
	}
	if res := s.Apply(capped(submitting(t0.Add(time.Second), 1000, "req-1", "", "k2"))); res.Err != nil || res.JobID != first.JobID {
		t.Errorf("retry: job %d, %v; want job %d", res.JobID, res.Err, first.JobID)
	}
	res := s.Apply(capped(submitting(t0.Add(2*time.Second), 1000, "req-2", "", "k3")))
	if code := slurmerr.CodeOf(res.Err); code == slurmerr.NoError {
		t.Fatalf("another request over GrpSubmitJobs=1 was taken: job %d", res.JobID)
	}
	// A refused submission made nothing to repeat: its retry is judged
	// again.
	if _, ok := s.Submitted(RequestKey{UID: 1000, ID: "req-2"}, t0.Add(3*time.Second)); ok {
		t.Errorf("a refused submission was remembered")
	}
}

// TestRequestsSnapshotAndReplay: what the state remembers of requests is
// decided by command times alone, so that replaying the log from the
// start, or from a snapshot taken midway, answers every retry as the
// first apply did; and requests are forgotten past RequestTTL.
func TestRequestsSnapshotAndReplay(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	log := []*Command{
		submitting(at(0), 1000, "a", "", "k1"),
		submitting(at(1), 1001, "a", "het", "k2"),
		submitting(at(30), 1000, "b", "array", "k3"),
		submitting(at(31), 1000, "a", "", "k4"), // a retry
		{Op: OpCancel, Time: at(32), Cancel: &CancelCmd{JobIDs: []job.ID{1}, UID: 1000}},
		{Op: OpPurge, Time: at(45), Purge: &PurgeCmd{Before: at(40)}}, // job 1 goes; its request stays
		// The snapshot is taken here.
		submitting(at(50), 1000, "a", "", "k5"),  // a retry of a purged job
		submitting(at(61), 1000, "a", "", "k6"),  // past the bound: a new job
		submitting(at(62), 1000, "b", "", "k7"),  // a retry still
		submitting(at(62), 1001, "a", "het", ""), // past the bound
		submitting(at(125), 1000, "c", "", "k8"),
	}
	const cut = 6
	wantJobs := []job.ID{1, 2, 4, 1, 0, 0, 1, 5, 4, 6, 8}
	wantRepeated := []bool{false, false, false, true, false, false, true, false, true, false, false}

	whole := New(1, false)
	var results []Result
	for _, c := range log {
		results = append(results, whole.Apply(c))
	}
	for i, res := range results {
		if res.Err != nil || res.JobID != wantJobs[i] || (res.Repeated != nil) != wantRepeated[i] {
			t.Errorf("command %d (%s at %s): job %d, repeated %v, %v; want job %d, repeated %v",
				i, log[i].Op, log[i].Time.Format("15:04"), res.JobID, res.Repeated != nil, res.Err, wantJobs[i], wantRepeated[i])
		}
	}
	// At 14:05 only the request of 14:05 is within the bound.
	if got := whole.Requests; len(got) != 1 || got[0].ID != "c" {
		t.Errorf("requests kept at the end: %+v", got)
	}

	for _, how := range []string{"snapshot", "unmarshal", "replay"} {
		t.Run(how, func(t *testing.T) {
			s := New(1, false)
			for _, c := range log[:cut] {
				s.Apply(c)
			}
			if how == "snapshot" {
				restored := New(1, false)
				if err := restored.Restore(bytes.NewReader(snapshotBytes(t, s))); err != nil {
					t.Fatalf("restore: %v", err)
				}
				if diff := fsmDiff(s, restored); diff != "" {
					t.Fatalf("restored state (-snapshotted +restored):\n%s", diff)
				}
				s = restored
			}
			if how == "unmarshal" {
				// A version 1 store's snapshot is json.Marshal's: a state
				// json.Unmarshal reads has no request index.
				u := New(1, false)
				if err := json.Unmarshal(snapshotBytes(t, s), u); err != nil {
					t.Fatal(err)
				}
				u.order = slices.Sorted(maps.Keys(u.Jobs))
				s = u
			}
			for i, c := range log[cut:] {
				res := s.Apply(c)
				if diff := cmp.Diff(results[cut+i], res); diff != "" {
					t.Errorf("command %d answered otherwise (-first apply +now):\n%s", cut+i, diff)
				}
			}
			if diff := fsmDiff(whole, s); diff != "" {
				t.Errorf("state (-whole log +%s):\n%s", how, diff)
			}
		})
	}
}

// TestStepRequestAppliedOnce: a step command repeating the client
// request of a running step of the same job and user makes no step and
// answers that one's id, even when a pass before the log missed it (two
// retries at once); another user or id makes a step; so does the id
// once its step ended.
func TestStepRequestAppliedOnce(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := New(1, false)
	if r := s.Apply(submitting(t0, 1000, "", "", "k1")); r.Err != nil {
		t.Fatal(r.Err)
	}
	alloc := job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 8, Tasks: 1}}}
	if r := s.Apply(&Command{Op: OpStart, Time: t0, Start: &StartCmd{Starts: []StartEntry{{JobID: 1, Task: job.NoTask, Alloc: alloc}}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	step := func(uid uint32, id string) Result {
		return s.Apply(&Command{Op: OpStep, Time: t0, Step: &StepCmd{Step: job.Step{JobID: 1, UserID: uid, Nodes: []string{"n1"}, CPUs: []uint32{1},
			Request: id, TaskIDs: [][]int{{0}}}}})
	}
	first := step(1000, "s1")
	if first.Err != nil || first.RepeatedStep {
		t.Fatalf("first step: %+v", first)
	}
	for _, c := range []struct {
		uid      uint32
		id       string
		repeated bool
	}{{1000, "s1", true}, {0, "s1", false}, {1000, "s2", false}, {1000, "", false}, {1000, "", false}} {
		r := step(c.uid, c.id)
		if r.Err != nil || r.RepeatedStep != c.repeated || (r.StepID == first.StepID) != c.repeated {
			t.Errorf("uid %d id %q: step %d repeated %v (%v); want repeated %v", c.uid, c.id, r.StepID, r.RepeatedStep, r.Err, c.repeated)
		}
	}
	if n := len(s.Steps[1]); n != 5 {
		t.Errorf("%d steps, want 5", n)
	}
	if r := s.Apply(&Command{Op: OpStepEnd, Time: t0, StepEnd: &StepEndCmd{JobID: 1, StepID: first.StepID}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := step(1000, "s1"); r.Err != nil || r.RepeatedStep || r.StepID == first.StepID {
		t.Errorf("the id after its step ended: %+v", r)
	}
}
