package depend

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
)

func TestParse(t *testing.T) {
	good := map[string]string{
		"":                          "",
		"afterok:12":                "afterok:12",
		"afterok:12:13,afterany:14": "afterok:12,afterok:13,afterany:14",
		"afterok:12?afternotok:13":  "afterok:12?afternotok:13",
		"after:12+10:13":            "after:12+10,after:13",
		"afterok:12_3":              "afterok:12_3",
		"afterok:12_*":              "afterok:12",
		"singleton":                 "singleton",
		"AfterOK:5,singleton":       "afterok:5,singleton",
		"aftercorr:7":               "aftercorr:7",
	}
	for in, want := range good {
		spec, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := spec.String(); got != want {
			t.Errorf("Parse(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{
		"afterok", "afterok:", "afterok:x", "afterok:0", "before:12", "afterok:12,afterany:13?afterok:14",
		"afterok:12+5", "after:12+x", "singleton:12", "afterburstbuffer:12", "afterok:12_x", "afterok:12_4294967294",
	} {
		if _, err := Parse(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want a syntax error", in, err)
		}
	}
}

// fakeJobs answers Records from a fixed set of records.
type fakeJobs struct {
	recs      map[job.ID][]*job.Job
	singleton bool
}

func (f fakeJobs) Records(id job.ID, task uint32) ([]*job.Job, bool) {
	recs, ok := f.recs[id]
	if !ok || task == job.NoTask {
		return recs, ok
	}
	for _, r := range recs {
		if r.ArrayTaskID == task {
			return []*job.Job{r}, true
		}
	}
	return nil, false
}

func (f fakeJobs) SingletonBlocked(*job.Job) bool { return f.singleton }

func TestEvaluate(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rec := func(st job.State, started time.Time) *job.Job {
		return &job.Job{State: st, StartTime: started, ArrayTaskID: job.NoTask}
	}
	jobs := fakeJobs{recs: map[job.ID][]*job.Job{
		1: {rec(job.Pending, time.Time{})},
		2: {rec(job.Running, now.Add(-5*time.Minute))},
		3: {rec(job.Completed, now.Add(-time.Hour))},
		4: {rec(job.Failed, now.Add(-time.Hour))},
		5: {rec(job.Cancelled, time.Time{})},
		6: {{State: job.Timeout, Completing: true, StartTime: now.Add(-time.Hour)}},
		// An array: task 0 done, task 1 failed, task 2 running.
		7: {{ArrayJobID: 7, ArrayTaskID: 0, State: job.Completed}, {ArrayJobID: 7, ArrayTaskID: 1, State: job.Failed}, {ArrayJobID: 7, ArrayTaskID: 2, State: job.Running}},
	}}
	self := &job.Job{ID: 100, ArrayTaskID: job.NoTask}
	task0 := &job.Job{ID: 101, ArrayJobID: 100, ArrayTaskID: 0}
	tests := []struct {
		spec string
		self *job.Job
		want Status
	}{
		{"", self, Satisfied},
		{"after:1", self, Waiting},
		{"after:2", self, Satisfied},
		{"after:2+10", self, Waiting},
		{"after:2+5", self, Satisfied},
		{"after:5", self, Satisfied},
		{"afterany:2", self, Waiting},
		{"afterany:4", self, Satisfied},
		{"afterany:6", self, Waiting},
		{"afterok:3", self, Satisfied},
		{"afterok:4", self, Never},
		{"afterok:5", self, Never},
		{"afternotok:4", self, Satisfied},
		{"afternotok:3", self, Never},
		{"afterok:3,afterok:4", self, Never},
		{"afterok:3,afterany:2", self, Waiting},
		{"afterok:4?afterok:3", self, Satisfied},
		{"afterok:4?afterany:2", self, Waiting},
		{"afterok:4?afterok:5", self, Never},
		{"afterok:99", self, Satisfied}, // purged: lifted, as slurmctld does
		{"afterok:7", self, Never},
		{"afterok:7_0", self, Satisfied},
		{"afterany:7", self, Waiting},
		{"afterok:7_2", self, Waiting},
		{"aftercorr:7", task0, Satisfied},
		{"singleton", self, Satisfied},
	}
	for _, tc := range tests {
		spec, err := Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := Evaluate(spec, tc.self, jobs, now); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.spec, got, tc.want)
		}
	}
	blocked := jobs
	blocked.singleton = true
	spec, _ := Parse("singleton")
	if got := Evaluate(spec, self, blocked, now); got != Waiting {
		t.Errorf("blocked singleton: %v", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"afterok:12", "afterok:1:2,afterany:3", "after:5+10?afternotok:7_3", "singleton", "aftercorr:9_*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		// What String writes parses to the same conditions.
		again, err := Parse(spec.String())
		if err != nil {
			t.Fatalf("Parse(%q) of String() of Parse(%q): %v", spec.String(), s, err)
		}
		if again.String() != spec.String() || len(again.Conds) != len(spec.Conds) {
			t.Fatalf("round trip of %q: %q then %q", s, spec.String(), again.String())
		}
	})
}

func TestAssessText(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	jobs := fakeJobs{recs: map[job.ID][]*job.Job{
		1: {{State: job.Running, StartTime: now.Add(-30 * time.Second), ArrayTaskID: job.NoTask}},
		2: {{State: job.Failed, ArrayTaskID: job.NoTask}},
		3: {{State: job.Completed, ArrayTaskID: job.NoTask}},
		4: {{ArrayJobID: 4, ArrayTaskID: 0, State: job.Running}},
	}}
	self := &job.Job{ID: 9, ArrayTaskID: job.NoTask}
	for spec, want := range map[string]string{
		// As slurmctld 22.05 shows them (captured on ../shared/real-slurm).
		"afterok:1":            "afterok:1(unfulfilled)",
		"afterok:2:1":          "afterok:2(failed),afterok:1(unfulfilled)",
		"afterany:1?afterok:1": "afterany:1(unfulfilled)?afterok:1(unfulfilled)",
		"after:1+1":            "after:1+1(unfulfilled)",
		"afterok:3,afterany:1": "afterany:1(unfulfilled)",
		"afterok:3":            "",
		"afterany:1?afterok:3": "",
		"afterok:4":            "afterok:4_*(unfulfilled)",
	} {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := Assess(s, self, jobs, now); got != want {
			t.Errorf("Assess(%q) text %q, want %q", spec, got, want)
		}
	}
	s, _ := Parse("afterok:1?afterany:2")
	if got := Unevaluated(s); got != "afterok:1(unfulfilled)?afterany:2(unfulfilled)" {
		t.Errorf("Unevaluated: %q", got)
	}
}
