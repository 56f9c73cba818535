package ctlstate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

// TestUpdateRecheckedInLogOrder covers the race the services cannot see:
// Update checks a job while it pends, a scheduling cycle commits its start,
// then the update reaches the log. The state machine must refuse what no
// longer applies instead of holding a running job.
func TestUpdateRecheckedInLogOrder(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	held, name, part := job.HeldAdmin, "renamed", "debug"
	limit, nodes := uint32(5), uint32(2)
	tests := map[string]struct {
		state job.State
		u     UpdateCmd
		want  slurmerr.Code
	}{
		"hold a running job":            {state: job.Running, u: UpdateCmd{Hold: &held}, want: slurmerr.JobNotPending},
		"move a running job":            {state: job.Running, u: UpdateCmd{Partition: &part}, want: slurmerr.JobNotPending},
		"resize a running job":          {state: job.Running, u: UpdateCmd{MinNodes: &nodes}, want: slurmerr.JobNotPending},
		"rename a running job":          {state: job.Running, u: UpdateCmd{Name: &name}},
		"shorten a running job":         {state: job.Running, u: UpdateCmd{TimeLimit: &limit}},
		"hold a pending job":            {state: job.Pending, u: UpdateCmd{Hold: &held}},
		"rename a finished job":         {state: job.Completed, u: UpdateCmd{Name: &name}, want: slurmerr.AlreadyDone},
		"hold a job that just finished": {state: job.Completed, u: UpdateCmd{Hold: &held}, want: slurmerr.AlreadyDone},
	}
	for tname, tc := range tests {
		t.Run(tname, func(t *testing.T) {
			s := New(1, false)
			s.Apply(&Command{Op: OpSubmit, Time: t0, Submit: &SubmitCmd{Req: job.Request{Name: "a", Partition: "gpu", TimeLimit: 10}, Priority: 100}})
			if tc.state != job.Pending {
				s.Apply(&Command{Op: OpStart, Time: t0, Start: &StartCmd{Starts: []StartEntry{{JobID: 1, Task: job.NoTask, Alloc: job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 1, Tasks: 1}}}}}}})
			}
			if tc.state.Terminal() {
				s.Apply(&Command{Op: OpEnd, Time: t0, End: &EndCmd{JobID: 1, State: tc.state}})
			}
			before := s.Jobs[1].Clone()
			u := tc.u
			u.JobID = 1
			res := s.Apply(&Command{Op: OpUpdate, Time: t0.Add(time.Minute), Update: &u})
			if got := slurmerr.CodeOf(res.Err); got != tc.want {
				t.Fatalf("update: %v (code %d), want code %d", res.Err, got, tc.want)
			}
			if tc.want != slurmerr.NoError {
				if diff := cmp.Diff(before, s.Jobs[1]); diff != "" {
					t.Errorf("refused update changed the job (-before +after):\n%s", diff)
				}
			}
		})
	}
}
