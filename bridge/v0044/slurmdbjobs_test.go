package v0044_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// TestSlurmdbJobAnswers: jobs that ran are found in slurmdbd's shape,
// each with its batch step, compared with the captures of real
// slurmdbd.
func TestSlurmdbJobAnswers(t *testing.T) {
	r := newREST(t)
	completed := r.submitRaw("root", minimalDesc(""))
	failed := r.submitRaw("root", minimalDesc(""))
	cancelled := r.submitRaw("root", minimalDesc(""))
	for _, id := range []job.ID{completed, failed, cancelled} {
		r.waitState(id, job.Running)
	}
	r.c.Finish(completed, nodeproto.EndExited, 0, 0)
	r.c.Finish(failed, nodeproto.EndExited, 3, 0)
	if a := r.do(http.MethodDelete, fmt.Sprintf("%s/job/%d", v44, cancelled), "root", nil); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	r.c.Finish(cancelled, nodeproto.EndCancelled, 0, 15)
	if err := r.c.Ctl.FlushAccounting(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		id   job.ID
		ref  string
		same []string
		// stepSame are fields of the batch step that must equal the
		// reference's.
		stepSame []string
	}{
		"completed": {completed, "slurmdb_job_completed.json", []string{"exit_code", "state", "derived_exit_code", "restart_cnt", "kill_request_user"}, []string{"exit_code", "state", "step/name"}},
		"failed":    {failed, "slurmdb_job_failed.json", []string{"exit_code", "state"}, []string{"exit_code", "state"}},
		"cancelled": {cancelled, "slurmdb_job_cancelled.json", []string{"exit_code", "state/current", "kill_request_user"}, []string{"exit_code", "state"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := r.do(http.MethodGet, fmt.Sprintf("%s/job/%d", db44, tc.id), "root", nil)
			if a.Status != 200 {
				t.Fatalf("HTTP %d %s", a.Status, a.Body)
			}
			jobs := asList(a.JSON(t)["jobs"])
			if len(jobs) != 1 {
				t.Fatalf("%d records", len(jobs))
			}
			ours, ref := jobs[0], path(referenceJSON(t, tc.ref), "jobs", 0)
			for _, f := range tc.same {
				if diff := cmp.Diff(pathOf(ref, f), pathOf(ours, f)); diff != "" {
					t.Errorf("%s, compared with real slurmdbd (-real +ours):\n%s", f, diff)
				}
			}
			if diff := cmp.Diff(keys(ref), keys(ours)); diff != "" {
				t.Errorf("members (-real +ours):\n%s", diff)
			}
			if got := path(ours, "job_id"); got != float64(tc.id) {
				t.Errorf("job_id %v", got)
			}
			steps := asList(path(ours, "steps"))
			if len(steps) != 1 {
				t.Fatalf("%d steps", len(steps))
			}
			refStep := path(ref, "steps", 0)
			if got, want := path(steps[0], "step", "id"), fmt.Sprintf("%d.batch", tc.id); got != want {
				t.Errorf("step id %v, want %s", got, want)
			}
			for _, f := range tc.stepSame {
				if diff := cmp.Diff(pathOf(refStep, f), pathOf(steps[0], f)); diff != "" {
					t.Errorf("step %s (-real +ours):\n%s", f, diff)
				}
			}
			if diff := cmp.Diff(keys(refStep), keys(steps[0])); diff != "" {
				t.Errorf("step members (-real +ours):\n%s", diff)
			}
			var tres []string
			for _, x := range asList(path(ours, "tres", "allocated")) {
				tres = append(tres, fmt.Sprint(path(x, "type")))
			}
			if !slices.Equal(tres, []string{"cpu", "mem", "node", "billing"}) {
				t.Errorf("allocated TRES %v", tres)
			}
		})
	}

	// The list: filters, and a user who sees only their own under
	// PrivateData=jobs.
	for q, want := range map[string]int{
		"":                            3,
		"?state=FAILED":               1,
		"?users=nobody":               0,
		"?job_name=zzz":               0,
		"?step=" + fmt.Sprint(failed): 1,
	} {
		a := r.do(http.MethodGet, db44+"/jobs/"+q, "root", nil)
		if n := len(asList(a.JSON(t)["jobs"])); a.Status != 200 || n != want {
			t.Errorf("jobs%s: HTTP %d, %d records, want %d", q, a.Status, n, want)
		}
	}
	if a := r.do(http.MethodGet, db44+"/jobs/?start_time=yesterday-ish", "root", nil); a.Status == 200 {
		t.Errorf("a bad time: HTTP %d", a.Status)
	}
}

// TestSlurmdbJobsPrivate: under PrivateData=jobs a user sees only their
// own records.
func TestSlurmdbJobsPrivate(t *testing.T) {
	r := newREST(t, func(c *controller.Config) { c.PrivateData = []string{"jobs"} })
	id := r.submitRaw("root", minimalDesc(""))
	r.waitState(id, job.Running)
	if err := r.c.Ctl.FlushAccounting(context.Background()); err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]int{"root": 1, "nobody": 0} {
		a := r.do(http.MethodGet, db44+"/jobs/", user, nil)
		if n := len(asList(a.JSON(t)["jobs"])); n != want {
			t.Errorf("%s sees %d records, want %d", user, n, want)
		}
	}
}

// pathOf is path with the keys in one string ("state/current").
func pathOf(v any, p string) any {
	var ks []any
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			ks = append(ks, p[start:i])
			start = i + 1
		}
	}
	return path(v, ks...)
}
