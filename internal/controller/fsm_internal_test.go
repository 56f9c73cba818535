package controller

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
		u     updateCmd
		want  slurmerr.Code
	}{
		"hold a running job":            {state: job.Running, u: updateCmd{Hold: &held}, want: slurmerr.JobNotPending},
		"move a running job":            {state: job.Running, u: updateCmd{Partition: &part}, want: slurmerr.JobNotPending},
		"resize a running job":          {state: job.Running, u: updateCmd{MinNodes: &nodes}, want: slurmerr.JobNotPending},
		"rename a running job":          {state: job.Running, u: updateCmd{Name: &name}},
		"shorten a running job":         {state: job.Running, u: updateCmd{TimeLimit: &limit}},
		"hold a pending job":            {state: job.Pending, u: updateCmd{Hold: &held}},
		"rename a finished job":         {state: job.Completed, u: updateCmd{Name: &name}, want: slurmerr.AlreadyDone},
		"hold a job that just finished": {state: job.Completed, u: updateCmd{Hold: &held}, want: slurmerr.AlreadyDone},
	}
	for tname, tc := range tests {
		t.Run(tname, func(t *testing.T) {
			s := newFSM(1)
			s.apply(&command{Op: opSubmit, Time: t0, Submit: &submitCmd{Req: job.Request{Name: "a", Partition: "gpu", TimeLimit: 10}, Priority: 100}})
			if tc.state != job.Pending {
				s.apply(&command{Op: opStart, Time: t0, Start: &startCmd{Starts: []startEntry{{JobID: 1, Task: job.NoTask, Alloc: job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 1, Tasks: 1}}}}}}})
			}
			if tc.state.Terminal() {
				s.apply(&command{Op: opEnd, Time: t0, End: &endCmd{JobID: 1, State: tc.state}})
			}
			before := s.Jobs[1].Clone()
			u := tc.u
			u.JobID = 1
			res := s.apply(&command{Op: opUpdate, Time: t0.Add(time.Minute), Update: &u})
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
